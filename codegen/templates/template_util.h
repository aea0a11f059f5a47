// Small pieces shared by the CPU templates: candidate lists clipped to a problem size, config
// access, and the checks every build function starts with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "codegen/templates/template.h"

namespace tune {

/// a / b rounded up, for positive a and b.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The candidates smaller than `extent`, plus `extent` itself (meaning "one block covers the
/// whole dimension"), sorted and distinct.
std::vector<int64_t> ClipToExtent(const std::vector<int64_t>& candidates, int64_t extent);

/// The candidates <= `limit`, sorted and distinct; `fallback` alone when none is.
std::vector<int64_t> AtMost(const std::vector<int64_t>& candidates, int64_t limit,
                            int64_t fallback);

/// The largest value of `values` that is <= `limit`, else the smallest value.
int64_t LargestAtMost(const std::vector<int64_t>& values, int64_t limit);

/// The value of knob `name` in a config already validated against its space.
int64_t KnobValue(const Config& config, std::string_view name);

/// epilogue=requant's output from i32 accumulators `acc` (any lanes): saturate_i8(nearest_even(
/// f32(acc) * scale + zero_point)), with `scale` and `zero_point` f32 scalars. Clamps to [-128,
/// 127] first, then rounds by adding and subtracting 1.5 * 2^23 (exact to nearest even for values
/// that small, in the default rounding mode), then converts.
ir::Expr Requantize(ir::Expr acc, const ir::Expr& scale, const ir::Expr& zero_point);

/// `value` with the epilogue applied: + bias (when the epilogue has one), then max(., 0) (when
/// it has a ReLU). `bias` is only read when the epilogue has a bias.
ir::Expr ApplyEpilogue(Epilogue epilogue, ir::Expr value, ir::Expr bias);

/// dst[dst_index] = the im2col element of a conv2d's input: for image `image`, the filter tap
/// `row` = (c, r, s) flattened (c*R*S + r*S + s) at output position `pos` = p*Q + q; zero where
/// the tap falls on the padding.
ir::Stmt StoreIm2colElement(const ir::Buffer& dst, ir::Expr dst_index, const ir::Buffer& input,
                            const Conv2dShape& s, ir::Expr image, ir::Expr row, ir::Expr pos);

/// A check_shape answer: OK when `wrong` (the offending fields, e.g. "stride=2") is empty, else
/// InvalidArgument "<tpl> applies to <what> (<accepted>); '<workload>' has <wrong...>".
absl::Status RefuseShapeUnless(std::string_view tpl, std::string_view what,
                               std::string_view accepted, const Workload& workload,
                               const std::vector<std::string>& wrong);

/// OK when `tpl` applies to (workload, target) and `config` is a point of its space;
/// InvalidArgument naming the template and the problem otherwise.
absl::Status CheckBuildRequest(const KernelTemplate& tpl, const Workload& workload,
                               const Target& target, const Config& config);

}  // namespace tune

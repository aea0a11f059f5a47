#include "codegen/templates/template_util.h"

#include <algorithm>

#include "common/status.h"
#include "common/strings.h"

namespace tune {

std::vector<int64_t> ClipToExtent(const std::vector<int64_t>& candidates, int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (c < extent) {
      out.push_back(c);
    }
  }
  out.push_back(extent);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> AtMost(const std::vector<int64_t>& candidates, int64_t limit,
                            int64_t fallback) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (c <= limit) {
      out.push_back(c);
    }
  }
  if (out.empty()) {
    out.push_back(fallback);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t LargestAtMost(const std::vector<int64_t>& values, int64_t limit) {
  TUNE_CHECK(!values.empty());
  int64_t best = *std::min_element(values.begin(), values.end());
  for (int64_t v : values) {
    if (v <= limit && v > best) {
      best = v;
    }
  }
  return best;
}

int64_t KnobValue(const Config& config, std::string_view name) {
  auto it = config.find(name);
  TUNE_CHECK(it != config.end()) << "config has no knob '" << name << "'";
  return it->second;
}

ir::Expr ApplyEpilogue(Epilogue epilogue, ir::Expr value, ir::Expr bias) {
  if (EpilogueHasBias(epilogue)) {
    value = value + bias;
  }
  if (EpilogueHasRelu(epilogue)) {
    value = ir::Max::Make(value, value.type().is_int()
                                     ? ir::Cast::Make(value.type().Element(), ir::Expr(0))
                                     : ir::Expr(0.0f));
  }
  return value;
}

ir::Expr Requantize(ir::Expr acc, const ir::Expr& scale, const ir::Expr& zero_point) {
  const int lanes = acc.type().lanes();
  const ir::Type f32 = ir::Type::Float32(lanes);
  auto splat = [lanes](ir::Expr e) { return ir::BroadcastTo(std::move(e), lanes); };
  ir::Expr v = ir::Cast::Make(f32, std::move(acc)) * splat(scale) + splat(zero_point);
  v = ir::Max::Make(ir::Min::Make(v, splat(ir::Expr(127.0f))), splat(ir::Expr(-128.0f)));
  const ir::Expr magic = splat(ir::Expr(12582912.0f));  // 1.5 * 2^23
  v = (v + magic) - magic;
  return ir::Cast::Make(ir::Type::Int8(lanes), ir::Cast::Make(ir::Type::Int32(lanes), v));
}

ir::Stmt StoreIm2colElement(const ir::Buffer& dst, ir::Expr dst_index, const ir::Buffer& input,
                            const Conv2dShape& s, ir::Expr image, ir::Expr row, ir::Expr pos) {
  using ir::Expr;
  const int64_t q = s.q();
  Expr c = row / (s.r * s.s), r = (row / s.s) % s.r, t = row % s.s;
  Expr y = (pos / q) * s.stride + r * s.dilation - s.pad;
  Expr x = (pos % q) * s.stride + t * s.dilation - s.pad;
  Expr inside = y >= Expr(int64_t{0}) && y < s.h && x >= Expr(int64_t{0}) && x < s.w;
  return ir::IfThenElse::Make(
      inside,
      ir::Store::Make(dst, dst_index,
                      ir::Load::Make(input, ((image * s.c + c) * s.h + y) * s.w + x)),
      ir::Store::Make(dst, dst_index, Expr(0.0f)));
}

absl::Status RefuseShapeUnless(std::string_view tpl, std::string_view what,
                               std::string_view accepted, const Workload& workload,
                               const std::vector<std::string>& wrong) {
  if (wrong.empty()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(tpl, " applies to ", what, " (", accepted, "); '",
                                           workload.ToString(), "' has ", Join(wrong, ", ")));
}

absl::Status CheckBuildRequest(const KernelTemplate& tpl, const Workload& workload,
                               const Target& target, const Config& config) {
  if (workload.op() != tpl.op) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " builds ", OpKindName(tpl.op),
                                             " kernels, not '", workload.ToString(), "'"));
  }
  if (!TemplateBuildsFor(tpl, target.kind)) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " is for ",
                                             TemplateTargetsName(tpl), " targets, not '",
                                             target.ToString(), "'"));
  }
  RETURN_IF_ERROR(CheckTemplateForm(tpl, workload));
  RETURN_IF_ERROR(CheckTemplateShape(tpl, workload));
  if (!tpl.library.empty() && !target.HasLib(tpl.library)) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " calls ", tpl.library,
                                             ": its target must name it (-libs=", tpl.library,
                                             "), not '", target.ToString(), "'"));
  }
  absl::Status valid = tpl.space(workload, target).Validate(config);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        StrCat("config ", ConfigToString(config), " is not in the space of ", tpl.name, " for ",
               workload.ToString(), ": ", std::string(valid.message())));
  }
  return absl::OkStatus();
}

}  // namespace tune

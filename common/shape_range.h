// ShapeRange: a workload with one dimension given as a range of sizes, for operators whose size
// is known only at run time (the tokens of a batch, a batch of images):
//
//   gemm:M=1..4096,N=4096,K=4096          (GEMM: M, N or K)
//   conv2d:N=1..64,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1   (conv2d: the batch N)
//
// Every other field is a workload field (common/workload.h) and means what it means there. The
// canonical text (ToString: the workload's canonical text with the ranged field written `lo..hi`)
// names the range in jobs, best queries, exports and tune-compile. A range is tuned at sizes
// the job chooses (TunedSizes); each size is an ordinary workload (At) whose records are the
// log's like any other. tune-compile builds kernels at sizes of the range and an entry point
// that takes the size at run time (runtime/tune_range.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/workload.h"

namespace tune {

class ShapeRange {
 public:
  /// True when `text` gives some field a range (a value with `..`): it is a range's text, to be
  /// parsed by Parse rather than Workload::Parse.
  static bool IsRange(std::string_view text);

  /// Parses a range's text (fields in any order). InvalidArgument naming what was wrong and the
  /// accepted form: no ranged field or more than one; a dimension that may not range (conv2d's
  /// other fields); weights=prepared (each size's kernel prepares weights its own way); a
  /// bound that is not an integer; lo < 1 or lo >= hi ("min > max"); or a workload that is not
  /// valid at lo or at hi.
  static absl::StatusOr<ShapeRange> Parse(std::string_view text);

  OpKind op() const { return at_lo_.op(); }
  /// The ranged field's name: "M", "N" or "K".
  const std::string& dim() const { return dim_; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  bool Contains(int64_t size) const { return size >= lo_ && size <= hi_; }

  /// The workload at one size of the range (which must be in it: checked).
  Workload At(int64_t size) const;
  /// The size of `workload` when it is one of the range's workloads (same op and fields, the
  /// ranged dimension within [lo, hi]); 0 otherwise.
  int64_t SizeOf(const Workload& workload) const;

  /// The canonical text; Parse(ToString()) == *this.
  std::string ToString() const;
  /// The canonical text around the bounds: a size's workload text is Before() + size + After().
  const std::string& Before() const { return before_; }
  const std::string& After() const { return after_; }

  /// Whether the dimension can be cut into pieces that are workloads of their own: the
  /// outermost dimension of every tensor that carries it, and not a sum's (GEMM M, conv2d N).
  bool Splittable() const;

  /// The sizes a job tunes first: lo, hi and the powers of two between them.
  std::vector<int64_t> TunedSizes() const;
  /// The sizes a job holds back until the tuned sizes around them are tuned: between each two
  /// adjacent TunedSizes a and b with an integer strictly between, round(sqrt(a * b)). A job
  /// tunes one only when a and b chose different configs (where the best config changes).
  std::vector<int64_t> Midpoints() const;
  /// The midpoint between two adjacent tuned sizes a < b (round(sqrt(a * b))), or 0 when no
  /// integer lies strictly between them.
  static int64_t MidpointBetween(int64_t a, int64_t b);
  /// The sizes tune-compile builds kernels at, besides the tuned ones: lo, hi and, per octave
  /// between them, the integral sizes 2^e * {1, 1.25, 1.5, 1.75} (every size below 8), so that a
  /// size is never more than 25% below the next kernel's.
  std::vector<int64_t> KernelSizes() const;

  friend bool operator==(const ShapeRange& a, const ShapeRange& b) {
    return a.ToString() == b.ToString();
  }

 private:
  ShapeRange() = default;

  Workload at_lo_;
  std::string dim_;
  int64_t lo_ = 0, hi_ = 0;
  std::string before_, after_;
};

}  // namespace tune

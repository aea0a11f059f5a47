// Compiler's shape ranges: the kernels of each range and the entry point over them.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "codegen/compiler.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

// The tensors that carry the ranged dimension: the argument dimension whose extent is the
// size, seen as [outer][size][inner].
absl::StatusOr<std::vector<RangeEntryTensor>> RangeTensors(const ShapeRange& range) {
  const std::vector<TensorArg> at_lo = range.At(range.lo()).Arguments();
  const std::vector<TensorArg> at_hi = range.At(range.hi()).Arguments();
  std::vector<RangeEntryTensor> tensors;
  for (size_t a = 0; a < at_lo.size(); ++a) {
    const std::vector<int64_t>& lo = at_lo[a].shape;
    const std::vector<int64_t>& hi = at_hi[a].shape;
    std::vector<size_t> differ;
    for (size_t d = 0; d < lo.size(); ++d) {
      if (lo[d] != hi[d]) {
        differ.push_back(d);
      }
    }
    if (differ.empty()) {
      continue;
    }
    const size_t d = differ.front();
    if (differ.size() != 1 || lo[d] != range.lo() || hi[d] != range.hi()) {
      return absl::InternalError(StrCat("argument ", at_lo[a].name, " of ", range.ToString(),
                                        " does not carry the range as one of its dimensions"));
    }
    RangeEntryTensor t{static_cast<int>(a), at_lo[a].is_output, 1, ElementBytes(at_lo[a].type)};
    for (size_t i = 0; i < d; ++i) {
      t.outer *= lo[i];
    }
    for (size_t i = d + 1; i < lo.size(); ++i) {
      t.inner_bytes *= lo[i];
    }
    tensors.push_back(t);
  }
  return tensors;
}

absl::StatusOr<std::string> RangeRuntimePath() {
  return TuneRuntimePath(kRangeRuntimeLibrary, "tune_range", "the range runtime");
}

// The measured sizes nearest `size` (by ratio), nearest first.
std::vector<int64_t> NearestMeasured(const std::map<int64_t, KernelChoice>& measured,
                                     int64_t size) {
  std::vector<int64_t> near;
  auto above = measured.lower_bound(size);
  if (above != measured.end()) {
    near.push_back(above->first);
  }
  if (above != measured.begin()) {
    near.push_back(std::prev(above)->first);
  }
  auto distance = [&](int64_t s) { return std::abs(std::log(static_cast<double>(s) / size)); };
  std::sort(near.begin(), near.end(),
            [&](int64_t a, int64_t b) { return distance(a) < distance(b); });
  return near;
}

}  // namespace

absl::StatusOr<Compiler::ExpandedRequests> Compiler::ExpandRanges(
    const std::vector<KernelRequest>& requests) {
  ExpandedRequests out;
  std::vector<KernelRequest> sized;
  for (const KernelRequest& request : requests) {
    if (!request.range.has_value()) {
      out.requests.push_back(request);
      continue;
    }
    const ShapeRange& range = *request.range;
    const std::string name =
        request.func_name.empty() ? DefaultFunctionName(range.At(range.hi())) : request.func_name;
    if (request.config.has_value()) {
      return absl::InvalidArgumentError(
          StrCat("range '", range.ToString(),
                 "': a range's kernels take their configs from the tuning log, not --config"));
    }
    std::vector<int64_t> measured_sizes;
    if (sizes_) {
      ASSIGN_OR_RETURN(measured_sizes, sizes_(range, target_));
    }
    auto kernel_request = [&](int64_t size) {
      return KernelRequest{range.At(size), StrCat(name, "__", range.dim(), size), std::nullopt,
                           request.template_name};
    };
    // The measured sizes' configs, then every other kernel size's: the nearest measured
    // size's config where it is valid (its median scaled by the work), else its own choice.
    std::map<int64_t, KernelChoice> measured;
    std::map<int64_t, std::pair<KernelChoice, std::string>> chosen;
    for (int64_t size : measured_sizes) {
      std::string origin;
      ASSIGN_OR_RETURN(KernelChoice choice, Choose(kernel_request(size), &origin));
      if (choice.from_log) {
        measured.emplace(size, choice);
      }
      chosen.emplace(size, std::make_pair(std::move(choice), std::move(origin)));
    }
    for (int64_t size : range.KernelSizes()) {
      if (chosen.contains(size)) {
        continue;
      }
      std::optional<std::pair<KernelChoice, std::string>> pick;
      for (int64_t near : NearestMeasured(measured, size)) {
        const KernelChoice& from = measured.at(near);
        const KernelTemplate* tpl = catalog_.FindTemplate(from.template_name, target_.kind);
        std::optional<Config> projected =
            tpl == nullptr || tpl->build_object
                ? std::nullopt
                : tpl->space(range.At(size), target_).Nearest(from.config);
        if (!projected) {
          continue;  // no point of this size's space is near it
        }
        KernelRequest borrow = kernel_request(size);
        borrow.config = *std::move(projected);
        borrow.template_name = from.template_name;
        absl::StatusOr<KernelChoice> valid = Choose(borrow);
        if (!valid.ok()) {
          continue;  // the template does not build this size with it
        }
        valid->from_log = true;
        if (from.secs) {
          valid->secs = *from.secs * range.At(size).Flops() / range.At(near).Flops();
        }
        pick.emplace(*std::move(valid),
                     StrCat("the config the tuning log measured at ", range.dim(), "=", near));
        break;
      }
      if (!pick) {
        std::string origin;
        ASSIGN_OR_RETURN(KernelChoice choice, Choose(kernel_request(size), &origin));
        pick.emplace(std::move(choice), std::move(origin));
      }
      chosen.emplace(size, *std::move(pick));
    }
    RangeEntry entry{name,
                     range.Before(),
                     range.After(),
                     range.lo(),
                     range.hi(),
                     range.Splittable(),
                     static_cast<int>(range.At(range.lo()).Arguments().size()),
                     {},
                     {}};
    ASSIGN_OR_RETURN(entry.tensors, RangeTensors(range));
    LibraryRange library{name, range, {}, {}};
    for (const auto& [size, pick] : chosen) {
      KernelRequest k = kernel_request(size);
      k.config = pick.first.config;
      k.template_name = pick.first.template_name;
      sized.push_back(std::move(k));
      entry.kernels.push_back(
          {size, pick.first.secs.value_or(0), sized.back().func_name, measured.contains(size)});
      if (measured.contains(size)) {
        library.measured.push_back(size);
      }
      // The origin and the logged median, kept for the library's description.
      library.kernels.push_back(
          LibraryKernel{sized.back().func_name, sized.back().workload, pick.first, pick.second});
    }
    out.entries.push_back(std::move(entry));
    out.ranges.push_back(std::move(library));
  }
  out.plain = out.requests.size();
  std::move(sized.begin(), sized.end(), std::back_inserter(out.requests));
  return out;
}

absl::StatusOr<std::string> Compiler::RangeObject(ExpandedRequests& expanded, LibraryResult& result,
                                                  std::vector<std::string>& link_args) {
  // The ranges' kernels were built as requests of their own: they belong to their range.
  result.kernels.resize(expanded.plain);
  result.ranges = std::move(expanded.ranges);
  const RangeMemory memory = target_.kind == TargetKind::kLlvm   ? RangeMemory::kHost
                             : target_.kind == TargetKind::kCuda ? RangeMemory::kCuda
                                                                 : RangeMemory::kHip;
  std::string ir;
  ASSIGN_OR_RETURN(std::string object, EmitRangeEntryObject(expanded.entries, memory, &ir));
  StrAppend(&result.llvm_ir, "\n; ----- shape range entries -----\n", ir);
  ASSIGN_OR_RETURN(std::string runtime, RangeRuntimePath());
  link_args.push_back(runtime);
  link_args.push_back(StrCat("-rpath=", std::filesystem::path(runtime).parent_path().string()));
  return object;
}

}  // namespace tune

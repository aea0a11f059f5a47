#include "codegen/c_header.h"

#include <algorithm>
#include <cctype>

#include "common/cpu_amx.h"
#include "common/strings.h"
#include "common/version.h"

namespace tune {
namespace {

// "[512][768]"
std::string Dims(const std::vector<int64_t>& shape) {
  std::string out;
  for (int64_t d : shape) {
    StrAppend(&out, "[", d, "]");
  }
  return out;
}

// The C type of an element type; the 16- and 8-bit float types are the header's own structs
// (kElementTypedefs), so that a caller needs no CUDA or compiler-specific header.
std::string_view CTypeName(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return "float";
    case ElementType::kF16:
      return "tune_f16";
    case ElementType::kBf16:
      return "tune_bf16";
    case ElementType::kI8:
      return "int8_t";
    case ElementType::kU8:
      return "uint8_t";
    case ElementType::kI32:
      return "int32_t";
    case ElementType::kFp8E4m3:
      return "tune_fp8e4m3";
    case ElementType::kFp8E5m2:
      return "tune_fp8e5m2";
    case ElementType::kFp8E4m3Fnuz:
      return "tune_fp8e4m3fnuz";
    case ElementType::kFp8E5m2Fnuz:
      return "tune_fp8e5m2fnuz";
  }
  return "void";
}

// One-member structs: the size and alignment of CUDA's __half / __nv_bfloat16 / __nv_fp8_*
// and HIP's equivalents, and a C compiler catches a bf16 array passed where f16 is expected.
constexpr std::string_view kElementTypedefs =
    "#ifndef TUNE_ELEMENT_TYPES\n"
    "#define TUNE_ELEMENT_TYPES\n"
    "/* 16- and 8-bit floating-point elements, as their bits. */\n"
    "typedef struct { uint16_t bits; } tune_f16;  /* IEEE binary16 */\n"
    "typedef struct { uint16_t bits; } tune_bf16; /* bfloat16: the high half of a binary32 */\n"
    "typedef struct { uint8_t bits; } tune_fp8e4m3;     /* OCP E4M3FN: no Inf, NaN 0x7f/0xff */\n"
    "typedef struct { uint8_t bits; } tune_fp8e5m2;     /* OCP E5M2 */\n"
    "typedef struct { uint8_t bits; } tune_fp8e4m3fnuz; /* E4M3 FNUZ (AMD): NaN 0x80 only */\n"
    "typedef struct { uint8_t bits; } tune_fp8e5m2fnuz; /* E5M2 FNUZ (AMD): NaN 0x80 only */\n"
    "#endif\n\n";

bool IsTyped(const Workload& workload) {
  for (const TensorArg& arg : workload.Arguments()) {
    if (arg.type != ElementType::kF32) {
      return true;
    }
  }
  return false;
}

// How a typed kernel computes, for its comment: "dtype=bf16: f32 accumulation, output bf16
// rounded to nearest even".
std::string TypesLine(const Workload& workload) {
  const ElementType out = workload.out_type();
  std::string line = StrCat("dtype=", DtypeName(workload.dtype()), ": ");
  if (workload.dtype() == Dtype::kTf32) {
    line += "f32 arrays whose values are read as TF32 (10 mantissa bits), ";
  }
  StrAppend(&line, ElementTypeName(workload.accumulator_type()), " accumulation");
  if (workload.requantizes()) {
    line +=
        ", i8 output requantised:\n *     C = saturate_i8(round_to_nearest_even((*scale) * sum of "
        "products + (*zero_point)))";
  } else if (IsIntegerElement(out)) {
    line += ", i32 output (wraps modulo 2^32, no saturation)";
  } else if (out != ElementType::kF32) {
    StrAppend(&line, ", output ", ElementTypeName(out), " rounded to nearest even");
  } else {
    line += ", f32 output";
  }
  if (workload.has_scales()) {
    const std::vector<TensorArg> args = workload.Arguments();
    StrAppend(&line, ";\n *     result = (*", args[workload.OutputIndex() + 1].name, ") * (*",
              args[workload.OutputIndex() + 2].name, ") * sum of products",
              EpilogueHasBias(workload.epilogue()) ? " + bias" : "");
  }
  return line;
}

// What each argument is, in the layouts of common/workload.h.
std::string Layout(const Workload& workload, const TensorArg& arg) {
  if (arg.role == ArgRole::kScale) {
    return workload.requantizes() ? "one f32 value, the output's requantisation scale"
                                  : "one f32 value, the tensor's scale";
  }
  if (arg.role == ArgRole::kZeroPoint) {
    return "one i32 value, the output's zero point";
  }
  switch (workload.op()) {
    case OpKind::kGemm:
      if (arg.name == "A") {
        return "row-major A[M][K]";
      }
      if (arg.name == "B") {
        return workload.gemm().layout == GemmLayout::kNT
                   ? "row-major B[N][K] (layout=NT: C = A x B^T)"
                   : "row-major B[K][N]";
      }
      if (arg.name == "bias") {
        return "bias[N], added to every row";
      }
      return "row-major C[M][N], written";
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      if (arg.name == "bias") {
        return "bias[K], one per output channel";
      }
      if (s.blocked()) {
        const std::string b = std::to_string(s.block);
        if (arg.name == "input") {
          return StrCat("NCHW", b, "c: input[N][C/", b, "][H][W][", b, "], channel c at [c/", b,
                        "][..][c%", b, "]");
        }
        if (arg.name == "weight") {
          return StrCat("OIhw", b, "i", b, "o: weight[K/", b, "][C/", b, "][R][S][", b, "][", b,
                        "], input channel block then output channel innermost");
        }
        return StrCat("NKPQ", b, "k: output[N][K/", b, "][P][Q][", b, "], written");
      }
      if (s.nhwc) {
        if (arg.name == "input") {
          return "NHWC: channels innermost";
        }
        if (arg.name == "weight") {
          return "KRSC: input channels innermost";
        }
        return "NPQK, written";
      }
      if (arg.name == "input") {
        return "NCHW";
      }
      if (arg.name == "weight") {
        return "KCRS";
      }
      return "NKPQ, written";
    }
  }
  return "";
}

std::string GuardMacro(const std::string& name) {
  std::string out = "TUNE_GENERATED_";
  for (char c : name) {
    out += std::isalnum(static_cast<unsigned char>(c))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  out += "_";
  return out;
}

std::string ShapeLine(const Workload& workload) {
  switch (workload.op()) {
    case OpKind::kGemm: {
      const GemmShape& g = workload.gemm();
      return StrCat(g.layout == GemmLayout::kNT ? "C = A x B^T" : "C = A x B", " with M=", g.m,
                    ", N=", g.n, ", K=", g.k);
    }
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      return StrCat("2-D convolution, stride ", s.stride, ", padding ", s.pad, ", dilation ",
                    s.dilation, "; output P=", s.p(), ", Q=", s.q());
    }
  }
  return "";
}

// The GPU host ABI of a cuda/rocm library: device pointers, the stream, return codes.
std::string GpuPreamble(const HeaderSpec& spec, bool typed) {
  const bool cuda = spec.target.kind == TargetKind::kCuda;
  std::string out;
  StrAppend(&out, " * GPU library (", cuda ? "CUDA" : "ROCm/HIP", ", target ",
            spec.target.ToString(), "):\n");
  StrAppend(
      &out, " *   - Every function takes DEVICE pointers (memory from ",
      cuda ? "cuMemAlloc / cudaMalloc" : "hipMalloc",
      typed ? "; dense\n"
              " *     arrays of the element types and layouts given below, which must not overlap\n"
              " *     the output),\n"
            : "; dense\n"
              " *     float32 arrays in the layouts given below, which must not overlap the "
              "output),\n",
      " *     then `stream`: ", cuda ? "a CUstream / cudaStream_t" : "a hipStream_t",
      " to run on; NULL is the legacy default stream.\n");
  out +=
      " *   - A call queues the work on the stream and returns without waiting for it:\n"
      " *     synchronise the stream before reading the output on the host.\n"
      " *   - It returns 0 when the work was queued. A GPU kernel returns a negative code of\n"
      " *     libtune_gpurt.so (TUNE_GPURT_ERROR_*, below), and tune_gpurt_last_error() names\n"
      " *     the cause of the calling thread's last failure (driver library missing, PTX newer\n"
      " *     than the driver, ...). A kernel that calls a vendor library (marked below) returns\n"
      " *     its shim's negative TUNE_GPU_* code (runtime/tune_gpu_runtime.h; the shim's\n"
      " *     tune_gpu_last_error() says why) and needs the caller's context current. Faults of\n"
      " *     a kernel itself surface on the stream (the next synchronisation reports them), as\n"
      " *     with any asynchronous launch.\n";
  if (cuda) {
    out +=
        " *   - The device code (PTX for the target's arch, compiled by the CUDA driver's JIT) is\n"
        " *     loaded once per process and CUDA context, on the first call, thread-safely. The\n"
        " *     context is the calling thread's current one; when none is current, that of the\n"
        " *     stream (cuStreamGetCtx), or for a NULL stream the primary context of device 0,\n"
        " *     which is then made current on the calling thread. libcuda.so.1 is opened with\n"
        " *     dlopen on the first call: programs need no CUDA toolkit to build or link.\n";
  } else {
    out +=
        " *   - The device code (an HSA code object for the target's arch) is loaded once per\n"
        " *     process and device (the calling thread's current HIP device), on the first call,\n"
        " *     thread-safely. libamdhip64.so is opened with dlopen on the first call: programs\n"
        " *     need no ROCm to build or link.\n";
  }
  out +=
      " *   - Every function may be called from several threads at once (but those with a\n"
      " *     workspace, listed with it, on one stream at a time). A GPU kernel's launch\n"
      " *     geometry is fixed (listed with it): grid in blocks, block in threads (x, y, z).\n";
  return out;
}

constexpr const char* kGpuRuntimeDeclarations =
    "/* libtune_gpurt.so's return codes and error text (runtime/tune_gpurt.h). */\n"
    "#ifndef TUNE_GPURT_OK\n"
    "#define TUNE_GPURT_OK 0\n"
    "#define TUNE_GPURT_ERROR_DRIVER_NOT_FOUND -1 /* libcuda.so.1 / libamdhip64.so missing */\n"
    "#define TUNE_GPURT_ERROR_NO_DEVICE -2        /* driver init failed, no device/context */\n"
    "#define TUNE_GPURT_ERROR_MODULE_LOAD -3      /* the driver rejected the device code */\n"
    "#define TUNE_GPURT_ERROR_KERNEL_NOT_FOUND -4 /* the device code lacks the kernel */\n"
    "#define TUNE_GPURT_ERROR_LAUNCH -5           /* the launch failed */\n"
    "#define TUNE_GPURT_ERROR_BAD_ARGUMENT -6     /* a corrupt library or runtime mismatch */\n"
    "#endif\n"
    "/* What the calling thread's last failing GPU runtime call did wrong (\"\" when none). */\n"
    "const char* tune_gpurt_last_error(void);\n"
    "/* How many device modules this process has loaded (each library, context and device once).\n"
    " */\n"
    "uint64_t tune_gpurt_module_loads(void);\n\n";

// Kernels on AMX tiles and the code they return where Linux refuses them (common/cpu_amx.h).
std::string AmxDeclarations() {
  return StrCat(
      "/* Kernels of template gemm.cpu.amx (named with each below) run on AMX tiles. The first\n"
      " * call of one asks Linux for the tiles' state (arch_prctl(ARCH_REQ_XCOMP_PERM,\n"
      " * XFEATURE_XTILEDATA), once per process); where Linux refuses (a kernel without AMX\n"
      " * support, a signal stack too small for the state), the call returns\n"
      " * TUNE_CPU_ERROR_AMX_DENIED and computes nothing. */\n"
      "#ifndef TUNE_CPU_ERROR_AMX_DENIED\n"
      "#define TUNE_CPU_ERROR_AMX_DENIED ",
      kAmxDeniedStatus,
      "\n"
      "#endif\n\n");
}

// A range's argument dimensions, the ranged one by its name: "[M][4096]".
std::string RangeDims(const std::vector<int64_t>& at_lo, const std::vector<int64_t>& at_hi,
                      const std::string& dim) {
  std::string out;
  for (size_t d = 0; d < at_lo.size(); ++d) {
    StrAppend(&out, "[", at_lo[d] == at_hi[d] ? StrCat(at_lo[d]) : dim, "]");
  }
  return out;
}

constexpr const char* kRangeRuntimeDeclarations =
    "/* libtune_range.so's return codes, error text and recording (runtime/tune_range.h): a\n"
    " * program that calls these two functions links libtune_range.so too. */\n"
    "#ifndef TUNE_RANGE_OK\n"
    "#define TUNE_RANGE_OK 0\n"
    "#define TUNE_RANGE_ERROR_OUT_OF_RANGE -20 /* the size is outside the range */\n"
    "#define TUNE_RANGE_ERROR_NO_MEMORY -21    /* a padded copy could not be allocated */\n"
    "#define TUNE_RANGE_ERROR_BAD_PLAN -22     /* a corrupt library or runtime mismatch */\n"
    "#define TUNE_RANGE_ERROR_COPY -23         /* a padded copy failed */\n"
    "#endif\n"
    "/* What the calling thread's last failing range call did wrong (\"\" when none). */\n"
    "const char* tune_range_last_error(void);\n"
    "/* With TUNE_RECORD_SHAPES=FILE in the environment, every entry below counts the sizes it is\n"
    " * called with that have no kernel of their own, and appends them to FILE as a workloads\n"
    " * file (\"WORKLOAD COUNT\" lines: tune-client submit --workloads-file FILE tunes them) at\n"
    " * exit and when this is called. Returns 0, or a negative code (the file could not be\n"
    " * written). */\n"
    "int32_t tune_range_flush_recording(void);\n\n";

std::string RenderRange(const HeaderRange& r, bool gpu) {
  const ShapeRange& range = r.range;
  const Workload lo = range.At(range.lo());
  const Workload hi = range.At(range.hi());
  const std::vector<TensorArg> lo_args = lo.Arguments();
  const std::vector<TensorArg> hi_args = hi.Arguments();
  std::string out = StrCat("/* ", range.ToString(), "\n");
  StrAppend(&out, " *   one entry for every ", range.dim(), " from ", range.lo(), " to ",
            range.hi(), ": ", range.dim(), " comes first; another value returns\n",
            " *   TUNE_RANGE_ERROR_OUT_OF_RANGE and computes nothing\n");
  if (IsTyped(lo)) {
    StrAppend(&out, " *   ", TypesLine(lo), "\n");
  }
  for (size_t a = 0; a < lo_args.size(); ++a) {
    StrAppend(&out, " *   ", lo_args[a].name, ": ", CTypeName(lo_args[a].type),
              RangeDims(lo_args[a].shape, hi_args[a].shape, range.dim()), ", ",
              Layout(lo, lo_args[a]), "\n");
  }
  if (lo.epilogue() != Epilogue::kNone) {
    StrAppend(&out, " *   epilogue: ", EpilogueName(lo.epilogue()), "\n");
  }
  std::vector<std::string> measured;
  for (int64_t size : r.measured) {
    measured.push_back(StrCat(size));
  }
  StrAppend(&out, " *   ", r.kernels.size(), " kernels, one per size below (tuned at ",
            measured.empty() ? std::string("no size: the log has none") : Join(measured, ", "),
            "); a size without its own kernel runs\n"
            " *   on larger ones with zero-padded copies",
            range.Splittable() ? StrCat(", or in pieces along ", range.dim()) : "",
            ", whichever their medians say is\n"
            " *   faster (libtune_range.so). Each kernel's template, config and config source:\n");
  for (const HeaderKernel& k : r.kernels) {
    StrAppend(&out, " *     ", range.dim(), "=", range.SizeOf(k.workload), ": ", k.template_name,
              " v", k.template_version, " ", k.config, " (", k.origin, ")\n");
  }
  if (gpu) {
    out +=
        " *   stream: where it runs (NULL: the legacy default stream); padded copies are\n"
        " *   allocated and freed on it (stream-ordered allocation)\n";
  }
  out += " */\n";
  StrAppend(&out, CRangePrototype(r.func_name, range, gpu), ";\n");
  StrAppend(&out, "/* How ", r.func_name, " runs ", range.dim(),
            ": up to `capacity` (kernel size, piece length) pairs in sizes[2*i] and\n"
            " * sizes[2*i+1] (a piece shorter than its kernel runs padded); returns how many there"
            " are, or a\n * negative code. */\n",
            "int32_t ", r.func_name, "_pieces(int64_t ", range.dim(),
            ", int64_t* sizes, int32_t capacity);\n\n");
  return out;
}

}  // namespace

std::string CRangePrototype(const std::string& func_name, const ShapeRange& range, bool stream) {
  std::string prototype = CPrototype(func_name, range.At(range.lo()), stream);
  const size_t open = prototype.find('(');
  return StrCat(prototype.substr(0, open + 1), "int64_t ", range.dim(), ", ",
                prototype.substr(open + 1));
}

std::string CPrototype(const std::string& func_name, const Workload& workload, bool stream) {
  std::string out = StrCat("int ", func_name, "(");
  std::vector<TensorArg> args = workload.Arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    // The second argument is the weights (B, weight): prepared ones when the workload says so.
    const std::string name =
        i == 1 && workload.prepared_weights() ? StrCat("prepared_", args[i].name) : args[i].name;
    StrAppend(&out, args[i].is_output ? "" : "const ", CTypeName(args[i].type), "* ", name);
  }
  if (stream) {
    out += ", void* stream";
  }
  out += ")";
  return out;
}

std::string RenderCHeader(const HeaderSpec& spec) {
  const std::string guard = GuardMacro(spec.guard_name);
  std::string out;
  StrAppend(&out, "/* Generated by tune-compile ", kTuneVersion, " for target '",
            spec.target.ToString(), "' (device key ", spec.target.DeviceKey(), ").\n");
  StrAppend(&out, " * Do not edit: regenerate from the tuning log instead.\n *\n");
  StrAppend(&out, " * Library: ", spec.library_name, "\n");
  if (spec.needed_libs.empty()) {
    out += " * Runtime libraries: none besides libc.\n";
  } else {
    StrAppend(&out, " * Runtime libraries: ", Join(spec.needed_libs, ", "),
              " (linked; found by the dynamic loader, tune's runtime shims libtune_*.so through\n"
              " * the library's RUNPATH).\n");
  }
  if (!spec.external_libs.empty()) {
    StrAppend(&out, " * External libraries: ", Join(spec.external_libs, ", "),
              " (called but not linked: load them with RTLD_GLOBAL before this library).\n");
  }
  const bool gpu = spec.target.kind != TargetKind::kLlvm;
  // The kernels of the ranges count for what the header declares.
  std::vector<HeaderKernel> all = spec.kernels;
  for (const HeaderRange& r : spec.ranges) {
    all.insert(all.end(), r.kernels.begin(), r.kernels.end());
  }
  const bool typed = std::any_of(all.begin(), all.end(),
                                 [](const HeaderKernel& k) { return IsTyped(k.workload); });
  if (gpu) {
    out += " *\n" + GpuPreamble(spec, typed) + " */\n";
  } else if (typed) {
    out +=
        " *\n"
        " * Every function takes dense arrays of the element types and layouts given below,\n"
        " * which must not overlap the output, and returns 0 on success.\n"
        " */\n";
  } else {
    out +=
        " *\n"
        " * Every function takes dense float32 arrays in the layouts given below, which must not\n"
        " * overlap the output, and returns 0 on success.\n"
        " */\n";
  }
  StrAppend(&out, "#ifndef ", guard, "\n#define ", guard, "\n\n");
  const bool prepared =
      std::any_of(spec.kernels.begin(), spec.kernels.end(),
                  [](const HeaderKernel& k) { return k.workload.prepared_weights(); });
  if (gpu || prepared || typed || !spec.ranges.empty()) {
    out += "#include <stdint.h>\n\n";
  }
  if (typed) {
    out += kElementTypedefs;
  }
  out += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  if (gpu) {
    out += kGpuRuntimeDeclarations;
  }
  if (std::any_of(all.begin(), all.end(),
                  [](const HeaderKernel& k) { return k.template_name == "gemm.cpu.amx"; })) {
    out += AmxDeclarations();
  }
  if (!spec.ranges.empty()) {
    out += kRangeRuntimeDeclarations;
  }
  for (const HeaderRange& r : spec.ranges) {
    out += RenderRange(r, gpu);
  }
  for (const HeaderKernel& k : spec.kernels) {
    StrAppend(&out, "/* ", k.workload.ToString(), "\n");
    StrAppend(&out, " *   ", ShapeLine(k.workload), "\n");
    if (IsTyped(k.workload)) {
      StrAppend(&out, " *   ", TypesLine(k.workload), "\n");
    }
    for (const TensorArg& arg : k.workload.Arguments()) {
      StrAppend(&out, " *   ", arg.name, ": ", CTypeName(arg.type), Dims(arg.shape), ", ",
                Layout(k.workload, arg), "\n");
    }
    if (k.workload.epilogue() != Epilogue::kNone) {
      StrAppend(&out, " *   epilogue: ", EpilogueName(k.workload.epilogue()), "\n");
    }
    const std::string weights = k.workload.Arguments()[1].name;
    if (k.workload.prepared_weights()) {
      StrAppend(&out, " *   weights=prepared: call ", PrepareFunctionName(k.func_name), "(",
                weights, ", prepared_", weights, ") once, with prepared_", weights, " holding ",
                PreparedFloatsName(k.func_name), "\n *   floats; ", k.func_name,
                " then takes prepared_", weights, " in place of ", weights, " and only reads it. ",
                PrepareFunctionName(k.func_name), " returns 0.\n");
    }
    StrAppend(&out, " *   template ", k.template_name, " v", k.template_version, ", config ",
              k.config, "\n");
    StrAppend(&out, " *   config source: ", k.origin, "\n");
    if (gpu) {
      if (k.launch.has_value()) {
        StrAppend(&out, " *   GPU kernel ", k.func_name, ", launch ", ToString(*k.launch), "\n");
        if (k.launch->workspace_bytes > 0) {
          StrAppend(&out, " *   workspace: ", k.launch->workspace_bytes,
                    " bytes of module memory that its blocks share from launch to launch (a\n"
                    " *   reduction split across blocks): calls of this function must not overlap\n"
                    " *   (one stream at a time, or synchronised between streams)\n");
        }
      } else {
        out +=
            " *   host code calling a vendor library on `stream` (TUNE_GPU_* codes; the caller's\n"
            " *   context must be current)\n";
      }
      out += " *   stream: where it runs (NULL: the legacy default stream)\n";
    }
    out += " */\n";
    if (k.workload.prepared_weights()) {
      StrAppend(&out, "extern const int64_t ", PreparedFloatsName(k.func_name), ";\n");
      StrAppend(&out, "int ", PrepareFunctionName(k.func_name), "(const float* ", weights,
                ", float* prepared_", weights, ");\n");
    }
    StrAppend(&out, CPrototype(k.func_name, k.workload, gpu), ";\n\n");
  }
  out += "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n";
  StrAppend(&out, "#endif  /* ", guard, " */\n");
  return out;
}

}  // namespace tune

#include "common/workload.h"

#include <map>
#include <optional>

#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr std::string_view kGemmForm =
    "gemm:M=<int>,N=<int>,K=<int>[,layout=NN|NT][,dtype=<dtype>][,out=<type>]"
    "[,epilogue=bias|bias_relu|relu|requant][,weights=canonical|prepared]";
constexpr std::string_view kConvForm =
    "conv2d:N=<int>,C=<int>,H=<int>,W=<int>,K=<int>,R=<int>,S=<int>,stride=<int>,pad=<int>"
    "[,dilation=<int>][,layout=NCHW|NCHW4c|NCHW8c|NCHW16c|NHWC][,dtype=<dtype>][,out=<type>]"
    "[,epilogue=bias|bias_relu|relu|requant][,weights=canonical|prepared]";

absl::Status Invalid(std::string_view text, std::string_view what, std::string_view form) {
  return absl::InvalidArgumentError(
      StrCat("workload '", text, "': ", what, "; accepted form: ", form));
}

std::string AcceptedForms() { return StrCat(kGemmForm, " or ", kConvForm); }

absl::StatusOr<Epilogue> ParseEpilogue(std::string_view text, std::string_view value,
                                       std::string_view form) {
  if (value == "none") {
    return Epilogue::kNone;
  }
  if (value == "bias") {
    return Epilogue::kBias;
  }
  if (value == "bias_relu") {
    return Epilogue::kBiasRelu;
  }
  if (value == "relu") {
    return Epilogue::kRelu;
  }
  if (value == "requant") {
    return Epilogue::kRequant;
  }
  return Invalid(text, StrCat("epilogue '", value, "' is unknown (bias, bias_relu, relu, requant)"),
                 form);
}

// Parses the comma-separated fields into a map, rejecting malformed and duplicate fields.
absl::StatusOr<std::map<std::string, std::string, std::less<>>> SplitFields(std::string_view text,
                                                                            std::string_view body,
                                                                            std::string_view form) {
  std::map<std::string, std::string, std::less<>> fields;
  if (body.empty()) {
    return Invalid(text, "no fields given", form);
  }
  for (std::string_view field : Split(body, ',')) {
    auto kv = SplitOnce(field, '=');
    if (!kv || kv->first.empty() || kv->second.empty()) {
      return Invalid(text, StrCat("field '", field, "' is not of the form key=value"), form);
    }
    if (!fields.emplace(std::string(kv->first), std::string(kv->second)).second) {
      return Invalid(text, StrCat("field '", kv->first, "' is given twice"), form);
    }
  }
  return fields;
}

// Takes one integer field out of `fields`; `min_value` is the smallest accepted value.
absl::StatusOr<int64_t> TakeInt(std::map<std::string, std::string, std::less<>>& fields,
                                std::string_view text, std::string_view key,
                                std::optional<int64_t> default_value, int64_t min_value,
                                std::string_view form) {
  auto it = fields.find(key);
  if (it == fields.end()) {
    if (default_value) {
      return *default_value;
    }
    return Invalid(text, StrCat("field '", key, "' is missing"), form);
  }
  std::optional<int64_t> parsed = ParseInt(it->second);
  if (!parsed) {
    return Invalid(text, StrCat("field '", key, "' = '", it->second, "' is not an integer"), form);
  }
  int64_t value = *parsed;
  if (value < min_value) {
    return Invalid(text, StrCat("field '", key, "' = ", value, " must be >= ", min_value), form);
  }
  if (value > (int64_t{1} << 31)) {
    return Invalid(text, StrCat("field '", key, "' = ", value, " is too large"), form);
  }
  fields.erase(it);
  return value;
}

absl::StatusOr<WeightForm> ParseWeightForm(std::string_view text, std::string_view value,
                                           std::string_view form) {
  if (value == "canonical") {
    return WeightForm::kCanonical;
  }
  if (value == "prepared") {
    return WeightForm::kPrepared;
  }
  return Invalid(text, StrCat("weights '", value, "' is unknown (canonical, prepared)"), form);
}

std::string OutputNames(Dtype dtype) {
  std::string names;
  for (ElementType t : AcceptedOutputTypes(dtype)) {
    StrAppend(&names, names.empty() ? "" : ", ", ElementTypeName(t));
  }
  return names;
}

// Takes `dtype=` and `out=`: a dtype of element_type.h and one of its accepted outputs.
// With epilogue=requant the output is i8 (out=i8, or no out=), and the dtype an integer one.
absl::Status TakeTypes(std::map<std::string, std::string, std::less<>>& fields,
                       std::string_view text, std::string_view form, Epilogue epilogue,
                       Dtype* dtype, ElementType* out) {
  *dtype = Dtype::kF32;
  if (auto it = fields.find("dtype"); it != fields.end()) {
    std::optional<Dtype> parsed = ParseDtype(it->second);
    if (!parsed) {
      return Invalid(text, StrCat("dtype '", it->second, "' is unknown (", DtypeNames(), ")"),
                     form);
    }
    *dtype = *parsed;
    fields.erase(it);
  }
  const bool requant = epilogue == Epilogue::kRequant;
  if (requant && !IsIntegerDtype(*dtype)) {
    return Invalid(text,
                   StrCat("epilogue=requant requantises an integer accumulator to i8: it needs "
                          "dtype=i8 or dtype=u8i8, not dtype=",
                          DtypeName(*dtype)),
                   form);
  }
  *out = requant ? ElementType::kI8 : DefaultOutputType(*dtype);
  if (auto it = fields.find("out"); it != fields.end()) {
    std::optional<ElementType> parsed = ParseElementType(it->second);
    if (requant && parsed != ElementType::kI8) {
      return Invalid(text, StrCat("epilogue=requant writes i8, not out=", it->second, " (out=i8)"),
                     form);
    }
    if (!requant && parsed == ElementType::kI8 && IsIntegerDtype(*dtype)) {
      return Invalid(
          text,
          StrCat("out=i8 is written only by epilogue=requant (a per-tensor f32 scale "
                 "and an i32 zero point); outputs of dtype=",
                 DtypeName(*dtype), ": ", OutputNames(*dtype), ", or i8 with epilogue=requant"),
          form);
    }
    if (!parsed || (!requant && !AcceptsOutput(*dtype, *parsed))) {
      return Invalid(text,
                     StrCat("out=", it->second, " is not an output of dtype=", DtypeName(*dtype),
                            " (", OutputNames(*dtype), ")"),
                     form);
    }
    *out = *parsed;
    fields.erase(it);
  }
  return absl::OkStatus();
}

// Takes the fields common to every op (epilogue, weights, dtype, out) and rejects anything left
// over.
absl::Status TakeCommonAndFinish(std::map<std::string, std::string, std::less<>>& fields,
                                 std::string_view text, std::string_view form, Epilogue* epilogue,
                                 WeightForm* weights, Dtype* dtype, ElementType* out) {
  *epilogue = Epilogue::kNone;
  if (auto it = fields.find("epilogue"); it != fields.end()) {
    ASSIGN_OR_RETURN(*epilogue, ParseEpilogue(text, it->second, form));
    fields.erase(it);
  }
  *weights = WeightForm::kCanonical;
  if (auto it = fields.find("weights"); it != fields.end()) {
    ASSIGN_OR_RETURN(*weights, ParseWeightForm(text, it->second, form));
    fields.erase(it);
  }
  RETURN_IF_ERROR(TakeTypes(fields, text, form, *epilogue, dtype, out));
  if (!fields.empty()) {
    return Invalid(text, StrCat("field '", fields.begin()->first, "' is unknown"), form);
  }
  return absl::OkStatus();
}

absl::StatusOr<GemmLayout> ParseGemmLayout(std::string_view text, std::string_view value) {
  if (value == "NN") {
    return GemmLayout::kNN;
  }
  if (value == "NT") {
    return GemmLayout::kNT;
  }
  return Invalid(text, StrCat("layout '", value, "' is unknown (NN, NT)"), kGemmForm);
}

// The channel block of a conv2d layout: 1 for NCHW and NHWC (which sets c->nhwc), b for
// NCHW<b>c (b of 4, 8, 16, dividing both C and K).
absl::StatusOr<int64_t> ParseConvLayout(std::string_view text, std::string_view value,
                                        Conv2dShape* c_out) {
  const Conv2dShape& c = *c_out;
  if (value == "NCHW") {
    return 1;
  }
  if (value == "NHWC") {
    c_out->nhwc = true;
    return 1;
  }
  std::optional<int64_t> block;
  if (value.size() > 5 && value.starts_with("NCHW") && value.ends_with("c")) {
    block = ParseInt(value.substr(4, value.size() - 5));
  }
  if (!block || (*block != 4 && *block != 8 && *block != 16)) {
    return Invalid(
        text, StrCat("layout '", value, "' is unknown (NCHW, NCHW4c, NCHW8c, NCHW16c or NHWC)"),
        kConvForm);
  }
  if (c.c % *block != 0 || c.k % *block != 0) {
    return Invalid(text,
                   StrCat("layout=", value, " keeps channels in blocks of ", *block,
                          ", which needs C and K to be multiples of ", *block, " (C=", c.c,
                          ", K=", c.k, "); use layout=NCHW, or a block that divides both"),
                   kConvForm);
  }
  return *block;
}

// Every argument of `w` has at most kMaxTensorElements elements, so element and byte counts
// stay far inside int64_t (each field alone may be up to 2^31).
absl::Status CheckTensorSizes(std::string_view text, const Workload& w, std::string_view form) {
  for (const TensorArg& arg : w.Arguments()) {
    int64_t elements = 1;
    for (int64_t d : arg.shape) {
      if (__builtin_mul_overflow(elements, d, &elements) || elements > kMaxTensorElements) {
        return Invalid(text, StrCat("tensor '", arg.name, "' would have more than 2^40 elements"),
                       form);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string_view OpKindName(OpKind op) {
  switch (op) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kConv2d:
      return "conv2d";
  }
  return "?";
}

std::string_view EpilogueName(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "none";
    case Epilogue::kBias:
      return "bias";
    case Epilogue::kBiasRelu:
      return "bias_relu";
    case Epilogue::kRelu:
      return "relu";
    case Epilogue::kRequant:
      return "requant";
  }
  return "?";
}

std::string_view WeightFormName(WeightForm form) {
  return form == WeightForm::kPrepared ? "prepared" : "canonical";
}

std::string_view GemmLayoutName(GemmLayout layout) {
  return layout == GemmLayout::kNT ? "NT" : "NN";
}

std::string PrepareFunctionName(std::string_view kernel_name) {
  return StrCat(kernel_name, "_prepare");
}

std::string PreparedFloatsName(std::string_view kernel_name) {
  return StrCat(kernel_name, "_prepared_floats");
}

bool EpilogueHasBias(Epilogue e) { return e == Epilogue::kBias || e == Epilogue::kBiasRelu; }
bool EpilogueHasRelu(Epilogue e) { return e == Epilogue::kRelu || e == Epilogue::kBiasRelu; }

int64_t TensorArg::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
  }
  return n;
}

absl::StatusOr<Workload> Workload::Parse(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Invalid(text, "expected '<op>:<fields>'", AcceptedForms());
  }
  std::string_view op = text.substr(0, colon);
  std::string_view body = text.substr(colon + 1);
  Workload w;
  if (op == "gemm") {
    ASSIGN_OR_RETURN(auto fields, SplitFields(text, body, kGemmForm));
    w.op_ = OpKind::kGemm;
    ASSIGN_OR_RETURN(w.gemm_.m, TakeInt(fields, text, "M", std::nullopt, 1, kGemmForm));
    ASSIGN_OR_RETURN(w.gemm_.n, TakeInt(fields, text, "N", std::nullopt, 1, kGemmForm));
    ASSIGN_OR_RETURN(w.gemm_.k, TakeInt(fields, text, "K", std::nullopt, 1, kGemmForm));
    if (auto it = fields.find("layout"); it != fields.end()) {
      ASSIGN_OR_RETURN(w.gemm_.layout, ParseGemmLayout(text, it->second));
      fields.erase(it);
    }
    RETURN_IF_ERROR(TakeCommonAndFinish(fields, text, kGemmForm, &w.epilogue_, &w.weight_form_,
                                        &w.dtype_, &w.out_));
    RETURN_IF_ERROR(CheckTensorSizes(text, w, kGemmForm));
    return w;
  }
  if (op == "conv2d") {
    ASSIGN_OR_RETURN(auto fields, SplitFields(text, body, kConvForm));
    w.op_ = OpKind::kConv2d;
    Conv2dShape& c = w.conv2d_;
    ASSIGN_OR_RETURN(c.n, TakeInt(fields, text, "N", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.c, TakeInt(fields, text, "C", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.h, TakeInt(fields, text, "H", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.w, TakeInt(fields, text, "W", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.k, TakeInt(fields, text, "K", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.r, TakeInt(fields, text, "R", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.s, TakeInt(fields, text, "S", std::nullopt, 1, kConvForm));
    ASSIGN_OR_RETURN(c.stride, TakeInt(fields, text, "stride", int64_t{1}, 1, kConvForm));
    ASSIGN_OR_RETURN(c.pad, TakeInt(fields, text, "pad", int64_t{0}, 0, kConvForm));
    ASSIGN_OR_RETURN(c.dilation, TakeInt(fields, text, "dilation", int64_t{1}, 1, kConvForm));
    ASSIGN_OR_RETURN(int64_t groups, TakeInt(fields, text, "groups", int64_t{1}, 1, kConvForm));
    if (groups != 1) {
      return Invalid(text, "field 'groups' must be 1 (grouped convolution is not supported)",
                     kConvForm);
    }
    if (auto it = fields.find("layout"); it != fields.end()) {
      ASSIGN_OR_RETURN(c.block, ParseConvLayout(text, it->second, &c));
      fields.erase(it);
    }
    RETURN_IF_ERROR(TakeCommonAndFinish(fields, text, kConvForm, &w.epilogue_, &w.weight_form_,
                                        &w.dtype_, &w.out_));
    // The dilated filter must fit the padded input. (p() and q() alone do not say so: their
    // division rounds a negative remainder up to 0 when the stride is above 1.)
    if (c.h + 2 * c.pad < c.dilation * (c.r - 1) + 1 ||
        c.w + 2 * c.pad < c.dilation * (c.s - 1) + 1) {
      return Invalid(text,
                     StrCat("the filter (R=", c.r, ", S=", c.s, ", dilation=", c.dilation,
                            ") does not fit the padded input (H=", c.h, ", W=", c.w,
                            ", pad=", c.pad, "): the output would be empty"),
                     kConvForm);
    }
    RETURN_IF_ERROR(CheckTensorSizes(text, w, kConvForm));
    return w;
  }
  return Invalid(text, StrCat("op '", op, "' is unknown (gemm, conv2d)"), AcceptedForms());
}

Workload Workload::Gemm(GemmShape shape, Epilogue epilogue) {
  Workload w;
  w.op_ = OpKind::kGemm;
  w.gemm_ = shape;
  w.epilogue_ = epilogue;
  return w;
}

Workload Workload::Conv2d(Conv2dShape shape, Epilogue epilogue) {
  Workload w;
  w.op_ = OpKind::kConv2d;
  w.conv2d_ = shape;
  w.epilogue_ = epilogue;
  return w;
}

Workload Workload::WithWeightForm(WeightForm form) const {
  Workload out = *this;
  out.weight_form_ = form;
  return out;
}

Workload Workload::InPlainLayout() const {
  Workload plain = *this;
  plain.conv2d_.block = 1;
  return plain;
}

Workload Workload::WithTypes(Dtype dtype, std::optional<ElementType> out) const {
  Workload typed = *this;
  typed.dtype_ = dtype;
  if (requantizes()) {
    TUNE_CHECK(IsIntegerDtype(dtype) && out.value_or(ElementType::kI8) == ElementType::kI8)
        << "epilogue=requant takes dtype=i8 or u8i8 and writes i8";
    typed.out_ = ElementType::kI8;
    return typed;
  }
  typed.out_ = out.value_or(DefaultOutputType(dtype));
  TUNE_CHECK(AcceptsOutput(dtype, typed.out_))
      << "out=" << ElementTypeName(typed.out_) << " is not an output of dtype=" << DtypeName(dtype);
  return typed;
}

std::string Workload::ToString() const {
  std::string out;
  switch (op_) {
    case OpKind::kGemm:
      out = StrCat("gemm:M=", gemm_.m, ",N=", gemm_.n, ",K=", gemm_.k);
      if (gemm_.layout != GemmLayout::kNN) {
        StrAppend(&out, ",layout=", GemmLayoutName(gemm_.layout));
      }
      break;
    case OpKind::kConv2d: {
      const Conv2dShape& c = conv2d_;
      out = StrCat("conv2d:N=", c.n, ",C=", c.c, ",H=", c.h, ",W=", c.w, ",K=", c.k, ",R=", c.r,
                   ",S=", c.s, ",stride=", c.stride, ",pad=", c.pad);
      if (c.dilation != 1) {
        StrAppend(&out, ",dilation=", c.dilation);
      }
      if (c.blocked()) {
        StrAppend(&out, ",layout=NCHW", c.block, "c");
      } else if (c.nhwc) {
        StrAppend(&out, ",layout=NHWC");
      }
      break;
    }
  }
  if (dtype_ != Dtype::kF32) {
    StrAppend(&out, ",dtype=", DtypeName(dtype_));
  }
  if (out_ != DefaultOutputType(dtype_) && !requantizes()) {  // requant implies out=i8
    StrAppend(&out, ",out=", ElementTypeName(out_));
  }
  if (epilogue_ != Epilogue::kNone) {
    StrAppend(&out, ",epilogue=", EpilogueName(epilogue_));
  }
  if (weight_form_ == WeightForm::kPrepared) {
    StrAppend(&out, ",weights=prepared");
  }
  return out;
}

double Workload::Flops() const {
  switch (op_) {
    case OpKind::kGemm:
      return 2.0 * gemm_.m * gemm_.n * gemm_.k;
    case OpKind::kConv2d: {
      const Conv2dShape& c = conv2d_;
      return 2.0 * c.n * c.k * c.p() * c.q() * c.c * c.r * c.s;
    }
  }
  return 0;
}

std::vector<TensorArg> Workload::Arguments() const {
  const ElementType in = input_type();
  const ElementType wt = weight_type();
  std::vector<TensorArg> args;
  auto add = [&](std::string name, std::vector<int64_t> shape, ElementType type, ArgRole role) {
    args.push_back({std::move(name), std::move(shape), role == ArgRole::kOutput, type, role});
  };
  switch (op_) {
    case OpKind::kGemm: {
      const GemmShape& g = gemm_;
      add("A", {g.m, g.k}, in, ArgRole::kInput);
      if (g.layout == GemmLayout::kNT) {
        add("B", {g.n, g.k}, wt, ArgRole::kWeight);
      } else {
        add("B", {g.k, g.n}, wt, ArgRole::kWeight);
      }
      if (EpilogueHasBias(epilogue_)) {
        add("bias", {g.n}, out_, ArgRole::kBias);
      }
      add("C", {g.m, g.n}, out_, ArgRole::kOutput);
      if (has_scales()) {
        add("scale_A", {1}, ElementType::kF32, ArgRole::kScale);
        add("scale_B", {1}, ElementType::kF32, ArgRole::kScale);
      }
      break;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& c = conv2d_;
      const int64_t b = c.block;
      if (c.blocked()) {
        add("input", {c.n, c.c / b, c.h, c.w, b}, in, ArgRole::kInput);
        add("weight", {c.k / b, c.c / b, c.r, c.s, b, b}, wt, ArgRole::kWeight);
      } else if (c.nhwc) {
        add("input", {c.n, c.h, c.w, c.c}, in, ArgRole::kInput);
        add("weight", {c.k, c.r, c.s, c.c}, wt, ArgRole::kWeight);
      } else {
        add("input", {c.n, c.c, c.h, c.w}, in, ArgRole::kInput);
        add("weight", {c.k, c.c, c.r, c.s}, wt, ArgRole::kWeight);
      }
      if (EpilogueHasBias(epilogue_)) {
        add("bias", {c.k}, out_, ArgRole::kBias);
      }
      if (c.blocked()) {
        add("output", {c.n, c.k / b, c.p(), c.q(), b}, out_, ArgRole::kOutput);
      } else if (c.nhwc) {
        add("output", {c.n, c.p(), c.q(), c.k}, out_, ArgRole::kOutput);
      } else {
        add("output", {c.n, c.k, c.p(), c.q()}, out_, ArgRole::kOutput);
      }
      if (has_scales()) {
        add("scale_input", {1}, ElementType::kF32, ArgRole::kScale);
        add("scale_weight", {1}, ElementType::kF32, ArgRole::kScale);
      }
      break;
    }
  }
  if (requantizes()) {  // the same two scalars after either op's output
    add("scale", {1}, ElementType::kF32, ArgRole::kScale);
    add("zero_point", {1}, ElementType::kI32, ArgRole::kZeroPoint);
  }
  return args;
}

int Workload::OutputIndex() const { return EpilogueHasBias(epilogue_) ? 3 : 2; }

}  // namespace tune

#include "gemm_c_source.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <vector>

namespace c_codegen_plugin {
namespace {

constexpr std::array<std::string_view, 44> kCKeywords = {
    "auto",           "break",        "case",     "char",     "const",      "continue",
    "default",        "do",           "double",   "else",     "enum",       "extern",
    "float",          "for",          "goto",     "if",       "inline",     "int",
    "long",           "register",     "restrict", "return",   "short",      "signed",
    "sizeof",         "static",       "struct",   "switch",   "typedef",    "union",
    "unsigned",       "void",         "volatile", "while",    "_Alignas",   "_Alignof",
    "_Atomic",        "_Bool",        "_Complex", "_Generic", "_Imaginary", "_Noreturn",
    "_Static_assert", "_Thread_local"};

const char* EpilogueName(Epilogue e) {
  switch (e) {
    case Epilogue::kNone:
      return "none";
    case Epilogue::kBias:
      return "bias";
    case Epilogue::kRelu:
      return "relu";
    case Epilogue::kBiasRelu:
      return "bias_relu";
  }
  return "?";
}

std::string BlockName(std::string_view func_name, int64_t rows, int64_t cols) {
  return std::string(func_name) + "_block_" + std::to_string(rows) + "x" + std::to_string(cols);
}

// A static function computing one rows x cols block of C at (i0, j0) for the k block
// [k0, k1): it starts from zero on the first k block and from C otherwise, and applies the
// epilogue after the last one. Constant trip counts let the compiler keep the block in
// registers (the i loop unrolled, the j loop vectorized).
void EmitBlock(std::ostringstream& out, const GemmWorkload& gemm, const GemmConfig& config,
               std::string_view func_name, int64_t rows, int64_t cols) {
  const bool bias = HasBias(gemm.epilogue);
  const std::string r = std::to_string(rows);
  const std::string c = std::to_string(cols);
  const std::string n = std::to_string(gemm.n);
  const std::string k = std::to_string(gemm.k);
  out << "static inline void " << BlockName(func_name, rows, cols)
      << "(const float* restrict A, const float* restrict B,\n"
      << "    " << (bias ? "const float* restrict bias, " : "") << "float* restrict C,\n"
      << "    int64_t i0, int64_t j0, int64_t k0, int64_t k1) {\n"
      << "  float acc[" << r << "][" << c << "];\n"
      << "  if (k0 == 0) {\n"
      << "    for (int i = 0; i < " << r << "; ++i)\n"
      << "      for (int j = 0; j < " << c << "; ++j) acc[i][j] = 0.0f;\n"
      << "  } else {\n"
      << "    for (int i = 0; i < " << r << "; ++i)\n"
      << "      for (int j = 0; j < " << c << "; ++j) acc[i][j] = C[(i0 + i) * " << n
      << " + j0 + j];\n"
      << "  }\n";
  if (config.unroll) {
    out << "#pragma GCC unroll 4\n";
  }
  out << "  for (int64_t k = k0; k < k1; ++k) {\n"
      << "    const float* restrict b = B + k * " << n << " + j0;\n"
      << "    for (int i = 0; i < " << r << "; ++i) {\n"
      << "      const float a = A[(i0 + i) * " << k << " + k];\n"
      << "      for (int j = 0; j < " << c << "; ++j) acc[i][j] += a * b[j];\n"
      << "    }\n"
      << "  }\n";
  if (gemm.epilogue != Epilogue::kNone) {
    out << "  if (k1 == " << k << ") {\n"
        << "    for (int i = 0; i < " << r << "; ++i)\n"
        << "      for (int j = 0; j < " << c << "; ++j) {\n";
    if (bias) {
      out << "        acc[i][j] += bias[j0 + j];\n";
    }
    if (HasRelu(gemm.epilogue)) {
      out << "        acc[i][j] = acc[i][j] > 0.0f ? acc[i][j] : 0.0f;\n";
    }
    out << "      }\n"
        << "  }\n";
  }
  out << "  for (int i = 0; i < " << r << "; ++i)\n"
      << "    for (int j = 0; j < " << c << "; ++j) C[(i0 + i) * " << n
      << " + j0 + j] = acc[i][j];\n"
      << "}\n\n";
}

// The calls for the rows [row_begin, row_end) of C, in blocks of `rows` rows: full blocks of
// nb columns, then the remaining columns.
void EmitRowBlocks(std::ostringstream& out, const GemmWorkload& gemm, const GemmConfig& config,
                   std::string_view func_name, int64_t row_begin, int64_t row_end, int64_t rows) {
  const std::string args = HasBias(gemm.epilogue) ? "A, B, bias, C, " : "A, B, C, ";
  const int64_t full_cols = gemm.n / config.nb * config.nb;
  const int64_t tail_cols = gemm.n - full_cols;
  out << "    for (int64_t i0 = " << row_begin << "; i0 < " << row_end << "; i0 += " << rows
      << ") {\n";
  if (full_cols > 0) {
    out << "      for (int64_t j0 = 0; j0 < " << full_cols << "; j0 += " << config.nb << ")\n"
        << "        " << BlockName(func_name, rows, config.nb) << "(" << args
        << "i0, j0, k0, k1);\n";
  }
  if (tail_cols > 0) {
    out << "      " << BlockName(func_name, rows, tail_cols) << "(" << args << "i0, " << full_cols
        << ", k0, k1);\n";
  }
  out << "    }\n";
}

}  // namespace

bool IsCIdentifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
    return false;
  }
  for (char ch : name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    if (!ok) {
      return false;
    }
  }
  return std::find(kCKeywords.begin(), kCKeywords.end(), name) == kCKeywords.end();
}

std::string GemmCSource(const GemmWorkload& gemm, const GemmConfig& config,
                        std::string_view func_name) {
  const int64_t full_rows = gemm.m / config.mb * config.mb;
  const int64_t tail_rows = gemm.m - full_rows;
  const int64_t tail_cols = gemm.n % config.nb;
  std::vector<int64_t> row_counts = {config.mb};
  if (tail_rows > 0) {
    row_counts.push_back(tail_rows);
  }
  std::vector<int64_t> col_counts = {config.nb};
  if (tail_cols > 0) {
    col_counts.push_back(tail_cols);
  }

  std::ostringstream out;
  out << "/* gemm:M=" << gemm.m << ",N=" << gemm.n << ",K=" << gemm.k
      << ",epilogue=" << EpilogueName(gemm.epilogue)
      << " by gemm.cpu.c_codegen v1: mb=" << config.mb << " nb=" << config.nb << " kb=" << config.kb
      << " unroll=" << (config.unroll ? 1 : 0) << " */\n"
      << "#include <stdint.h>\n\n";
  for (int64_t rows : row_counts) {
    for (int64_t cols : col_counts) {
      EmitBlock(out, gemm, config, func_name, rows, cols);
    }
  }
  const bool bias = HasBias(gemm.epilogue);
  out << "int32_t " << func_name << "(float* restrict A, float* restrict B, "
      << (bias ? "float* restrict bias, " : "") << "float* restrict C) {\n"
      << "  for (int64_t k0 = 0; k0 < " << gemm.k << "; k0 += " << config.kb << ") {\n"
      << "    const int64_t k1 = k0 + " << config.kb << " < " << gemm.k << " ? k0 + " << config.kb
      << " : " << gemm.k << ";\n";
  if (full_rows > 0) {
    EmitRowBlocks(out, gemm, config, func_name, 0, full_rows, config.mb);
  }
  if (tail_rows > 0) {
    EmitRowBlocks(out, gemm, config, func_name, full_rows, gemm.m, tail_rows);
  }
  out << "  }\n"
      << "  return 0;\n"
      << "}\n";
  return out.str();
}

}  // namespace c_codegen_plugin

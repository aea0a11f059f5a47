#include "common/extern_kernels.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

#include "common/files.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::string_view kForm =
    R"({"name", "library", "symbol", "role": "gemm_block", "mr", "nr", "a_packing": "kc_by_mr", )"
    R"("b_packing": "kc_by_nr", "isa": "avx2"|"avx512f", "signature"})";

// The role's C signature with the names left out: return type and parameter types.
constexpr std::string_view kGemmBlockSignature =
    "void(int64_t,const float*,const float*,float*,int64_t,int32_t)";

absl::Status Bad(const std::string& path, std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("extern kernel manifest ", path, ": \"", field, "\" ",
                                           what, "; a manifest has the form ", kForm));
}

absl::StatusOr<std::string> StringField(const Json& j, const std::string& path, const char* key) {
  if (!j.contains(key)) {
    return Bad(path, key, "is missing");
  }
  if (!j.at(key).is_string() || j.at(key).get<std::string>().empty()) {
    return Bad(path, key, "is not a non-empty string");
  }
  return j.at(key).get<std::string>();
}

absl::StatusOr<int> BlockField(const Json& j, const std::string& path, const char* key) {
  if (!j.contains(key)) {
    return Bad(path, key, "is missing");
  }
  if (!j.at(key).is_number_integer() || j.at(key).get<int64_t>() < 1 ||
      j.at(key).get<int64_t>() > 64) {
    return Bad(path, key, "is not an integer in [1, 64]");
  }
  return static_cast<int>(j.at(key).get<int64_t>());
}

bool IsLibName(std::string_view name) {
  if (name.empty() || !std::islower(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// "void f(int64_t kc, const float* a)" -> "void(int64_t,const float*)": the types only, one
// space between words, none around punctuation. Empty when it is not a prototype of `symbol`.
std::string NormalizedSignature(std::string_view text, std::string_view symbol) {
  std::string flat;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!flat.empty() && flat.back() != ' ') {
        flat += ' ';
      }
    } else {
      flat += c;
    }
  }
  const size_t open = flat.find('(');
  const size_t close = flat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return "";
  }
  std::string head(flat.substr(0, open));
  while (!head.empty() && head.back() == ' ') {
    head.pop_back();
  }
  if (!head.ends_with(symbol)) {
    return "";
  }
  head.resize(head.size() - symbol.size());
  while (!head.empty() && head.back() == ' ') {
    head.pop_back();
  }
  std::string out = head + "(";
  std::vector<std::string_view> params =
      Split(std::string_view(flat).substr(open + 1, close - open - 1), ',');
  for (size_t i = 0; i < params.size(); ++i) {
    std::string p(params[i]);
    // Drop the parameter's name: the last identifier after the type.
    while (!p.empty() && p.back() == ' ') {
      p.pop_back();
    }
    size_t end = p.size();
    while (end > 0 && (std::isalnum(static_cast<unsigned char>(p[end - 1])) || p[end - 1] == '_')) {
      --end;
    }
    std::string type = p.substr(0, end);
    if (type.empty() || type.find_first_not_of(' ') == std::string::npos) {
      type = p;  // no name given
    }
    std::string compact;
    for (char c : type) {
      if (c == ' ' && (compact.empty() || compact.back() == '*' || compact.back() == ' ')) {
        continue;
      }
      if (c == '*' && !compact.empty() && compact.back() == ' ') {
        compact.pop_back();
      }
      compact += c;
    }
    while (!compact.empty() && compact.back() == ' ') {
      compact.pop_back();
    }
    while (!compact.empty() && compact.front() == ' ') {
      compact.erase(compact.begin());
    }
    StrAppend(&out, i == 0 ? "" : ",", compact);
  }
  return out + ")";
}

}  // namespace

absl::StatusOr<bool> ElfDefinesSymbol(const std::string& path, std::string_view symbol) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InvalidArgumentError(StrCat(path, ": ", std::strerror(errno)));
  }
  struct stat st{};
  if (fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
    close(fd);
    return absl::InvalidArgumentError(StrCat(path, ": not a 64-bit ELF shared object (too small)"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    return absl::InvalidArgumentError(StrCat(path, ": cannot map: ", std::strerror(errno)));
  }
  const auto* bytes = static_cast<const unsigned char*>(map);
  auto done = [&](absl::StatusOr<bool> result) {
    munmap(map, size);
    return result;
  };
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(bytes);
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_type != ET_DYN) {
    return done(absl::InvalidArgumentError(StrCat(path, ": not a 64-bit ELF shared object")));
  }
  // Offsets and sizes are the file's word: check that each range lies inside the file without
  // overflowing, and that each table is aligned as ELF requires (reading a misaligned one is
  // undefined behaviour).
  auto inside = [size](uint64_t offset, uint64_t length) {
    return offset <= size && length <= size - offset;
  };
  if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
      eh->e_shoff % alignof(Elf64_Shdr) != 0 ||
      !inside(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr))) {
    return done(absl::InvalidArgumentError(StrCat(path, ": malformed ELF section table")));
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(bytes + eh->e_shoff);
  for (int s = 0; s < eh->e_shnum; ++s) {
    const Elf64_Shdr& sh = sections[s];
    if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh->e_shnum) {
      continue;
    }
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    if (!inside(sh.sh_offset, sh.sh_size) || !inside(strtab.sh_offset, strtab.sh_size) ||
        sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_offset % alignof(Elf64_Sym) != 0) {
      return done(absl::InvalidArgumentError(StrCat(path, ": malformed ELF symbol table")));
    }
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(bytes + sh.sh_offset);
    const char* names = reinterpret_cast<const char*>(bytes + strtab.sh_offset);
    for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); ++i) {
      if (syms[i].st_name >= strtab.sh_size || syms[i].st_shndx == SHN_UNDEF ||
          ELF64_ST_TYPE(syms[i].st_info) != STT_FUNC) {
        continue;
      }
      const char* name = names + syms[i].st_name;
      if (std::string_view(name, strnlen(name, strtab.sh_size - syms[i].st_name)) == symbol) {
        return done(true);
      }
    }
  }
  return done(false);
}

absl::StatusOr<ExternKernel> LoadExternKernel(const std::string& manifest_path) {
  absl::StatusOr<std::string> text =
      ReadTrustedFile(manifest_path, "extern kernel manifest", kCodeFileRule);
  if (absl::IsFailedPrecondition(text.status())) {
    return text.status();
  }
  if (!text.ok()) {
    return absl::InvalidArgumentError(text.status().message());
  }
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(StrCat("extern kernel manifest ", manifest_path,
                                             ": not a JSON object; a manifest has the form ",
                                             kForm));
  }
  static constexpr const char* kKeys[] = {"name", "library",   "symbol",    "role", "mr",
                                          "nr",   "a_packing", "b_packing", "isa",  "signature"};
  for (const auto& [key, value] : j.items()) {
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) ==
        std::end(kKeys)) {
      return Bad(manifest_path, key, "is not a manifest field");
    }
  }
  ExternKernel k;
  k.manifest_path = manifest_path;
  ASSIGN_OR_RETURN(k.name, StringField(j, manifest_path, "name"));
  if (!IsLibName(k.name)) {
    return Bad(manifest_path, "name", StrCat("'", k.name, "' is not of the form [a-z][a-z0-9_]*"));
  }
  if (FindRuntimeLibrary(k.name) != nullptr) {
    return Bad(manifest_path, "name",
               StrCat("'", k.name, "' is the name of a library tune has a shim for"));
  }
  ASSIGN_OR_RETURN(std::string library, StringField(j, manifest_path, "library"));
  ASSIGN_OR_RETURN(k.symbol, StringField(j, manifest_path, "symbol"));
  ASSIGN_OR_RETURN(std::string role, StringField(j, manifest_path, "role"));
  if (role != "gemm_block") {
    return Bad(manifest_path, "role", StrCat("'", role, "' is unknown (accepted: gemm_block)"));
  }
  ASSIGN_OR_RETURN(k.mr, BlockField(j, manifest_path, "mr"));
  ASSIGN_OR_RETURN(k.nr, BlockField(j, manifest_path, "nr"));
  ASSIGN_OR_RETURN(std::string a_packing, StringField(j, manifest_path, "a_packing"));
  if (a_packing != "kc_by_mr") {
    return Bad(manifest_path, "a_packing",
               StrCat("'", a_packing, "' is unknown (accepted: kc_by_mr, a[p*mr + i])"));
  }
  ASSIGN_OR_RETURN(std::string b_packing, StringField(j, manifest_path, "b_packing"));
  if (b_packing != "kc_by_nr") {
    return Bad(manifest_path, "b_packing",
               StrCat("'", b_packing, "' is unknown (accepted: kc_by_nr, b[p*nr + j])"));
  }
  ASSIGN_OR_RETURN(k.isa, StringField(j, manifest_path, "isa"));
  if (k.isa != "avx2" && k.isa != "avx512f") {
    return Bad(manifest_path, "isa", StrCat("'", k.isa, "' is unknown (accepted: avx2, avx512f)"));
  }
  ASSIGN_OR_RETURN(std::string signature, StringField(j, manifest_path, "signature"));
  if (NormalizedSignature(signature, k.symbol) != kGemmBlockSignature) {
    return Bad(manifest_path, "signature",
               StrCat("'", signature, "' is not the gemm_block signature: void ", k.symbol,
                      "(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, "
                      "int32_t accumulate)"));
  }
  fs::path lib_path(library);
  if (lib_path.is_relative()) {
    lib_path = fs::absolute(fs::path(manifest_path)).parent_path() / lib_path;
  }
  k.library_path = lib_path.lexically_normal().string();
  k.library_file = lib_path.filename().string();
  if (absl::Status trusted =
          CheckTrustedPath(k.library_path, "extern kernel library", kCodeFileRule);
      absl::IsFailedPrecondition(trusted)) {
    return trusted;
  }
  absl::StatusOr<bool> defined = ElfDefinesSymbol(k.library_path, k.symbol);
  if (!defined.ok()) {
    return Bad(manifest_path, "library", std::string(defined.status().message()));
  }
  if (!*defined) {
    return Bad(manifest_path, "symbol",
               StrCat("'", k.symbol, "' is not a function that ", k.library_path, " exports"));
  }
  return k;
}

absl::StatusOr<std::vector<ExternKernel>> LoadExternKernels(
    const std::vector<std::string>& manifest_paths) {
  std::vector<ExternKernel> kernels;
  for (const std::string& path : manifest_paths) {
    ASSIGN_OR_RETURN(ExternKernel k, LoadExternKernel(path));
    for (const ExternKernel& other : kernels) {
      if (other.name == k.name) {
        return absl::InvalidArgumentError(StrCat("extern kernel '", k.name, "' is defined by both ",
                                                 other.manifest_path, " and ", path));
      }
    }
    kernels.push_back(std::move(k));
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const ExternKernel& a, const ExternKernel& b) { return a.name < b.name; });
  return kernels;
}

}  // namespace tune

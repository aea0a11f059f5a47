#include "common/artifact_hash.h"

#include <openssl/evp.h>

#include "common/status.h"
#include "fmt/format.h"

namespace tune {

std::string_view CodeFormatName(CodeFormat format) {
  switch (format) {
    case CodeFormat::kSharedObject:
      return "ARTIFACT_FORMAT_SHARED_OBJECT";
    case CodeFormat::kPtx:
      return "ARTIFACT_FORMAT_PTX";
    case CodeFormat::kHsaco:
      return "ARTIFACT_FORMAT_HSACO";
  }
  return "ARTIFACT_FORMAT_UNSPECIFIED";
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  TUNE_CHECK(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) == 1)
      << "SHA-256 failed";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += fmt::format("{:02x}", digest[i]);
  }
  return hex;
}

std::string ArtifactHash(CodeFormat format, std::string_view code) {
  std::string input(CodeFormatName(format));
  input.push_back('\0');
  input.append(code);
  return Sha256Hex(input);
}

bool IsArtifactHash(std::string_view hash) {
  if (hash.size() != 64) {
    return false;
  }
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

}  // namespace tune

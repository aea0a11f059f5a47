// Tokens for the e2e suites that turn authentication on: minted locally with `tune-daemon token
// create`, as an operator does, and written to files for --token-file.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/files.h"
#include "tests/e2e/harness.h"

namespace tune::testing {

/// `tune-daemon token create` on `db`; the token's text (a failure is a test failure).
inline std::string CreateToken(const std::string& db, const std::string& name,
                               const std::string& role) {
  CommandResult r = RunCommand(
      {Binaries::Daemon(), "token", "create", "--db", db, "--name", name, "--role", role});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string text = r.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

/// A file in `dir` holding `token`, for --token-file.
inline std::string TokenFile(const TempDir& dir, const std::string& name,
                             const std::string& token) {
  std::string path = dir.File(name);
  EXPECT_TRUE(WriteFileAtomically(path, token + "\n").ok());
  return path;
}

}  // namespace tune::testing

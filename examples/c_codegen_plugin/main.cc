// tune-c-codegen-plugin: a codegen plugin for tune (proto/tune/v1/plugin.proto) that generates
// plain C for GEMMs and compiles it with the system C compiler. tune runs it once per request:
// one PluginRequest (binary protobuf) on stdin, one PluginResponse on stdout, exit 0. Every
// problem with a request is answered with PluginResponse.error; only failing to read stdin or
// to write stdout exits non-zero. Diagnostics go to stderr.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "c_compiler.h"
#include "gemm_c_source.h"
#include "gemm_space.h"
#include "tune/v1/plugin.pb.h"
#include "workload_text.h"

namespace c_codegen_plugin {
namespace {

constexpr std::string_view kFamily = "gemm.cpu.c_codegen";
constexpr int32_t kFamilyVersion = 1;

tune::v1::PluginResponse Error(std::string message) {
  tune::v1::PluginResponse response;
  response.set_error(std::move(message));
  return response;
}

bool ReadAll(int fd, std::string* data) {
  char buffer[1 << 16];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n == 0) {
      return true;
    }
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    data->append(buffer, static_cast<size_t>(n));
  }
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// TEST HOOK, for tune's fault tests only: TUNE_C_CODEGEN_PLUGIN_FAULT makes every build request
// fail the way a broken plugin would: `crash` aborts (SIGABRT), `hang` never answers, `garbage`
// writes bytes that are not a PluginResponse and exits 0, `fail_build` answers with an error.
// Unset (the normal case) or any other value, builds are untouched and this returns nullopt.
std::optional<tune::v1::PluginResponse> BuildFaultTestHook() {
  const char* fault = std::getenv("TUNE_C_CODEGEN_PLUGIN_FAULT");
  if (fault == nullptr || *fault == '\0') {
    return std::nullopt;
  }
  const std::string_view what = fault;
  if (what == "crash" || what == "hang" || what == "garbage" || what == "fail_build") {
    std::fprintf(stderr, "tune-c-codegen-plugin: test hook TUNE_C_CODEGEN_PLUGIN_FAULT=%s\n",
                 fault);
  }
  if (what == "crash") {
    std::abort();
  }
  if (what == "hang") {
    while (true) {
      pause();
    }
  }
  if (what == "garbage") {
    std::exit(WriteAll(STDOUT_FILENO, "this is not a protobuf message") ? 0 : 1);
  }
  if (what == "fail_build") {
    return Error("deliberate build failure");
  }
  return std::nullopt;
}

tune::v1::PluginResponse Describe() {
  tune::v1::PluginResponse response;
  tune::v1::PluginFamily* family = response.mutable_description()->add_families();
  family->set_name(std::string(kFamily));
  family->set_version(kFamilyVersion);
  family->set_op("gemm");
  family->set_target_kind("llvm");
  return response;
}

std::string CheckFamily(const std::string& family) {
  if (family != kFamily) {
    return "unknown family '" + family + "' (this plugin has " + std::string(kFamily) + ")";
  }
  return "";
}

tune::v1::PluginResponse Space(const tune::v1::SpaceRequest& request) {
  if (std::string error = CheckFamily(request.family()); !error.empty()) {
    return Error(error);
  }
  Parsed<GemmWorkload> gemm = ParseWorkload(request.workload());
  Parsed<int64_t> threads = ParseTarget(request.target());
  if (!gemm.value && !gemm.refused) {
    return Error("malformed workload: " + gemm.why);
  }
  if (!threads.value && !threads.refused) {
    return Error("malformed target: " + threads.why);
  }
  tune::v1::PluginResponse response;
  tune::v1::SpaceReply* space = response.mutable_space();
  if (gemm.refused || threads.refused) {
    space->set_supported(false);
    space->set_why(gemm.refused ? gemm.why : threads.why);
    return response;
  }
  space->set_supported(true);
  std::vector<Knob> knobs = GemmKnobs(*gemm.value);
  for (const Knob& knob : knobs) {
    tune::v1::PluginKnob* out = space->add_knobs();
    out->set_name(knob.name);
    out->set_doc(knob.doc);
    for (int64_t v : knob.values) {
      out->add_values(v);
    }
  }
  for (const auto& [name, value] : DefaultConfig(knobs)) {
    (*space->mutable_default_config())[name] = value;
  }
  return response;
}

tune::v1::PluginResponse Build(const tune::v1::BuildRequest& request) {
  if (std::optional<tune::v1::PluginResponse> fault = BuildFaultTestHook()) {
    return *fault;
  }
  if (std::string error = CheckFamily(request.family()); !error.empty()) {
    return Error(error);
  }
  Parsed<GemmWorkload> gemm = ParseWorkload(request.workload());
  if (!gemm.value) {
    return Error("cannot build workload: " + gemm.why);
  }
  if (Parsed<int64_t> threads = ParseTarget(request.target()); !threads.value) {
    return Error("cannot build for target: " + threads.why);
  }
  if (!IsCIdentifier(request.func_name())) {
    return Error("func_name '" + request.func_name() + "' is not a C identifier");
  }
  std::map<std::string, int64_t> config(request.config().begin(), request.config().end());
  std::string error;
  std::optional<GemmConfig> checked = CheckConfig(GemmKnobs(*gemm.value), config, &error);
  if (!checked) {
    return Error("invalid config: " + error);
  }
  std::optional<std::string> object =
      CompileC(GemmCSource(*gemm.value, *checked, request.func_name()), &error);
  if (!object) {
    return Error(error);
  }
  tune::v1::PluginResponse response;
  response.mutable_build()->set_object(std::move(*object));
  return response;
}

tune::v1::PluginResponse Answer(const std::string& input) {
  tune::v1::PluginRequest request;
  if (!request.ParseFromString(input)) {
    return Error("stdin is not a tune.v1.PluginRequest (" + std::to_string(input.size()) +
                 " bytes)");
  }
  switch (request.kind_case()) {
    case tune::v1::PluginRequest::kDescribe:
      return Describe();
    case tune::v1::PluginRequest::kSpace:
      return Space(request.space());
    case tune::v1::PluginRequest::kBuild:
      return Build(request.build());
    case tune::v1::PluginRequest::KIND_NOT_SET:
      break;
  }
  return Error("PluginRequest has no kind (describe, space or build)");
}

}  // namespace
}  // namespace c_codegen_plugin

int main() {
  // A closed stdout is an error from write(), not a silent death.
  std::signal(SIGPIPE, SIG_IGN);
  std::string input;
  if (!c_codegen_plugin::ReadAll(STDIN_FILENO, &input)) {
    std::fprintf(stderr, "tune-c-codegen-plugin: cannot read stdin: %s\n", std::strerror(errno));
    return 1;
  }
  tune::v1::PluginResponse response = c_codegen_plugin::Answer(input);
  if (!response.error().empty()) {
    std::fprintf(stderr, "tune-c-codegen-plugin: %s\n", response.error().c_str());
  }
  std::string output;
  if (!response.SerializeToString(&output) || !c_codegen_plugin::WriteAll(STDOUT_FILENO, output)) {
    std::fprintf(stderr, "tune-c-codegen-plugin: cannot write stdout: %s\n", std::strerror(errno));
    return 1;
  }
  return 0;
}

#include "codegen/plugins/plugin.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

#include "codegen/plugins/plugin_reply.h"
#include "codegen/templates/template_util.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "common/version.h"
#include "tune/v1/plugin.pb.h"

namespace tune {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `path` once with `request` on its stdin and returns its PluginResponse. Every failure is
// InvalidArgument naming the plugin: it could not start, wrote garbage, exited non-zero or by a
// signal, ran past `deadline`, or answered with an error.
absl::StatusOr<v1::PluginResponse> RunPlugin(const std::string& path,
                                             const v1::PluginRequest& request,
                                             std::chrono::milliseconds deadline) {
  static std::once_flag ignore_sigpipe;  // a plugin that exits early must not kill us
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  auto failed = [&path](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("codegen plugin ", path, ": ", what));
  };
  SpawnOptions spawn;
  spawn.argv = {path};
  spawn.new_process_group = true;
  spawn.default_signals = {SIGPIPE, SIGINT, SIGTERM, SIGHUP};
  spawn.close_other_fds = true;
  spawn.parent_death_signal = SIGKILL;
  absl::StatusOr<PipedChild> child = SpawnPiped(spawn, /*request_fd=*/0, /*reply_fd=*/1);
  if (!child.ok()) {
    return failed(StrCat("cannot run it: ", child.status().message()));
  }
  std::string bytes;
  request.SerializeToString(&bytes);
  // Requests are small (far below a pipe's buffer): written at once, then stdin is closed.
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = write(child->to_child, bytes.data() + done, bytes.size() - done);
    if (n <= 0 && errno != EINTR) {
      break;  // it exited or closed its stdin: its exit status says more
    }
    done += n > 0 ? static_cast<size_t>(n) : 0;
  }
  close(child->to_child);

  std::string out;
  const Clock::time_point until = Clock::now() + deadline;
  bool timed_out = false;
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{child->from_child, POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      continue;
    }
    char buf[65536];
    ssize_t n = read(child->from_child, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;  // end of file
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(child->from_child);
  if (timed_out) {
    KillProcessGroup(child->pid, SIGKILL);
    Reap(child->pid);
    return failed(StrCat("did not answer within ", deadline.count(), " ms; killed"));
  }
  std::optional<int> status = ReapWithin(child->pid, std::chrono::seconds(10));
  if (!status) {
    KillProcessGroup(child->pid, SIGKILL);
    Reap(child->pid);
    return failed("closed its output but did not exit; killed");
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return failed(StrCat("failed: ", DescribeWaitStatus(*status)));
  }
  return ParsePluginResponse(path, out);
}

// One installed plugin family: the KernelTemplate tune uses, and the cache of its spaces.
struct Family {
  std::string plugin_path;
  std::string name;
  KernelTemplate tpl{};
  std::mutex mu;
  // (workload, target) -> the plugin's reply; a failed query is cached as unsupported.
  std::map<std::pair<std::string, std::string>, v1::SpaceReply> spaces;

  v1::SpaceReply SpaceOf(const Workload& workload, const Target& target) {
    const auto key = std::make_pair(workload.ToString(), target.ToString());
    {
      std::lock_guard lock(mu);
      if (auto it = spaces.find(key); it != spaces.end()) {
        return it->second;
      }
    }
    v1::PluginRequest request;
    request.set_tune_version(std::string(kTuneVersion));
    request.mutable_space()->set_family(name);
    request.mutable_space()->set_workload(key.first);
    request.mutable_space()->set_target(key.second);
    absl::StatusOr<v1::PluginResponse> response =
        RunPlugin(plugin_path, request, kPluginDescribeDeadline);
    v1::SpaceReply reply;
    if (!response.ok()) {
      reply.set_why(std::string(response.status().message()));
    } else if (!response->has_space()) {
      reply.set_why(StrCat("codegen plugin ", plugin_path, " answered a space request for ", name,
                           " with something else"));
    } else if (absl::Status valid = CheckSpaceReply(response->space()); !valid.ok()) {
      // A space tune cannot search (a repeated knob, no candidates, a default outside them):
      // the family does not apply, as if the plugin had said so.
      reply.set_why(StrCat("codegen plugin ", plugin_path, " answered a space request for ", name,
                           " with a space that is not valid: ", valid.message()));
      Logger("codegen")->warn("{} for {}: {}", name, key.first, reply.why());
    } else {
      reply = response->space();
    }
    if (!reply.supported() && !reply.why().empty() && !response.ok()) {
      Logger("codegen")->warn("{} for {}: {}", name, key.first, reply.why());
    }
    std::lock_guard lock(mu);
    return spaces.emplace(key, std::move(reply)).first->second;
  }

  ConfigSpace Space(const Workload& workload, const Target& target) {
    return SpaceOfReply(SpaceOf(workload, target));
  }

  Config Default(const Workload& workload, const Target& target) {
    return DefaultOfReply(SpaceOf(workload, target));
  }

  absl::StatusOr<std::string> Build(const Workload& workload, const Target& target,
                                    const Config& config, std::string_view func_name) {
    RETURN_IF_ERROR(CheckBuildRequest(tpl, workload, target, config));
    v1::PluginRequest request;
    request.set_tune_version(std::string(kTuneVersion));
    v1::BuildRequest* build = request.mutable_build();
    build->set_family(name);
    build->set_workload(workload.ToString());
    build->set_target(target.ToString());
    for (const auto& [knob, value] : config) {
      (*build->mutable_config())[knob] = value;
    }
    build->set_func_name(std::string(func_name));
    ASSIGN_OR_RETURN(v1::PluginResponse response,
                     RunPlugin(plugin_path, request, kPluginBuildDeadline));
    if (!response.has_build() || response.build().object().empty()) {
      return absl::InvalidArgumentError(StrCat("codegen plugin ", plugin_path, " built ", name, " ",
                                               ConfigToString(config),
                                               " without returning an object"));
    }
    return response.build().object();
  }
};

}  // namespace

absl::StatusOr<v1::PluginResponse> ParsePluginResponse(std::string_view plugin,
                                                       std::string_view bytes) {
  v1::PluginResponse response;
  if (!response.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        StrCat("codegen plugin ", plugin, ": wrote ", bytes.size(),
               " bytes that are not a tune.v1.PluginResponse (proto/tune/v1/plugin.proto)"));
  }
  if (!response.error().empty()) {
    return absl::InvalidArgumentError(StrCat("codegen plugin ", plugin, ": ", response.error()));
  }
  return response;
}

absl::StatusOr<OpKind> CheckPluginFamily(const v1::PluginFamily& f) {
  if (f.name().empty() || f.name().find_first_of(" \t\n,") != std::string::npos) {
    return absl::InvalidArgumentError(
        "the name must be a non-empty word, e.g. gemm.cpu.my_codegen");
  }
  OpKind op;
  if (f.op() == "gemm") {
    op = OpKind::kGemm;
  } else if (f.op() == "conv2d") {
    op = OpKind::kConv2d;
  } else {
    return absl::InvalidArgumentError(
        StrCat("op '", f.op(), "' is unknown (accepted: gemm, conv2d)"));
  }
  if (f.target_kind() != "llvm") {
    return absl::InvalidArgumentError(
        StrCat("target kind '", f.target_kind(), "' is unknown (accepted: llvm)"));
  }
  if (f.version() < 1) {
    return absl::InvalidArgumentError("version must be >= 1");
  }
  return op;
}

absl::Status CheckSpaceReply(const v1::SpaceReply& reply) {
  if (!reply.supported()) {
    return absl::OkStatus();
  }
  std::set<std::string_view> names;
  for (const v1::PluginKnob& knob : reply.knobs()) {
    if (knob.name().empty()) {
      return absl::InvalidArgumentError("a knob has no name");
    }
    if (!names.insert(knob.name()).second) {
      return absl::InvalidArgumentError(StrCat("knob '", knob.name(), "' is listed twice"));
    }
    if (knob.values().empty()) {
      return absl::InvalidArgumentError(StrCat("knob '", knob.name(), "' has no values"));
    }
    std::set<int64_t> values(knob.values().begin(), knob.values().end());
    if (values.size() != static_cast<size_t>(knob.values_size())) {
      return absl::InvalidArgumentError(StrCat("knob '", knob.name(), "' lists a value twice"));
    }
    auto given = reply.default_config().find(knob.name());
    if (given != reply.default_config().end() && values.count(given->second) == 0) {
      return absl::InvalidArgumentError(StrCat("the default of knob '", knob.name(), "', ",
                                               given->second, ", is not one of its values"));
    }
  }
  return absl::OkStatus();
}

ConfigSpace SpaceOfReply(const v1::SpaceReply& reply) {
  ConfigSpace space;
  if (reply.supported()) {
    for (const v1::PluginKnob& knob : reply.knobs()) {
      space.AddKnob(knob.name(), {knob.values().begin(), knob.values().end()}, knob.doc());
    }
  }
  return space;
}

Config DefaultOfReply(const v1::SpaceReply& reply) {
  Config config;
  for (const v1::PluginKnob& knob : reply.knobs()) {
    auto it = reply.default_config().find(knob.name());
    config[knob.name()] = it != reply.default_config().end() ? it->second
                          : knob.values().empty()            ? 0
                                                             : knob.values(0);
  }
  return config;
}

absl::StatusOr<Catalog> WithCodegenPlugins(const Catalog& base,
                                           const std::vector<std::string>& plugin_paths) {
  std::vector<std::shared_ptr<Family>> families;
  for (const std::string& path : plugin_paths) {
    if (access(path.c_str(), X_OK) != 0) {
      return absl::InvalidArgumentError(
          StrCat("codegen plugin ", path, ": not an executable file (", std::strerror(errno), ")"));
    }
    RETURN_IF_ERROR(CheckTrustedPath(path, "codegen plugin", kCodeFileRule));
    v1::PluginRequest request;
    request.set_tune_version(std::string(kTuneVersion));
    request.mutable_describe();
    ASSIGN_OR_RETURN(v1::PluginResponse response,
                     RunPlugin(path, request, kPluginDescribeDeadline));
    if (!response.has_description()) {
      return absl::InvalidArgumentError(
          StrCat("codegen plugin ", path, ": answered describe with something else"));
    }
    for (const v1::PluginFamily& f : response.description().families()) {
      auto bad = [&](std::string_view what) {
        return absl::InvalidArgumentError(
            StrCat("codegen plugin ", path, ": family '", f.name(), "': ", what));
      };
      absl::StatusOr<OpKind> op = CheckPluginFamily(f);
      if (!op.ok()) {
        return bad(std::string(op.status().message()));
      }
      // A name taken by another template is Catalog::WithFamilies' to refuse (below).
      auto family = std::make_shared<Family>();
      family->plugin_path = path;
      family->name = f.name();
      Family* raw = family.get();
      family->tpl.name = family->name;
      family->tpl.version = f.version();
      family->tpl.op = *op;
      family->tpl.targets = TemplateTargets::kLlvm;
      family->tpl.space = [raw](const Workload& w, const Target& t) { return raw->Space(w, t); };
      family->tpl.default_config = [raw](const Workload& w, const Target& t) {
        return raw->Default(w, t);
      };
      family->tpl.build_object = [raw](const Workload& w, const Target& t, const Config& c,
                                       std::string_view func_name) {
        return raw->Build(w, t, c, func_name);
      };
      family->tpl.applies = [raw](const Workload& w, const Target& t) {
        return raw->SpaceOf(w, t).supported();
      };
      families.push_back(std::move(family));
    }
  }
  std::vector<CatalogFamily> added;
  for (std::shared_ptr<Family>& family : families) {
    // The template shares the family's life: its functions call the family.
    const std::string source = family->plugin_path;
    const KernelTemplate* tpl = &family->tpl;
    added.push_back(
        CatalogFamily{std::shared_ptr<const KernelTemplate>(std::move(family), tpl), source});
  }
  return base.WithFamilies(std::move(added));
}

absl::StatusOr<Catalog> LoadCatalog(const CatalogSources& sources) {
  ASSIGN_OR_RETURN(std::vector<ExternKernel> kernels,
                   LoadExternKernels(sources.extern_kernel_manifests));
  const Catalog base =
      Catalog().WithExternKernels(std::move(kernels)).WithTemplates(sources.extra_templates);
  return WithCodegenPlugins(base, sources.codegen_plugins);
}

}  // namespace tune

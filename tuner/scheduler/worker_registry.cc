#include "tuner/scheduler/worker_registry.h"

#include <algorithm>

#include "common/strings.h"

namespace tune::tuner {
namespace {

bool Preloaded(const WorkerEntry& worker, const std::string& lib) {
  for (const std::string& have : worker.preloaded) {
    if (have == lib || have.starts_with(StrCat("lib", lib, ".so"))) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool MeasuresDtype(const WorkerEntry& worker, Dtype dtype) {
  const auto& dtypes = worker.reg.capabilities().dtypes();
  if (dtypes.empty()) {
    return dtype == Dtype::kF32;
  }
  return std::find(dtypes.begin(), dtypes.end(), DtypeName(dtype)) != dtypes.end();
}

bool CanRun(const WorkerEntry& worker, const WorkerNeeds& needs) {
  if (worker.reg.device_key() != needs.device_key || worker.threads < needs.threads ||
      !MeasuresDtype(worker, needs.dtype) ||
      (!needs.fingerprint.empty() &&
       worker.reg.capabilities().device_fingerprint() != needs.fingerprint)) {
    return false;
  }
  const auto& features = worker.reg.capabilities().features();
  return std::all_of(needs.needed_libs.begin(), needs.needed_libs.end(),
                     [&](const std::string& lib) { return Preloaded(worker, lib); }) &&
         std::all_of(needs.features.begin(), needs.features.end(), [&](const std::string& f) {
           return std::find(features.begin(), features.end(), f) != features.end();
         });
}

v1::WorkerInfo WorkerInfoOf(const WorkerEntry& worker, v1::WorkerState state) {
  v1::WorkerInfo info;
  info.set_worker_id(worker.id);
  info.set_name(worker.reg.name());
  info.set_device_key(worker.reg.device_key());
  *info.mutable_capabilities() = worker.reg.capabilities();
  info.set_state(state);
  info.set_in_flight(static_cast<int32_t>(worker.in_flight.size()));
  info.set_trials_done(worker.trials_done);
  info.set_last_heartbeat_ms(worker.last_heartbeat_ms);
  info.set_connected_at_ms(worker.connected_at_ms);
  info.set_peer(worker.peer);
  return info;
}

absl::Status CheckThreadsFitCores(const std::vector<WorkerEntry*>& workers,
                                  const std::string& device_key, int threads) {
  int most = 0;
  for (const WorkerEntry* worker : workers) {
    if (worker->reg.device_key() == device_key) {
      most = std::max(most, worker->reg.capabilities().cores());
    }
  }
  if (most <= 0 || threads <= most) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(StrCat(
      "spec.target: -threads=", threads, " is more than the cores of any connected ", device_key,
      " worker's machine (at most ", most, "); accepted: -threads=1 to -threads=", most));
}

WorkerEntry& WorkerRegistry::Add(const v1::Register& reg, std::string peer,
                                 std::shared_ptr<WorkerChannel> channel, Clock::time_point now,
                                 int64_t now_unix_ms) {
  auto worker = std::make_unique<WorkerEntry>();
  worker->id = StrCat("w", next_id_++);
  worker->reg = reg;
  worker->peer = std::move(peer);
  worker->channel = std::move(channel);
  worker->capacity = std::max(1, reg.capabilities().capacity());
  // A worker that does not say how many threads it offers offers its cores, else one.
  worker->threads = reg.capabilities().threads() > 0 ? reg.capabilities().threads()
                                                     : std::max(1, reg.capabilities().cores());
  for (const v1::PreloadedLibrary& lib : reg.capabilities().preloaded_libraries()) {
    worker->preloaded.insert(lib.basename());
  }
  worker->last_seen = now;
  worker->connected_at_ms = now_unix_ms;
  worker->last_heartbeat_ms = now_unix_ms;
  WorkerEntry& entry = *worker;
  workers_.emplace(entry.id, std::move(worker));
  return entry;
}

WorkerEntry* WorkerRegistry::Find(const std::string& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : it->second.get();
}

std::unique_ptr<WorkerEntry> WorkerRegistry::Remove(const std::string& id) {
  auto it = workers_.find(id);
  if (it == workers_.end()) {
    return nullptr;
  }
  std::unique_ptr<WorkerEntry> worker = std::move(it->second);
  workers_.erase(it);
  lost_.push_back(WorkerInfoOf(*worker, v1::WORKER_STATE_LOST));
  if (lost_.size() > kKeptLost) {
    lost_.pop_front();
  }
  return worker;
}

std::vector<std::string> WorkerRegistry::Silent(Clock::time_point now,
                                                Clock::duration deadline) const {
  std::vector<std::string> silent;
  for (const auto& [id, worker] : workers_) {
    if (now - worker->last_seen > deadline) {
      silent.push_back(id);
    }
  }
  return silent;
}

std::vector<WorkerEntry*> WorkerRegistry::ByLoad() {
  std::vector<WorkerEntry*> workers = All();
  std::stable_sort(workers.begin(), workers.end(), [](const WorkerEntry* a, const WorkerEntry* b) {
    if (a->in_flight.size() != b->in_flight.size()) {
      return a->in_flight.size() < b->in_flight.size();
    }
    return a->trials_done < b->trials_done;
  });
  return workers;
}

int WorkerRegistry::Capacity(const WorkerNeeds& needs) const {
  int capacity = 0;
  for (const auto& [id, worker] : workers_) {
    if (CanRun(*worker, needs)) {
      capacity += worker->capacity;
    }
  }
  return capacity;
}

std::vector<v1::WorkerInfo> WorkerRegistry::List(bool include_lost) const {
  std::vector<v1::WorkerInfo> out;
  for (const auto& [id, worker] : workers_) {
    out.push_back(WorkerInfoOf(
        *worker, worker->in_flight.empty() ? v1::WORKER_STATE_IDLE : v1::WORKER_STATE_BUSY));
  }
  if (include_lost) {
    out.insert(out.end(), lost_.begin(), lost_.end());
  }
  std::stable_sort(out.begin(), out.end(), [](const v1::WorkerInfo& a, const v1::WorkerInfo& b) {
    return a.name() < b.name();
  });
  return out;
}

std::vector<WorkerEntry*> WorkerRegistry::All() {
  std::vector<WorkerEntry*> all;
  for (auto& [id, worker] : workers_) {
    all.push_back(worker.get());
  }
  return all;
}

}  // namespace tune::tuner

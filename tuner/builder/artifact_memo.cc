#include "tuner/builder/artifact_memo.h"

#include "common/artifact_hash.h"

namespace tune::tuner {
namespace {

size_t BytesOf(const Artifact& a) { return a.code.size() + a.llvm_ir.size(); }

}  // namespace

std::string ArtifactMemo::Key(const Target& target, const KernelTemplate& tpl,
                              const std::string& lowered_ir) {
  std::string text = target.ToString();
  text += '\0';
  text += tpl.name;
  text += '\0';
  text += std::to_string(tpl.version);
  text += '\0';
  text += lowered_ir;
  return Sha256Hex(text);
}

std::optional<Artifact> ArtifactMemo::Find(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) {
    return std::nullopt;
  }
  entries_.splice(entries_.begin(), entries_, it->second);
  return it->second->second;
}

void ArtifactMemo::Insert(const std::string& key, const Artifact& artifact) {
  if (index_.contains(key) || BytesOf(artifact) > max_bytes_) {
    return;
  }
  entries_.emplace_front(key, artifact);
  index_[key] = entries_.begin();
  bytes_ += BytesOf(artifact);
  while (bytes_ > max_bytes_) {
    bytes_ -= BytesOf(entries_.back().second);
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
}

}  // namespace tune::tuner

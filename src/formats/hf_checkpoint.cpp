#include "formats/hf_checkpoint.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/hf_config.hpp"
#include "model/checkpoint.hpp"
#include "support/atomic_file.hpp"
#include "support/error.hpp"

namespace tilevit::formats {
namespace {

namespace fs = std::filesystem;

std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (!::realpath(path.c_str(), buffer)) return "";
  return buffer;
}

// `name` inside `root` (a real path): no absolute name, no "..", and the resolved file
// (symlinks followed) must still be under root. `what` names the file and field for errors.
std::string inside(const std::string& root, const std::string& name, const std::string& what) {
  const fs::path rel(name);
  if (rel.is_absolute()) throw Error(what + ": \"" + name + "\" is an absolute path; shards must be inside the directory");
  for (const auto& part : rel)
    if (part == "..") throw Error(what + ": \"" + name + "\" leaves the checkpoint directory");
  const std::string joined = root + "/" + name;
  const std::string resolved = real_path(joined);
  if (resolved.empty()) throw Error(what + ": file " + joined + " is missing");
  if (resolved.rfind(root + "/", 0) != 0)
    throw Error(what + ": " + joined + " resolves to " + resolved + ", outside the checkpoint directory");
  return resolved;
}

// The shortest prefix X such that X + anchor is a tensor of the checkpoint.
std::string find_prefix(const std::map<std::string, std::size_t>& names, const std::string& anchor,
                        const std::string& directory) {
  std::string best;
  bool found = false;
  for (const auto& [name, shard] : names)
    if (name.size() >= anchor.size() && name.compare(name.size() - anchor.size(), anchor.size(), anchor) == 0 &&
        (!found || name.size() - anchor.size() < best.size())) {
      best = name.substr(0, name.size() - anchor.size());
      found = true;
    }
  if (!found) throw Error(directory + ": no tensor named *" + anchor + " (the vision tower's patch embedding)");
  return best;
}

}  // namespace

std::unique_ptr<HfCheckpoint> HfCheckpoint::open(const std::string& directory) {
  std::unique_ptr<HfCheckpoint> ck(new HfCheckpoint);
  const std::string root = real_path(directory);
  if (root.empty() || !fs::is_directory(root)) throw Error(directory + ": not a checkpoint directory");
  ck->directory_ = directory;
  const std::string config_file = directory + "/config.json", pre_file = directory + "/preprocessor_config.json";
  ck->config_ = parse_hf_config(read_text_file(inside(root, "config.json", config_file), kMaxConfigBytes), config_file);
  apply_preprocessor_config(read_text_file(inside(root, "preprocessor_config.json", pre_file), kMaxConfigBytes),
                            pre_file, ck->config_);

  const std::string index_file = directory + "/model.safetensors.index.json";
  if (fs::exists(root + "/model.safetensors.index.json")) {
    const auto map = parse_safetensors_index(
        read_text_file(inside(root, "model.safetensors.index.json", index_file), kMaxIndexBytes), index_file);
    std::map<std::string, std::size_t> opened;  // shard name -> index
    for (const auto& [tensor, shard] : map) {
      auto it = opened.find(shard);
      if (it == opened.end()) {
        const std::string path = inside(root, shard, index_file + ": weight_map." + tensor);
        ck->shards_.push_back(SafetensorsFile::open(path));
        it = opened.emplace(shard, ck->shards_.size() - 1).first;
      }
      const auto names = ck->shards_[it->second]->names();
      if (!std::binary_search(names.begin(), names.end(), tensor))
        throw Error(index_file + ": weight_map." + tensor + ": shard " + shard + " does not hold this tensor");
      ck->shard_index_[tensor] = it->second;
    }
  } else {
    ck->shards_.push_back(SafetensorsFile::open(inside(root, "model.safetensors", directory + "/model.safetensors")));
    for (const auto& name : ck->shards_[0]->names()) ck->shard_index_[name] = 0;
  }
  const std::string anchor = model::anchor_tensor(ck->config_);
  // Canonical names carry the family's own prefix (CLIP/SigLIP "vision_model."); what
  // stands before them is the wrapper's (a full model's is empty, LLaVA's "vision_tower.").
  ck->prefix_ = find_prefix(ck->shard_index_, anchor, directory);
  if (ck->config_.projection_dim && !ck->info("visual_projection.weight")) ck->config_.projection_dim = 0;
  return ck;
}

const SafetensorsFile* HfCheckpoint::shard_of(const std::string& name) const {
  const auto it = shard_index_.find(prefix_ + name);
  return it == shard_index_.end() ? nullptr : shards_[it->second].get();
}

std::string HfCheckpoint::describe() const { return directory_; }

std::optional<model::TensorInfo> HfCheckpoint::info(const std::string& name) const {
  const SafetensorsFile* shard = shard_of(name);
  if (!shard) return std::nullopt;
  auto i = shard->info(prefix_ + name);
  if (i) i->name = name;
  return i;
}

void HfCheckpoint::read_f32(const std::string& name, std::span<float> out) const {
  const SafetensorsFile* shard = shard_of(name);
  if (!shard) throw Error(directory_ + ": no tensor " + prefix_ + name);
  shard->read_f32(prefix_ + name, out);
}

void write_hf_checkpoint(const std::string& directory, const model::TensorSource& source,
                         const model::ViTConfig& config, const std::map<std::string, std::string>& metadata,
                         int shards) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw Error(directory + ": cannot create the directory: " + ec.message(), kExitResource);
  std::vector<std::string> names;
  for (const auto& t : model::checkpoint_tensors(config)) names.push_back(t.name);
  if (shards < 1 || shards > static_cast<int>(names.size()))
    throw Error("--shards " + std::to_string(shards) + ": must be in [1, " + std::to_string(names.size()) + "]",
                kExitUsage);
  write_text_atomically(directory + "/config.json", hf_config_json(config));
  write_text_atomically(directory + "/preprocessor_config.json", hf_preprocessor_json(config));
  if (shards == 1) return write_safetensors(directory + "/model.safetensors", source, names, metadata);
  nlohmann::json index;
  index["metadata"] = nlohmann::json::object();
  for (int s = 0; s < shards; ++s) {
    char file[64];
    std::snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", s + 1, shards);
    const std::size_t lo = names.size() * s / shards, hi = names.size() * (s + 1) / shards;
    const std::vector<std::string> part(names.begin() + static_cast<std::ptrdiff_t>(lo),
                                        names.begin() + static_cast<std::ptrdiff_t>(hi));
    write_safetensors(directory + "/" + file, source, part, metadata);
    for (const auto& n : part) index["weight_map"][n] = file;
  }
  write_text_atomically(directory + "/model.safetensors.index.json", index.dump(2) + "\n");
}

}  // namespace tilevit::formats

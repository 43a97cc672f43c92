// tilevit export-weights: the random test model as a Hugging Face safetensors file, or as
// a checkpoint directory (config.json, preprocessor_config.json, weights in the family's
// own tensor names, optionally sharded), so any other tool (PyTorch, transformers, ONNX
// export, `tilevit --model`) can load exactly the same model.
#include <iostream>
#include <map>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "formats/hf_checkpoint.hpp"
#include "formats/safetensors.hpp"
#include "model/random_model.hpp"
#include "support/error.hpp"

namespace tilevit::cli {
namespace {

struct ExportWeights {
  ModelOptions model;
  std::string output;
  int shards = 1;

  CommandAction setup(CLI::App& app) {
    app.add_option("OUT", output, "output .safetensors file, or a directory for a Hugging Face checkpoint")
        ->required();
    app.add_option("--preset", model.preset, "one of " + model::ViTConfig::preset_names())->capture_default_str();
    app.add_option("--shards", shards, "checkpoint directory only: split the weights into N files with an index")
        ->capture_default_str();
    app.add_option("--layers", model.layers, "encoder layers to write (default: all)");
    app.add_option("--seed", model.seed, "random model seed")->capture_default_str();
    app.add_option("--threads", model.threads, "host threads (0 = all)");
    return [this] { return run(); };
  }

  int run() {
    model.apply_threads();
    const model::ViTConfig config = model.config();
    const model::RandomModelSource source(config, model.seed);
    std::vector<std::string> names;
    for (const auto& t : source.tensors()) names.push_back(t.name);
    progress("writing " + std::to_string(names.size()) + " tensors of " + config.name + " (" +
             layers_text(config.layers) + ", seed " + std::to_string(model.seed) + ") to " + output);
    const std::map<std::string, std::string> metadata{{"format", "pt"},
                                                      {"generator", "tilevit random test model"},
                                                      {"seed", std::to_string(model.seed)},
                                                      {"preset", model.preset},
                                                      {"layers", std::to_string(config.layers)}};
    const bool file = output.size() >= 12 && output.compare(output.size() - 12, 12, ".safetensors") == 0;
    if (file && shards != 1) throw Error("--shards needs a checkpoint directory as OUT, not a .safetensors file", kExitUsage);
    if (file)
      formats::write_safetensors(output, source, names, metadata);
    else
      formats::write_hf_checkpoint(output, source, config, metadata, shards);
    std::cout << output << "\n";
    return 0;
  }
};

ExportWeights command;
const CommandRegistration registration("export-weights", "write the random test model as Hugging Face safetensors",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli

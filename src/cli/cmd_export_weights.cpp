// tilevit export-weights: the random test model as a Hugging Face safetensors file, so
// any other tool (PyTorch, ONNX export) can load exactly the same model.
#include <iostream>

#include "cli/command.hpp"
#include "cli/model_options.hpp"
#include "formats/safetensors.hpp"
#include "model/random_model.hpp"

namespace tilevit::cli {
namespace {

struct ExportWeights {
  ModelOptions model;
  std::string output;

  CommandAction setup(CLI::App& app) {
    app.add_option("OUT", output, "output .safetensors file")->required();
    app.add_option("--preset", model.preset, "so400m or small")->capture_default_str();
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
    formats::write_safetensors(output, source, names,
                               {{"format", "pt"},
                                {"generator", "tilevit random test model"},
                                {"seed", std::to_string(model.seed)},
                                {"preset", model.preset},
                                {"layers", std::to_string(config.layers)}});
    std::cout << output << "\n";
    return 0;
  }
};

ExportWeights command;
const CommandRegistration registration("export-weights", "write the random test model as Hugging Face safetensors",
                                       [](CLI::App& app) { return command.setup(app); });

}  // namespace
}  // namespace tilevit::cli

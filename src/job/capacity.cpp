#include "job/capacity.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "support/error.hpp"

namespace tilevit::job {

std::string layers_text(int layers) { return std::to_string(layers) + (layers == 1 ? " layer" : " layers"); }

int largest_fitting(int lo, int hi, int guess, const std::function<bool(int)>& fits) {
  int best = lo - 1;
  int probe = std::clamp(guess, lo, hi);
  while (lo <= hi) {
    if (fits(probe)) {
      best = probe;
      lo = probe + 1;
    } else {
      hi = probe - 1;
    }
    probe = lo + (hi - lo) / 2;
  }
  return best;
}

namespace {

bool compiles(model::ViTConfig config, int batch, int layers, const model::NumericsConfig& numerics,
              const target::MachineDescription& machine, const compiler::CompileOptions& options) {
  config.batch = batch;
  config.layers = layers;
  try {
    compiler::compile_model(compiler::build_vit_graph(config, numerics), machine, options);
    return true;
  } catch (const compiler::DoesNotFit&) {
    return false;
  }
}

// The first probe: the size scaled by the worst tile's available / needed bytes (what
// grows with the size is most of what a tile holds), rounded down.
int scaled_guess(int size, const compiler::TileOverflow& o) {
  if (o.one_piece || o.needed == 0) return size - 1;
  return static_cast<int>(static_cast<double>(size) * static_cast<double>(o.available) / static_cast<double>(o.needed));
}

}  // namespace

void throw_does_not_fit(const compiler::Graph& graph, const target::MachineDescription& machine,
                        compiler::CompileOptions options, const compiler::DoesNotFit& error,
                        const std::function<void(const std::string&)>& progress) {
  const model::ViTConfig& c = graph.config;
  const compiler::TileOverflow& o = error.overflow();
  options.plan.pins = {};  // the grids of another size do not apply
  const auto fits = [&](int batch, int layers) { return compiles(c, batch, layers, graph.numerics, machine, options); };
  std::string message = c.name + " (" + layers_text(c.layers) + ", batch " + std::to_string(c.batch) +
                        ") does not fit " + machine.name + ": " + compiler::describe(o) + "; ";
  // Each probe is a full compile (with its own grid re-choices): seconds on a big model.
  if (progress) progress(c.name + " does not fit " + machine.name + ": compiling smaller batches and layer counts to say what would");
  const int batch = c.batch <= 1 ? 0
                                 : largest_fitting(1, c.batch - 1, scaled_guess(c.batch, o),
                                                   [&](int b) { return fits(b, c.layers); });
  const int layers = c.layers <= 1 ? 0
                                   : largest_fitting(1, c.layers - 1, scaled_guess(c.layers, o),
                                                     [&](int l) { return fits(c.batch, l); });
  std::vector<std::string> options_text;
  if (batch > 0) options_text.push_back("--batch " + std::to_string(batch) + " (" + layers_text(c.layers) + ")");
  if (layers > 0) options_text.push_back("--layers " + std::to_string(layers) + " (batch " + std::to_string(c.batch) + ")");
  if (c.batch <= 1 && c.layers <= 1)
    message += "nothing smaller to try (1 layer, batch 1)";
  else if (options_text.empty())
    message += "no smaller batch or layer count fits";
  else
    message += "largest that fits: " + options_text[0] + (options_text.size() > 1 ? " or " + options_text[1] : "");
  throw compiler::DoesNotFit(message, o);
}

}  // namespace tilevit::job

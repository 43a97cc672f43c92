#include "compiler/exchange_waves.hpp"

#include <algorithm>

#include "support/error.hpp"

namespace tilevit::compiler {

void schedule_exchange_waves(CompiledProgram& program, std::uint32_t tiles, std::uint32_t stream_words,
                             std::uint32_t max_piece_words) {
  if (stream_words == 0) throw Error("--exchange-stream-words must be positive", kExitUsage);
  program.exchange_stream_words = stream_words;
  const std::uint64_t wave_bytes = std::uint64_t(stream_words) * 4;
  const std::uint64_t piece_bytes = std::min<std::uint64_t>(stream_words, std::max(1u, max_piece_words)) * 4;
  for (Superstep& step : program.steps) {
    std::vector<Transfer> pieces;
    for (const Transfer& t : step.exchange) {
      for (std::uint64_t done = 0; done < t.bytes; done += piece_bytes) {
        Transfer p = t;
        p.bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(piece_bytes, t.bytes - done));
        p.source.offset += static_cast<std::uint32_t>(done);
        for (Endpoint& d : p.destinations) d.offset += static_cast<std::uint32_t>(done);
        pieces.push_back(std::move(p));
      }
    }
    // Per wave, bytes each tile sends and receives.
    std::vector<std::vector<std::uint32_t>> sent, received;
    for (Transfer& p : pieces) {
      std::uint32_t w = 0;
      for (;; ++w) {
        if (w == sent.size()) {
          sent.emplace_back(tiles, 0);
          received.emplace_back(tiles, 0);
        }
        bool fits = sent[w][p.source.tile] + p.bytes <= wave_bytes;
        for (const Endpoint& d : p.destinations) fits = fits && received[w][d.tile] + p.bytes <= wave_bytes;
        if (fits) break;
      }
      p.wave = w;
      sent[w][p.source.tile] += p.bytes;
      for (const Endpoint& d : p.destinations) received[w][d.tile] += p.bytes;
    }
    std::stable_sort(pieces.begin(), pieces.end(), [](const Transfer& a, const Transfer& b) { return a.wave < b.wave; });
    step.waves = static_cast<std::uint32_t>(sent.size());
    step.exchange = std::move(pieces);
  }
}

}  // namespace tilevit::compiler

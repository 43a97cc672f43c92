#pragma once
// The model the pipeline tests compile over test16x2: siglip2-tiny (4 layers) at a batch.
#include "model/config.hpp"

namespace tilevit::test_support {

inline model::ViTConfig tiny_pipeline_model(int batch = 2) {
  model::ViTConfig c = model::ViTConfig::preset("siglip2-tiny");
  c.batch = batch;
  return c;
}

}  // namespace tilevit::test_support

// Pipelines over the chips of test16x2: balancing by cycles, stages that are one model cut
// in order, the pipeline package round trip (with micro-batches), and a run bit for bit
// equal to the device-numerics reference in one process and split over two (as two MPI
// ranks are), one batch or several micro-batches per call.
#include <gtest/gtest.h>

#include <deque>

#include "model/random_model.hpp"
#include "reference/compare.hpp"
#include "reference/forward.hpp"
#include "support/error.hpp"
#include "system/pipeline.hpp"
#include "system/pipeline_device.hpp"
#include "system/pipeline_package.hpp"
#include "tiny_pipeline.hpp"

using namespace tilevit;

namespace {

model::ViTConfig tiny(int batch = 2) { return test_support::tiny_pipeline_model(batch); }

system::CompiledPipeline compile_tiny(const model::ViTConfig& c) {
  return system::compile_pipeline(c, model::NumericsConfig::uniform(-4), target::test16x2(), {});
}

TEST(Pipeline, BalanceMinimisesTheSlowestStage) {
  // stage 0 carries a heavy embedding: it gets fewer layers
  EXPECT_EQ(system::balance_layers(10, {500, 0}, {100, 100}, {0, 0}), (std::vector<std::uint32_t>{3, 7}));
  EXPECT_EQ(system::balance_layers(4, {0, 0}, {10, 10}, {0, 0}), (std::vector<std::uint32_t>{2, 2}));
  EXPECT_EQ(system::balance_layers(3, {0, 0, 0}, {1, 1, 1}, {5, 5, 0}), (std::vector<std::uint32_t>{1, 1, 1}));
  EXPECT_THROW(system::balance_layers(1, {0, 0}, {1, 1}, {0, 0}), Error);
}

TEST(Pipeline, StagesCutTheModelInOrder) {
  const auto c = tiny();
  const system::CompiledPipeline p = compile_tiny(c);
  ASSERT_EQ(p.stages.size(), 2u);
  EXPECT_EQ(p.stages[0].layers + p.stages[1].layers, 4u);
  EXPECT_TRUE(p.stages[0].executable.stage.embeds);
  EXPECT_FALSE(p.stages[0].executable.stage.pools);
  EXPECT_FALSE(p.stages[1].executable.stage.embeds);
  EXPECT_TRUE(p.stages[1].executable.stage.pools);
  EXPECT_EQ(p.stages[1].executable.stage.first_layer, p.stages[0].layers);
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.links[0].bytes, 2u * 16 * 192 * 2);
  const auto f = system::pipeline_figures(p);
  EXPECT_EQ(f.latency_cycles, p.stages[0].stats.estimated_cycles + p.stages[1].stats.estimated_cycles +
                                  p.links[0].cost.cycles());
  EXPECT_GT(f.link_share, 0);
  EXPECT_GT(f.streaming_images_per_second, 0);
  EXPECT_EQ(f.makespan_cycles, f.latency_cycles);  // one micro-batch per call
}

TEST(Pipeline, ACallOfMicroBatchesTakesLatencyPlusIntervals) {
  system::CompiledPipeline p = compile_tiny(tiny(1));
  p.micro_batches = 4;
  const auto f = system::pipeline_figures(p);
  EXPECT_EQ(f.interval_cycles, std::max(p.stages[0].stats.estimated_cycles + p.links[0].cost.cycles(),
                                        p.stages[1].stats.estimated_cycles));
  EXPECT_EQ(f.makespan_cycles, f.latency_cycles + 3 * f.interval_cycles);
  EXPECT_EQ(f.images_per_call, 4u);
  EXPECT_DOUBLE_EQ(f.call_images_per_second, 4 * double(p.machine.clock_hz) / double(f.makespan_cycles));
  EXPECT_DOUBLE_EQ(f.streaming_images_per_second, double(p.machine.clock_hz) / double(f.interval_cycles));
  EXPECT_GT(f.call_images_per_second, system::pipeline_figures(compile_tiny(tiny(1))).call_images_per_second);
}

TEST(Pipeline, PackageRoundTripsDeterministically) {
  const system::CompiledPipeline p = compile_tiny(tiny());
  const auto bytes = system::encode_pipeline(p).bytes();
  EXPECT_EQ(bytes, system::encode_pipeline(compile_tiny(tiny())).bytes());
  const auto container = package::Container::from_bytes(bytes, "p.tvpkg");
  ASSERT_TRUE(system::is_pipeline(container));
  const system::CompiledPipeline q = system::decode_pipeline(container);
  EXPECT_EQ(system::encode_pipeline(q).bytes(), bytes);
  EXPECT_EQ(system::pipeline_figures(q).latency_cycles, system::pipeline_figures(p).latency_cycles);
}

std::string system_section(const system::CompiledPipeline& p) {
  const auto container = package::Container::from_bytes(system::encode_pipeline(p).bytes(), "p.tvpkg");
  const auto payload = container.payload(container.require("system", 1));
  return std::string(reinterpret_cast<const char*>(payload.data()), payload.size());
}

TEST(Pipeline, PackageRecordsMicroBatchesAboveOne) {
  system::CompiledPipeline p = compile_tiny(tiny());
  EXPECT_EQ(system_section(p).find("micro_batches"), std::string::npos);  // K = 1: the format as before
  p.micro_batches = 3;
  EXPECT_NE(system_section(p).find("\"micro_batches\": 3"), std::string::npos);
  const auto bytes = system::encode_pipeline(p).bytes();
  const system::CompiledPipeline q = system::decode_pipeline(package::Container::from_bytes(bytes, "p.tvpkg"));
  EXPECT_EQ(q.micro_batches, 3u);
  EXPECT_EQ(system::encode_pipeline(q).bytes(), bytes);
  EXPECT_EQ(system::pipeline_figures(q).makespan_cycles, system::pipeline_figures(p).makespan_cycles);
}

// The one-line error (exit 3) decoding `p` with `micro_batches`.
std::string decode_error(system::CompiledPipeline p, std::uint32_t micro_batches) {
  p.micro_batches = micro_batches;
  try {
    system::decode_pipeline(package::Container::from_bytes(system::encode_pipeline(p).bytes(), "p.tvpkg"));
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(Pipeline, PackageWithMicroBatchesOutOfBoundsIsBadInput) {
  const system::CompiledPipeline p = compile_tiny(tiny());  // batch 2
  EXPECT_EQ(decode_error(p, 33), "p.tvpkg: section \"system\": micro-batches 33 of batch 2: 66 images per call, at most 64");
  EXPECT_NE(decode_error(p, 65).find("micro_batches: expected an integer in [2, 64]"), std::string::npos);
  EXPECT_EQ(decode_error(p, 32), "");
}

// Carries the stream between two PipelineDevices of one test, as MPI does between ranks:
// micro-batches in order.
struct MemoryBoundary : system::StageBoundary {
  std::deque<std::pair<std::vector<std::uint16_t>, std::uint64_t>> queue;
  void send(std::uint32_t, const std::vector<std::uint16_t>& s, std::uint64_t c) override { queue.emplace_back(s, c); }
  std::vector<std::uint16_t> receive(std::uint32_t, std::size_t values, std::uint64_t& c) override {
    EXPECT_FALSE(queue.empty());
    auto [stream, clock] = std::move(queue.front());
    queue.pop_front();
    EXPECT_EQ(values, stream.size());
    c = clock;
    return stream;
  }
};

TEST(Pipeline, RunsBitExactInOneProcessAndSplit) {
  const auto c = tiny();
  const system::CompiledPipeline p = compile_tiny(c);
  const auto weights = model::load_weights(model::RandomModelSource(c, 3), c);
  std::vector<std::vector<float>> images;
  for (int i = 0; i < c.batch; ++i) images.push_back(model::random_image(c, 3, i));

  system::PipelineDevice whole(p, 0, 2);
  whole.upload_weights(weights);
  const auto one = whole.run(images, nullptr);
  EXPECT_EQ(one.output,
            reference::DeviceNumericsModel(weights, system::pipeline_numerics(p), system::pipeline_layer_numerics(p))
                .forward(images));
  EXPECT_EQ(one.clock, system::pipeline_figures(p).latency_cycles);
  const auto cmp = reference::compare_embeddings(one.output, reference::forward_fp32(weights, images), c.output_values_per_image());
  EXPECT_GT(cmp.min_cosine, 0.99);

  // Each side loads only the weights of its chips (what an MPI rank does).
  const model::WeightPart part0 = system::weights_of_chips(p, 0, 1), part1 = system::weights_of_chips(p, 1, 2);
  EXPECT_EQ(part0.first_layer, 0);
  EXPECT_EQ(part0.end_layer, int(p.stages[0].layers));
  EXPECT_TRUE(part0.embeds && !part0.pools);
  EXPECT_EQ(part1.first_layer, int(p.stages[0].layers));
  EXPECT_EQ(part1.end_layer, c.layers);
  EXPECT_TRUE(!part1.embeds && part1.pools);
  MemoryBoundary boundary;
  system::PipelineDevice first(p, 0, 1), second(p, 1, 2);
  first.upload_weights(model::load_weights(model::RandomModelSource(c, 3), c, part0));
  second.upload_weights(model::load_weights(model::RandomModelSource(c, 3), c, part1));
  EXPECT_TRUE(first.run(images, &boundary).output.empty());
  const auto split = second.run(images, &boundary);
  EXPECT_EQ(split.output, one.output);
  EXPECT_EQ(split.clock, one.clock);
}

TEST(Pipeline, MicroBatchesRunAsSeparateCallsButOverlapped) {
  const auto c = tiny(1);
  const system::CompiledPipeline single = compile_tiny(c);
  system::CompiledPipeline three = single;
  three.micro_batches = 3;
  const auto weights = model::load_weights(model::RandomModelSource(c, 3), c);
  std::vector<std::vector<float>> images;
  for (int i = 0; i < 3; ++i) images.push_back(model::random_image(c, 3, i));

  system::PipelineDevice one_by_one(single, 0, 2), streamed(three, 0, 2);
  one_by_one.upload_weights(weights);
  streamed.upload_weights(weights);
  std::vector<float> separate;
  for (const auto& image : images) {
    const auto call = one_by_one.run({image}, nullptr);
    separate.insert(separate.end(), call.output.begin(), call.output.end());
  }
  const auto call = streamed.run(images, nullptr);
  EXPECT_EQ(call.output, separate);
  EXPECT_EQ(call.output, reference::DeviceNumericsModel(weights, system::pipeline_numerics(three),
                                                        system::pipeline_layer_numerics(three))
                             .forward(images));
  const auto f = system::pipeline_figures(three);
  EXPECT_EQ(call.first_clock, f.latency_cycles);
  EXPECT_EQ(call.clock, f.latency_cycles + 2 * f.interval_cycles);
  EXPECT_EQ(call.clock, f.makespan_cycles);
  EXPECT_EQ(streamed.run(images, nullptr).clock, call.clock);  // every call starts with the chips idle

  MemoryBoundary boundary;
  system::PipelineDevice first(three, 0, 1), second(three, 1, 2);
  first.upload_weights(weights);
  second.upload_weights(weights);
  const auto sent = first.run(images, &boundary);
  EXPECT_EQ(boundary.queue.size(), 3u);
  EXPECT_EQ(sent.clock, 3 * (three.stages[0].stats.estimated_cycles + three.links[0].cost.cycles()));
  const auto split = second.run(images, &boundary);
  EXPECT_EQ(split.output, call.output);
  EXPECT_EQ(split.clock, call.clock);
  EXPECT_EQ(split.first_clock, call.first_clock);
}

TEST(Pipeline, ACallTakesBatchTimesMicroBatchesImages) {
  const auto c = tiny(1);
  system::CompiledPipeline p = compile_tiny(c);
  p.micro_batches = 2;
  system::PipelineDevice dev(p, 0, 2);
  try {
    dev.run({model::random_image(c, 3, 0)}, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_STREQ(e.what(), "pipeline: a call takes 2 images (2 micro-batches of batch 1), got 1");
  }
}

// The one-line error (exit 3) compiling `c` for test16x2 gives; "" if it compiled.
std::string compile_error(const model::ViTConfig& c) {
  try {
    compile_tiny(c);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "";
}

TEST(Pipeline, TooFewLayersForTheChipsIsOneLine) {
  model::ViTConfig c = tiny();
  c.layers = 1;
  EXPECT_NE(compile_error(c).find("cannot fill a pipeline of 2 chips"), std::string::npos);
}

TEST(Pipeline, AStageThatDoesNotFitIsTheCapacityError) {
  model::ViTConfig c = model::ViTConfig::preset("siglip-b16-224");  // ~7 MB of FP8 weights per layer, 9.6 MB per chip
  c.layers = 4;
  EXPECT_NE(compile_error(c).find("does not fit 2 x test16: stage 0 (layers 0-1)"), std::string::npos);
}

}  // namespace

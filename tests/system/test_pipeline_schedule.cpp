// The schedule of a call's micro-batches through a line of stages (system/pipeline.hpp):
// the recurrence on a hand-computed example, its identity for identical micro-batches,
// and the bounds on micro-batches per call.
#include <gtest/gtest.h>

#include "support/error.hpp"
#include "system/pipeline.hpp"

using namespace tilevit;

namespace {

using Busy = std::vector<std::vector<std::uint64_t>>;  // [micro-batch][stage]

TEST(PipelineSchedule, StageStartsWhenFreeAndTheMicroBatchHasArrived) {
  EXPECT_EQ(system::stage_end(10, 4, 5), 15u);  // still busy: waits for itself
  EXPECT_EQ(system::stage_end(4, 10, 5), 15u);  // idle: waits for the micro-batch
  EXPECT_EQ(system::stage_end(0, 0, 7), 7u);
}

TEST(PipelineSchedule, HandComputedThreeStages) {
  // end(s, i) by hand, rows micro-batches, columns stages:
  //   i=0:  3   8  10      (each stage waits for the one before)
  //   i=1:  7   9  16      stage 1 free at 8, micro-batch there at 7: 8 + 1; stage 2 free at 10: 10 + 6
  //   i=2:  9  11  18      stage 1: max(9, 9) + 2; stage 2: max(16, 11) + 2
  EXPECT_EQ(system::pipeline_makespan(Busy{{3, 5, 2}, {4, 1, 6}, {2, 2, 2}}), 18u);
  EXPECT_EQ(system::pipeline_makespan(Busy{{3, 5, 2}}), 10u);  // one micro-batch: the latency
  EXPECT_EQ(system::pipeline_makespan(Busy{}), 0u);
}

TEST(PipelineSchedule, IdenticalMicroBatchesTakeLatencyPlusIntervals) {
  const std::vector<std::vector<std::uint64_t>> stage_sets = {
      {7}, {1, 10, 1}, {10, 1, 1}, {4, 4, 4, 4}, {1500, 82122, 4560277, 3}, {5, 9, 2, 9, 1}};
  for (const auto& busy : stage_sets) {
    std::uint64_t latency = 0, interval = 0;
    for (std::uint64_t b : busy) latency += b, interval = std::max(interval, b);
    for (std::uint64_t k : {1, 2, 3, 8, 64})
      EXPECT_EQ(system::pipeline_makespan(Busy(k, busy)), latency + (k - 1) * interval)
          << busy.size() << " stages, " << k << " micro-batches";
  }
}

TEST(PipelineSchedule, MicroBatchesOfUnequalStagesAreABug) {
  try {
    system::pipeline_makespan(Busy{{1, 2}, {1}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitInternal);
  }
}

TEST(PipelineSchedule, MicroBatchesPerCallAreBounded) {
  EXPECT_EQ(system::micro_batches_problem(1, 1), "");
  EXPECT_EQ(system::micro_batches_problem(64, 1), "");
  EXPECT_EQ(system::micro_batches_problem(32, 2), "");
  EXPECT_EQ(system::micro_batches_problem(0, 1), "micro-batches 0: expected 1 to 64");
  EXPECT_EQ(system::micro_batches_problem(65, 1), "micro-batches 65: expected 1 to 64");
  EXPECT_EQ(system::micro_batches_problem(33, 2), "micro-batches 33 of batch 2: 66 images per call, at most 64");
}

}  // namespace

# Fixture of the browser tests (CMakeLists.txt beside this file): checks the tools, then
# writes the pages under test into OUT with the tilevit binary on a tiny model.
# Add the commands that write further pages (e.g. `tilevit run`) at the end.
foreach(var TILEVIT CHROMIUM SOURCE_DIR BROWSER_DIR OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "fixture.cmake: -D${var}=... missing")
  endif()
endforeach()
if(NOT NODE OR NOT EXISTS "${NODE}")
  message(FATAL_ERROR "browser tests: node not found; install it (apt-get install -y nodejs npm, see scripts/setup.sh) "
                      "or configure with -DTILEVIT_BROWSER_TESTS=OFF")
endif()
if(NOT EXISTS "${CHROMIUM}")
  message(FATAL_ERROR "browser tests: ${CHROMIUM} not found; install it (apt-get install -y chromium, see scripts/setup.sh) "
                      "or configure with -DTILEVIT_BROWSER_TESTS=OFF")
endif()
if(NOT EXISTS "${BROWSER_DIR}/node_modules/playwright-core/package.json")
  message(FATAL_ERROR "browser tests: playwright-core is not installed; run: npm ci --prefix ${BROWSER_DIR}")
endif()

file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")
function(tilevit_step)
  execute_process(COMMAND "${TILEVIT}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "browser tests: tilevit ${ARGN} failed (${rc}): ${err}")
  endif()
  message(STATUS "tilevit ${ARGN}: ${out}")
endfunction()

set(machine "${SOURCE_DIR}/src/target/machines/test16.machine")
tilevit_step(compile --preset small --layers 2 --machine "${machine}" --package "${OUT}/small.tvpkg")
tilevit_step(memory-map "${OUT}/small.tvpkg" --out "${OUT}")
# model.html (timeline viewer): a profiled build of the same model, run once.
tilevit_step(compile --preset small --layers 2 --machine "${machine}" --profile --package "${OUT}/small_profiled.tvpkg")
tilevit_step(run --package "${OUT}/small_profiled.tvpkg" --out "${OUT}/run")
file(COPY_FILE "${OUT}/run/model.html" "${OUT}/model.html")
# pareto.html (the sweep's chart): the 32-point small sweep of the test fixtures.
tilevit_step(sweep "${SOURCE_DIR}/tests/fixtures/sweeps/small-test16.json" --out "${OUT}/sweep" --json)
file(COPY_FILE "${OUT}/sweep/pareto.html" "${OUT}/pareto.html")
file(COPY_FILE "${OUT}/sweep/sweep.json" "${OUT}/pareto.json")
# compare.html: the small model's searched run against its --optimization-steps 0 run.
tilevit_step(run --preset small --machine "${machine}" --inferences 1 --no-reference --optimization-steps 0 --out "${OUT}/heuristic")
tilevit_step(run --preset small --machine "${machine}" --inferences 1 --no-reference --out "${OUT}/searched"
             --compare-with "${OUT}/heuristic/profile.tvprof")
file(COPY_FILE "${OUT}/searched/compare.html" "${OUT}/compare.html")
file(COPY_FILE "${OUT}/heuristic/run.json" "${OUT}/compare-a.json")
file(COPY_FILE "${OUT}/searched/run.json" "${OUT}/compare-b.json")
# model-x2.html: one profile of a two-chip pipeline (test16x2, two micro-batches).
tilevit_step(run --preset small --machine test16x2 --micro-batches 2 --inferences 1 --no-reference --out "${OUT}/x2")
file(COPY_FILE "${OUT}/x2/model.html" "${OUT}/model-x2.html")
file(COPY_FILE "${OUT}/x2/run.json" "${OUT}/model-x2.json")
# compare-x2.html: a one-chip run (A) against the two-chip pipeline (B): rows named by chip.
tilevit_step(profile compare "${OUT}/searched/profile.tvprof" "${OUT}/x2/profile.tvprof" -o "${OUT}/compare-x2.html")

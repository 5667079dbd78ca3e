# The failure class a GPU found (docs/evolve.md, "A failure class from the GPU"), replayed without a GPU: the
# rotated-tiles GEMM family (tests/cli/rotated_family.cpp) with the GPU verdicts the search got on the GPU
# scripted (tests/cli/rotated_mock.txt), one compile of the family for all of it.
#   A  --without-rule memory.output-coverage   the analyzer as it was: every point passes the analyze gate (its
#                                              evidence says which rule it ran without), every point lowers, the
#                                              scripted wrong results form one cluster whose proposal is the
#                                              accepted entry tests/verify/accepted/rotated_tiles
#   B  the analyzer now                         the rotated points are rejected at the analyze gate with
#                                              memory.output-coverage; no GPU gate sees them, no failure cluster
# cmake -P with -DCAKE=<cake> -DWORKDIR=<source root> -DOUT=<scratch folder>.
cmake_minimum_required(VERSION 3.25)
set(problems "")
macro(problem text)
  string(APPEND problems "${text}\n")
endmacro()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(ENV{CAKE_GPU_MOCK} ${WORKDIR}/tests/cli/rotated_mock.txt)

# ---- A: without the rule, the search meets the class on the (scripted) GPU ----
execute_process(COMMAND ${CAKE} evolve tests/cli/rotated_family.cpp --family rotated --shape M=4096,N=4096,K=4096 --json
                        --without-rule memory.output-coverage --log ${OUT}/a.jsonl --budget-gpu-s 1000
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "A: exit code ${rc}\n${json}\n${err}")
endif()
file(STRINGS ${OUT}/a.jsonl analyze_pass REGEX "\"gate\":\"analyze\",\"verdict\":\"pass\".*\"without_rules\":\\[\"memory.output-coverage\"\\]")
list(LENGTH analyze_pass n_pass)
if(NOT n_pass EQUAL 8)
  problem("A: ${n_pass} of 8 points passed the analyze gate with without_rules in their evidence")
endif()
file(STRINGS ${OUT}/a.jsonl lower_pass REGEX "\"gate\":\"lower\",\"verdict\":\"pass\"")
list(LENGTH lower_pass n_lower)
if(NOT n_lower EQUAL 8)
  problem("A: ${n_lower} of 8 points lowered (the lower gate must not re-check with the dropped rule)")
endif()
string(JSON n LENGTH "${json}" evolve failures clusters)
if(NOT n EQUAL 1)
  problem("A: ${n} failure clusters, expected the one rotated class")
else()
  string(JSON sig GET "${json}" evolve failures clusters 0 signature)
  string(JSON bad GET "${json}" evolve failures clusters 0 reproducer candidate)
  string(JSON good GET "${json}" evolve failures clusters 0 fixed_twin candidate)
  if(NOT sig STREQUAL "run / wrong result: bn=128 & rotate=true")
    problem("A: signature '${sig}', expected 'run / wrong result: bn=128 & rotate=true'")
  endif()
  # C: the accepted entry is this proposal with its rule filled in
  file(STRINGS ${WORKDIR}/tests/verify/accepted/rotated_tiles/entry.txt entry REGEX "^(family|bad|good|expect) ")
  set(want "family rotated;bad ${bad};good ${good};expect memory.output-coverage")
  if(NOT entry STREQUAL want)
    problem("A: the accepted entry says '${entry}', the proposal '${want}'")
  endif()
endif()

# ---- B: with the rule, the class is rejected before any GPU gate ----
execute_process(COMMAND ${CAKE} evolve tests/cli/rotated_family.cpp --family rotated --shape M=4096,N=4096,K=4096 --json
                        --log ${OUT}/b.jsonl --budget-gpu-s 1000
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "B: exit code ${rc}\n${json}\n${err}")
endif()
file(STRINGS ${OUT}/b.jsonl rejected REGEX "\"gate\":\"analyze\",\"verdict\":\"reject\".*\"rules\":\\[\"memory.output-coverage\"\\]")
list(LENGTH rejected n_rej)
set(rotated_rejected 0)
foreach(l IN LISTS rejected)
  if(l MATCHES "\"candidate\":\"[^\"]*rotate=true\"")
    math(EXPR rotated_rejected "${rotated_rejected} + 1")
  endif()
endforeach()
if(NOT n_rej EQUAL 4 OR NOT rotated_rejected EQUAL 4)
  problem("B: ${n_rej} points rejected with memory.output-coverage (${rotated_rejected} rotated), expected the 4 rotated ones")
endif()
file(STRINGS ${OUT}/b.jsonl gpu_rotated REGEX "\"candidate\":\"[^\"]*rotate=true\".*\"gate\":\"(run|bench)\"")
if(gpu_rotated)
  problem("B: a rotated point reached a GPU gate: ${gpu_rotated}")
endif()
string(JSON n LENGTH "${json}" evolve failures clusters)
if(NOT n EQUAL 0)
  problem("B: ${n} failure clusters, expected none")
endif()

if(problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "the rotated-tiles class: found without its rule, rejected with it")

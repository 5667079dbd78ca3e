# The failure clustering of `cake evolve` without a GPU (docs/evolve.md, "Failures"): the seeded failure
# class of tests/cli/seeded_family.cpp (every pingpong variant is scripted wrong by tests/cli/seeded_mock.txt,
# the analyzer accepts them) is found, clustered, minimized and written up as a proposed corpus entry, and
# `cake failures LOG` gives the same clusters from the log alone. One compile of the family for all of it.
#   A  cake evolve (search, clusters, minimization, proposals)   signature, members, reproducer, shape, twin, files
#   B  cake failures on A's log                                 the same clusters, re-running nothing
#   C  the proposal against the accepted entry                   tests/verify/accepted/seeded_pingpong is what A proposed
#   D  --max-candidates 2: the class is met two axes off the seed  the minimization re-runs a pruned neighbour
# cmake -P with -DCAKE=<cake> -DWORKDIR=<source root> -DOUT=<scratch folder>.
cmake_minimum_required(VERSION 3.25)
set(problems "")
macro(problem text)
  string(APPEND problems "${text}\n")
endmacro()
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
set(ENV{CAKE_GPU_MOCK} ${WORKDIR}/tests/cli/seeded_mock.txt)

# ---- A: the search finds, clusters and minimizes the seeded class ----
execute_process(COMMAND ${CAKE} evolve tests/cli/seeded_family.cpp --family seeded --shape M=4096,N=4096,K=4096 --json --seed 3
                        --log ${OUT}/a.jsonl --budget-gpu-s 1000
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "A: exit code ${rc}\n${json}\n${err}")
endif()
string(JSON n GET "${json}" evolve failures clusters)
string(JSON n LENGTH "${json}" evolve failures clusters)
if(NOT n EQUAL 1)
  problem("A: ${n} failure clusters, expected the one seeded class")
endif()
string(JSON sig GET "${json}" evolve failures clusters 0 signature)
string(JSON kind GET "${json}" evolve failures clusters 0 kind)
string(JSON gate GET "${json}" evolve failures clusters 0 gate)
string(JSON pure GET "${json}" evolve failures clusters 0 pure)
string(JSON pattern GET "${json}" evolve failures clusters 0 pattern 0)
string(JSON n_pattern LENGTH "${json}" evolve failures clusters 0 pattern)
if(NOT sig STREQUAL "run / wrong result: pingpong=true" OR NOT kind STREQUAL "wrong" OR NOT gate STREQUAL "run" OR NOT pure OR NOT pattern STREQUAL "pingpong=true"
   OR NOT n_pattern EQUAL 1)
  problem("A: signature '${sig}' (kind ${kind}, gate ${gate}, pure ${pure}, pattern ${pattern} of ${n_pattern} terms), expected 'run / wrong result: pingpong=true'")
endif()
# Members: every pingpong variant the analyzer accepted and that was run; constant pingpong, varying others.
string(JSON n_members LENGTH "${json}" evolve failures clusters 0 members)
string(JSON constant GET "${json}" evolve failures clusters 0 constant pingpong)
set(members "")
math(EXPR last "${n_members} - 1")
foreach(i RANGE ${last})
  string(JSON m GET "${json}" evolve failures clusters 0 members ${i})
  if(NOT m MATCHES "pingpong=true$")
    problem("A: member ${m} is not a pingpong variant")
  endif()
  list(APPEND members "${m}")
endforeach()
if(n_members LESS 2 OR NOT constant STREQUAL "true")
  problem("A: ${n_members} members (expected at least 2 pingpong variants), constant pingpong '${constant}'")
endif()
# The log holds a run rejection for each member and no pingpong=false run rejection.
file(STRINGS ${OUT}/a.jsonl lines REGEX "\"gate\":\"run\",\"verdict\":\"reject\"")
foreach(l IN LISTS lines)
  if(l MATCHES "\"candidate\":\"[^\"]*pingpong=false\"")
    problem("A: a pingpong=false candidate was rejected at run: ${l}")
  endif()
endforeach()
# The reproducer: one axis off the seed (bn=128, stages=2), at the smallest shape the halving reached from the
# ragged 300 x 200 x 1000 check shape: 150 x 100 x 500, 75 x 64 x 250, 64 x 64 x 125, 64 x 64 x 64.
string(JSON rep GET "${json}" evolve failures clusters 0 reproducer candidate)
string(JSON rep_shape GET "${json}" evolve failures clusters 0 reproducer shape)
string(JSON twin GET "${json}" evolve failures clusters 0 fixed_twin candidate)
if(NOT rep STREQUAL "bn=128,stages=2,pingpong=true" OR NOT rep_shape STREQUAL "M=64,N=64,K=64")
  problem("A: reproducer ${rep} at ${rep_shape}, expected bn=128,stages=2,pingpong=true at M=64,N=64,K=64")
endif()
if(NOT twin STREQUAL "bn=128,stages=2,pingpong=false")
  problem("A: fixed twin ${twin}, expected the nearest passing candidate bn=128,stages=2,pingpong=false")
endif()
string(JSON n_steps LENGTH "${json}" evolve failures clusters 0 minimize)
string(JSON step0 GET "${json}" evolve failures clusters 0 minimize 0)
if(n_steps LESS 2 OR NOT step0 MATCHES "^pingpong -> the seed's false .*: run pass: pingpong is kept$")
  problem("A: minimization steps (${n_steps}): first '${step0}', expected pingpong kept (its seed value passes), then the shape halvings")
endif()
# The halving runs are GPU gates of the log at their own shapes.
file(STRINGS ${OUT}/a.jsonl halvings REGEX "\"candidate\":\"bn=128,stages=2,pingpong=true\",\"shape\":\"M=64,N=64,K=64\",\"gate\":\"run\",\"verdict\":\"reject\"")
list(LENGTH halvings n_halvings)
if(NOT n_halvings EQUAL 1)
  problem("A: ${n_halvings} run lines of the reproducer at M=64,N=64,K=64 in the log, expected 1")
endif()
# The proposal files.
set(dir ${OUT}/a.jsonl.failures/cluster-1)
foreach(f README.md bad.txt good.txt entry.txt evidence.jsonl)
  if(NOT EXISTS ${dir}/${f})
    problem("A: the proposal has no ${f}")
  endif()
endforeach()
if(EXISTS ${dir}/entry.txt)
  file(READ ${dir}/entry.txt entry)
  if(NOT entry MATCHES "\nfile tests/cli/seeded_family.cpp\nfamily seeded\nbad bn=128,stages=2,pingpong=true\ngood bn=128,stages=2,pingpong=false\nexpect TODO.rule-id\n")
    problem("A: entry.txt is not the proposal expected:\n${entry}")
  endif()
  file(READ ${dir}/README.md readme)
  if(NOT readme MATCHES "Signature: \\*\\*run / wrong result: pingpong=true\\*\\*" OR NOT readme MATCHES "Nothing has been added to any corpus")
    problem("A: README.md lacks the signature or the note that nothing was added:\n${readme}")
  endif()
  file(STRINGS ${dir}/evidence.jsonl ev REGEX "\"gate\":\"run\",\"verdict\":\"reject\"")
  list(LENGTH ev n_ev)
  if(n_ev LESS n_members)
    problem("A: evidence.jsonl has ${n_ev} failing run lines, expected one per member at least (${n_members})")
  endif()
endif()
if(NOT json MATCHES "\"failures\":\\{\"dir\":\"[^\"]*a.jsonl.failures\"")
  problem("A: the JSON answer does not name the proposals folder")
endif()

# ---- B: cake failures reads the log alone ----
execute_process(COMMAND ${CAKE} failures ${OUT}/a.jsonl --failures ${OUT}/b --json WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json_b ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  problem("B: cake failures: exit code ${rc}\n${json_b}\n${err}")
else()
  string(JSON sig_b GET "${json_b}" failures clusters 0 signature)
  string(JSON rep_b GET "${json_b}" failures clusters 0 reproducer candidate)
  string(JSON shape_b GET "${json_b}" failures clusters 0 reproducer shape)
  string(JSON twin_b GET "${json_b}" failures clusters 0 fixed_twin candidate)
  string(JSON n_b LENGTH "${json_b}" failures clusters 0 members)
  if(NOT sig_b STREQUAL sig OR NOT rep_b STREQUAL rep OR NOT shape_b STREQUAL rep_shape OR NOT twin_b STREQUAL twin OR NOT n_b EQUAL n_members)
    problem("B: cake failures gave ${sig_b} / ${rep_b} at ${shape_b} / twin ${twin_b} / ${n_b} members; evolve gave ${sig} / ${rep} at ${rep_shape} / ${twin} / ${n_members}")
  endif()
  if(NOT EXISTS ${OUT}/b/cluster-1/entry.txt)
    problem("B: no proposal written under --failures")
  endif()
endif()

# ---- C: the accepted entry is the proposal with its rule filled in ----
file(READ ${WORKDIR}/tests/verify/accepted/seeded_pingpong/entry.txt accepted)
if(NOT accepted MATCHES "\nbad bn=128,stages=2,pingpong=true\n" OR NOT accepted MATCHES "\ngood bn=128,stages=2,pingpong=false\n"
   OR NOT accepted MATCHES "\nexpect test.pingpong-scripted\n")
  problem("C: tests/verify/accepted/seeded_pingpong/entry.txt is not the proposal of A accepted with rule test.pingpong-scripted:\n${accepted}")
endif()

# ---- D: a reproducer two axes off the seed is walked back by a re-run ----
# With 2 candidates selected the search measures the seed and bn=128,stages=4 (the best, 0.2 ms), whose
# pingpong neighbour fails; minimization tries stages -> 2 (pruned by the selection, never run): it fails the
# same way and becomes the reproducer; pingpong -> false is the seed, which passed: pingpong stays.
execute_process(COMMAND ${CAKE} evolve tests/cli/seeded_family.cpp --family seeded --shape M=4096,N=4096,K=4096 --json --seed 3
                        --log ${OUT}/d.jsonl --budget-gpu-s 1000 --max-candidates 2
                WORKING_DIRECTORY ${WORKDIR} RESULT_VARIABLE rc OUTPUT_VARIABLE json_d ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  problem("D: exit code ${rc}\n${err}")
else()
  string(JSON rep_d GET "${json_d}" evolve failures clusters 0 reproducer candidate)
  string(JSON step_d GET "${json_d}" evolve failures clusters 0 minimize 0)
  string(JSON step_d1 GET "${json_d}" evolve failures clusters 0 minimize 1)
  if(NOT rep_d STREQUAL "bn=128,stages=2,pingpong=true" OR NOT step_d STREQUAL "stages -> the seed's 2 (bn=128,stages=2,pingpong=true): still fails (wrong result): the reproducer"
     OR NOT step_d1 MATCHES "^pingpong -> the seed's false .*: pingpong is kept$")
    problem("D: reproducer ${rep_d}; steps '${step_d}', '${step_d1}'")
  endif()
  file(STRINGS ${OUT}/d.jsonl d_lines REGEX "\"candidate\":\"bn=128,stages=2,pingpong=true\",\"shape\":\"(M=4096,N=4096,K=4096)?\",\"gate\":\"(select|lower|run)\"")
  set(trail "")
  foreach(l IN LISTS d_lines)
    string(REGEX MATCH "\"gate\":\"([a-z]+)\",\"verdict\":\"([a-z]+)\"" m "${l}")
    string(APPEND trail "${CMAKE_MATCH_1}:${CMAKE_MATCH_2} ")
  endforeach()
  if(NOT trail STREQUAL "select:pruned lower:pass run:reject ")
    problem("D: the walked-back point's lines are '${trail}', expected 'select:pruned lower:pass run:reject ' (run only by the minimization)")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "cake evolve: the seeded failure class was found, clustered, minimized and proposed (${n_members} members)")

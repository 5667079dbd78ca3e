# Runs one compile-fail or compile-ok test (cmake -P).
#   -DCOMPILER=... -DCOMPILER_ID=GNU|Clang|... -DINCLUDE_DIR=... -DSOURCE=file.cpp -DMODE=fail|ok
#   [-DEXTRA_EXPECT=text]  an additional text that must appear (used to test this driver)
# MODE=fail: the compiler must fail and its output must contain every "// EXPECT: text" line of SOURCE,
# plus "// EXPECT-GCC:" lines with GCC and "// EXPECT-CLANG:" lines with Clang.
# MODE=ok: the compiler must succeed.
cmake_minimum_required(VERSION 3.25)
foreach(var COMPILER INCLUDE_DIR SOURCE MODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_compile_test.cmake: ${var} is not set")
  endif()
endforeach()

# LC_ALL=C: ASCII quotes in GCC's messages, so that EXPECT texts can quote values as '260'.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env LC_ALL=C LANG=C ${COMPILER} -std=c++20 -fsyntax-only -I${INCLUDE_DIR} ${SOURCE}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

if(MODE STREQUAL "ok")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${SOURCE} must compile, but the compiler failed:\n${out}")
  endif()
  message(STATUS "compiles: ${SOURCE}")
  return()
endif()

if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} must not compile, but it did")
endif()

file(STRINGS ${SOURCE} expect_lines REGEX "^// EXPECT(-GCC|-CLANG)?: ")
if(DEFINED EXTRA_EXPECT)
  list(APPEND expect_lines "// EXPECT: ${EXTRA_EXPECT}")
endif()
set(checked 0)
foreach(line IN LISTS expect_lines)
  string(REGEX MATCH "^// EXPECT(-GCC|-CLANG)?: (.*)$" _ "${line}")
  set(who "${CMAKE_MATCH_1}")
  set(text "${CMAKE_MATCH_2}")
  if(who STREQUAL "-GCC" AND NOT COMPILER_ID STREQUAL "GNU")
    continue()
  endif()
  if(who STREQUAL "-CLANG" AND NOT COMPILER_ID MATCHES "Clang")
    continue()
  endif()
  string(FIND "${out}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SOURCE} failed to compile, as it must, but the diagnostics lack the EXPECT text\n  ${text}\n"
                        "Compiler output:\n${out}")
  endif()
  math(EXPR checked "${checked} + 1")
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "${SOURCE} has no // EXPECT: line")
endif()
message(STATUS "fails as expected (${checked} texts found): ${SOURCE}")

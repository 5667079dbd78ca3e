#pragma once
// The analyzer: cake::analyze(program) -> report (diagnostics, coverage, counts), its text and JSON
// output, and the compile-time gate static_assert(cake::verify(program)). Rules: analysis/rules.hpp,
// documented in docs/diagnostics.md.
#include "analysis/analyze.hpp"
#include "analysis/diagnostic.hpp"
#include "analysis/output.hpp"
#include "analysis/rules.hpp"
#include "analysis/verify.hpp"

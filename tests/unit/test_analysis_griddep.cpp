// sync.griddep-missing and sync.griddep-no-pdl (issue 10, blind spot 7): paths through loops and whens,
// per role, the exemptions (independent tensors, tensor-map prefetch), what the message names.
#include <doctest/doctest.h>

#include <string>

#include <cake/cake.hpp>

using namespace cake;
using analysis::rule_id;

namespace {

int count(const analysis::report& r, rule_id id) {
  int n = 0;
  for (const auto& d : r.diagnostics) n += d.rule == id;
  return n;
}
const analysis::diagnostic* find(const analysis::report& r, rule_id id) {
  for (const auto& d : r.diagnostics)
    if (d.rule == id) return &d;
  return nullptr;
}

// Where the one role puts its griddep_wait relative to the load of X and the store of Y (a loop over
// column blocks of one row block per CTA).
enum class at { top, in_dynamic_loop, in_for_range, in_when, none };

program rows(at where, bool pdl = true, bool independent_x = false) {
  auto k = kernel("griddep_paths").target(sm_90a);
  if (pdl) k.programmatic_launch();
  auto [M, N] = k.dims("M", "N");
  auto X = k.input<f32>("X", dims(M, N));
  auto Y = k.output<f32>("Y", dims(M, N));
  if (independent_x) k.independent_of_previous_grid(X);
  auto rows = k.parallel(tiles(M, 64));
  k.role("rows", warpgroups(1), [&](role& r) {
    auto x = r.fragment<f32>("x", {64, 64});
    r.prefetch_tensor_map(X);  // a kernel parameter: never needs the wait
    if (where == at::top) r.griddep_wait();
    r.for_each(rows, [&](auto m) {
      if (where == at::in_for_range) r.for_range(2, [&](auto) { r.griddep_wait(); });
      if (where == at::in_when) r.when(eq(r.warpgroup(), 0), [&] { r.griddep_wait(); });
      r.loop(tiles(N, 64), [&](auto n) {
        if (where == at::in_dynamic_loop) r.griddep_wait();
        r.load(x, X.tile(m, n));
      });
      r.store(Y.tile(m, 0), x);
    });
  });
  return k.build();
}

}  // namespace

TEST_CASE("griddep: a wait at the top of the role covers every access") {
  const auto r = analyze(rows(at::top));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_missing) == 0);
  CHECK(count(r, rule_id::sync_griddep_no_pdl) == 0);
}

TEST_CASE("griddep: a role with no wait is reported once per tensor, reads and writes") {
  const auto r = analyze(rows(at::none));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_missing) == 2);  // X (load) and Y (store); not the prefetch
  const auto* d = find(r, rule_id::sync_griddep_missing);
  REQUIRE(d != nullptr);
  const std::string msg(d->message.view()), help(d->help.view());
  CHECK(msg.find("role 'rows' reads 'X'") != std::string::npos);
  CHECK(msg.find("load_global") != std::string::npos);
  CHECK(help.find("call r.griddep_wait() in role 'rows' before op#") != std::string::npos);
  CHECK(help.find("(line ") != std::string::npos);
  CHECK(help.find("independent_of_previous_grid(X)") != std::string::npos);
}

TEST_CASE("griddep: a wait inside a dynamic loop covers the loop body, not what follows the loop") {
  const auto r = analyze(rows(at::in_dynamic_loop));
  INFO(analysis::to_text(r));
  REQUIRE(count(r, rule_id::sync_griddep_missing) == 1);
  const auto* d = find(r, rule_id::sync_griddep_missing);
  CHECK(std::string(d->message.view()).find("writes 'Y'") != std::string::npos);
  CHECK(std::string(d->help.view()).find("independent_of_previous_grid(Y) if the previous kernel neither reads nor writes it") != std::string::npos);
  bool why = false;
  for (int i = 0; i < d->note_count; ++i) why = why || std::string(d->notes[i].text.view()).find("dynamic loop") != std::string::npos;
  CHECK(why);
}

TEST_CASE("griddep: a wait in a for_range (at least one trip) covers what follows it") {
  const auto r = analyze(rows(at::in_for_range));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_missing) == 0);
}

TEST_CASE("griddep: a wait under a when does not cover the accesses after it") {
  const auto r = analyze(rows(at::in_when));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_missing) == 2);
}

TEST_CASE("griddep: a tensor declared independent of the previous grid is exempt, with a coverage note") {
  const auto r = analyze(rows(at::none, true, true));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_missing) == 1);  // Y only
  CHECK(r.status[static_cast<int>(rule_id::sync_griddep_missing)] == analysis::rule_status::failed);
  const auto clean = analyze(rows(at::top, true, true));
  CHECK(clean.errors == 0);
  CHECK(clean.status[static_cast<int>(rule_id::sync_griddep_missing)] == analysis::rule_status::partial);
  CHECK(to_text(rows(at::top, true, true)).find("input, independent of the previous grid") != std::string::npos);
}

TEST_CASE("griddep: without programmatic launch nothing needs a wait, and a wait is a warning") {
  const auto none = analyze(rows(at::none, false));
  CHECK(none.errors == 0);
  CHECK(none.warnings == 0);
  const auto r = analyze(rows(at::top, false));
  INFO(analysis::to_text(r));
  CHECK(count(r, rule_id::sync_griddep_no_pdl) == 1);
  CHECK(count(r, rule_id::sync_griddep_missing) == 0);
  CHECK(r.errors == 0);
}

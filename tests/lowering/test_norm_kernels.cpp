// The row kernels of kernels/norm/ (softmax, RMSNorm): every schedule the entry points pick (one per
// width bucket) builds, passes the analyzer with no errors or warnings, lowers with the width specialized, and
// assembles with NVRTC for sm_90a and sm_80 without register spills, with 16-byte global loads and
// stores in the PTX. No GPU needed. The register count of every schedule is printed (doctest MESSAGE,
// shown with -s) for docs/norm.md.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <cake/analysis.hpp>
#include <cake/jit.hpp>
#include <cake/lower/lower.hpp>

#include "kernels/norm/norm.hpp"

namespace {

using cake::kernels::norm_config;

struct built {
  cake::lower::lowered_kernel lowered;
  cake::jit::artifacts art;
};

built lower_and_build(const cake::program& p, long long cols) {
  built b;
  if (!p.errors.empty()) FAIL(to_text(p.errors[0]));
  const auto report = cake::analyze(p);
  INFO(p.kernel_name.view());
  CHECK(report.errors == 0);
  CHECK(report.warnings == 0);
  cake::lower::emit_options o;
  o.specialized = {{1, cols}};
  b.lowered = cake::lower::lower(p, o);
  REQUIRE_MESSAGE(b.lowered.ok, b.lowered.error);
  b.art = cake::jit::build(b.lowered.source, b.lowered.entry, to_string(p.target));
  REQUIRE_MESSAGE(b.art.ok, b.art.diagnostics());
  return b;
}

bool has(const std::string& ptx, const std::string& needle) { return ptx.find(needle) != std::string::npos; }

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// What every norm kernel's PTX must show, and the resources it may use.
void check_norm_kernel(const built& b, const norm_config& c, cake::target_id t, bool softmax) {
  const std::string& ptx = b.art.ptx;
  INFO(b.lowered.entry << " (" << to_string(t) << ")");
  CHECK(has(ptx, std::string(".target ") + std::string(to_string(t))));
  CHECK_FALSE(b.art.cubin.empty());
  CHECK(b.art.resources.spill_stores == 0);
  CHECK(b.art.resources.spill_loads == 0);
  CHECK(b.art.resources.stack_frame == 0);
  // 16-byte vectors: one load and one store per 8 bf16 of a row (the element-wise path is only taken
  // for a ragged or misaligned tail vector).
  CHECK(has(ptx, "ld.global.v4.u32"));
  CHECK(has(ptx, "st.global.v4.u32"));
  CHECK(count(ptx, "st.global.v4.u32") == c.elements_per_thread() / 8);
  // Row reductions: butterfly shuffles inside the warp; a warpgroup holding a row also syncs its
  // derived named barrier around the shared-memory exchange between its 4 warps.
  CHECK(has(ptx, "shfl.sync.bfly.b32"));
  if (!c.warp_units) {
    CHECK(b.lowered.smem_bytes > 0);
    CHECK(has(ptx, "bar.sync"));
    // a role of one unit names its barrier as a constant: a register id ("first + unit", several units) makes
    // ptxas reserve all 16 of the CTA's barriers ("used 16 barriers")
    CHECK((b.art.resources.barriers < 16) == (c.units == 1));
  } else {
    CHECK(b.lowered.smem_bytes == 0);
  }
  if (softmax) {
    CHECK(count(ptx, "ex2.approx") == c.elements_per_thread());  // one exp2 per element
    // The reciprocal of the row sum once per row the thread holds, not once per element.
    CHECK(count(ptx, "rcp.rn.f32") >= 1);
    CHECK(count(ptx, "rcp.rn.f32") <= c.rows);
  } else {
    CHECK(has(ptx, "rsqrt.approx"));
  }
  CHECK(b.lowered.block_threads == c.cta_threads());
  // Below ~128 registers up to 64 elements per thread (the register budget the schedules were chosen
  // for); wider rows use more (no spills), see docs/norm.md.
  if (c.elements_per_thread() <= 64) CHECK(b.art.resources.registers <= 128);
}

}  // namespace

TEST_CASE("norm width buckets: every cols in 1..16384 gets a schedule whose tile holds it") {
  using namespace cake::kernels;
  int last = 0;
  for (long long cols = 1; cols <= norm_max_width; ++cols) {
    const int w = norm_width_for(cols);
    REQUIRE(w >= cols);
    bool listed = false;
    for (int x : norm_widths) listed = listed || x == w;
    REQUIRE(listed);
    if (w != last) {
      for (const bool rms : {false, true}) {
        const auto c = rms ? rmsnorm_config_for(cols) : softmax_config_for(cols);
        INFO((rms ? "rmsnorm" : "softmax") << " cols " << cols << " width " << c.width);
        CHECK(c.width == w);
        CHECK(c.rows >= 1);
        // The blocked layout covers the unit's rows in whole passes of whole 16-byte vectors.
        CHECK((c.rows * c.width) % (8 * c.unit_threads()) == 0);
        CHECK(c.cta_threads() <= 1024);
        // The register tiles fit the CTA's register budget (no resource.register-tiles warning).
        CHECK(norm_tile_registers(c, rms) <= norm_register_budget(c));
        CHECK_FALSE(c.persistent);
        CHECK(c.target == cake::target_id::sm_90a);
      }
      last = w;
    }
  }
  CHECK(norm_width_for(0) == 0);
  CHECK(norm_width_for(norm_max_width + 1) == 0);
  CHECK(norm_width_for(1000) == 1024);
  CHECK(norm_width_for(5000) == 5120);
  CHECK(norm_width_for(2049) == 3072);
}

TEST_CASE("softmax: every width bucket lowers and assembles for sm_90a and sm_80 without spills") {
  using namespace cake::kernels;
  for (int w : norm_widths) {
    for (auto t : {cake::target_id::sm_90a, cake::target_id::sm_80}) {
      auto c = softmax_config_for(w);
      c.target = t;
      const auto b = lower_and_build(softmax_program(c), w);
      check_norm_kernel(b, c, t, true);
      MESSAGE("softmax " << to_string(t) << " width " << w << ": " << b.lowered.entry << ", E " << c.elements_per_thread() << ", " << b.art.resources.registers
                         << " registers, " << b.art.resources.spill_stores << " B spilled, smem " << b.lowered.smem_bytes);
    }
  }
}

TEST_CASE("rmsnorm: every width bucket lowers and assembles for sm_90a and sm_80 without spills") {
  using namespace cake::kernels;
  for (int w : norm_widths) {
    for (auto t : {cake::target_id::sm_90a, cake::target_id::sm_80}) {
      auto c = rmsnorm_config_for(w);
      c.target = t;
      const auto b = lower_and_build(rmsnorm_program(c), w);
      check_norm_kernel(b, c, t, false);
      MESSAGE("rmsnorm " << to_string(t) << " width " << w << ": " << b.lowered.entry << ", E " << c.elements_per_thread() << ", " << b.art.resources.registers
                         << " registers, " << b.art.resources.spill_stores << " B spilled, smem " << b.lowered.smem_bytes);
    }
  }
}

TEST_CASE("norm kernels: ragged widths are masked in the tile of the next bucket") {
  using namespace cake::kernels;
  for (long long cols : {100LL, 1000LL, 2000LL, 5000LL, 16000LL}) {
    const auto cs = softmax_config_for(cols);
    const auto bs = lower_and_build(softmax_program(cs), cols);
    check_norm_kernel(bs, cs, cake::target_id::sm_90a, true);
    // Columns past C load as -inf (exp2(-inf) = 0 in the sum); the bound is the specialized C.
    CHECK(has(bs.lowered.source, "constexpr long long d_C = " + std::to_string(cols) + "LL;"));
    CHECK(has(bs.lowered.source, "__int_as_float(" + std::to_string(__builtin_bit_cast(int, cake::neg_inf)) + ")"));
    const auto cr = rmsnorm_config_for(cols);
    const auto br = lower_and_build(rmsnorm_program(cr), cols);
    check_norm_kernel(br, cr, cake::target_id::sm_90a, false);
    CHECK(has(br.lowered.source, "constexpr long long d_C = " + std::to_string(cols) + "LL;"));
  }
}

TEST_CASE("norm kernels: the schedule variants the configs allow also lower (persistent walk, bf16 working tile)") {
  using namespace cake::kernels;
  for (int w : {1024, 8192}) {
    auto c = softmax_config_for(w);
    c.persistent = true;
    c.units = c.warp_units ? 16 : 4;  // 512-thread CTAs, one per SM
    const auto b = lower_and_build(softmax_program(c), w);
    CHECK(b.lowered.persistent);
    check_norm_kernel(b, c, cake::target_id::sm_90a, true);
    auto r = rmsnorm_config_for(w);
    r.persistent = true;
    r.units = c.units;
    check_norm_kernel(lower_and_build(rmsnorm_program(r), w), r, cake::target_id::sm_90a, false);
    auto h = softmax_config_for(w);
    h.f32_work = false;
    check_norm_kernel(lower_and_build(softmax_program(h), w), h, cake::target_id::sm_90a, true);
    auto q = rmsnorm_config_for(w);
    q.f32_work = false;  // RMSNorm has no working tile: the same kernel, under the same name
    CHECK(rmsnorm_program(q).kernel_name.view() == rmsnorm_program(rmsnorm_config_for(w)).kernel_name.view());
  }
}

TEST_CASE("norm kernels: names say the schedule and fit the 31-character limit") {
  using namespace cake::kernels;
  auto c = softmax_config_for(16384);
  c.persistent = true;
  c.target = cake::target_id::sm_80;
  const auto p = rmsnorm_program(c);
  CHECK(p.errors.empty());
  CHECK(p.kernel_name.view() == "rmsnorm_w16384_1x1g_f32_p_80");
  CHECK(softmax_sm90(softmax_config_for(1000)).kernel_name.view() == "softmax_w1024_1x4w_f32");
  CHECK(softmax_sm80().target == cake::target_id::sm_80);
  CHECK(rmsnorm_sm90().target == cake::target_id::sm_90a);
}

TEST_CASE("cake::softmax / cake::rmsnorm refuse bad arguments with an error naming the argument") {
  auto message = [](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  void* p = reinterpret_cast<void*>(std::uintptr_t{256});  // never dereferenced: the checks come first
  CHECK(has(message([&] { cake::softmax(nullptr, p, 4, 100, 100); }), "x must be a non-null, 2-byte aligned"));
  CHECK(has(message([&] { cake::softmax(p, static_cast<char*>(p) + 1, 4, 100, 100); }), "y must be a non-null, 2-byte aligned"));
  CHECK(has(message([&] { cake::softmax(p, p, 0, 100, 100); }), "rows = 0 must be at least 1"));
  CHECK(has(message([&] { cake::softmax(p, p, 4, 0, 100); }), "cols = 0 must be at least 1"));
  CHECK(has(message([&] { cake::softmax(p, p, 4, 100, 99); }), "ld = 99 is smaller than cols = 100"));
  CHECK(has(message([&] { cake::softmax(p, p, 4, 16385, 16385); }), "cols = 16385 is wider than 16384"));
  CHECK(has(message([&] { cake::rmsnorm(p, nullptr, p, 4, 100, 100, 1e-6f); }), "cake::rmsnorm: w must be a non-null"));
  CHECK(has(message([&] { cake::rmsnorm(p, p, p, 4, 100, 100, -1.0f); }), "eps = -1.000000 must be finite and not negative"));
  auto narrow = cake::kernels::softmax_config_for(512);
  CHECK(has(message([&] { cake::softmax_with(narrow, p, p, 4, 1000, 1000); }), "config.width = 512 is narrower than cols = 1000"));
}

// The k-means centroid update schedules (kernels/kmeans/update.hpp) lower and assemble with no spills,
// for bf16 and f16 centroids and D in {64, 100, 128, 320, 512} (parts = ceil(D / 64); D is a
// dynamic dim, so 100 and 128 share a kernel: the ragged 100 is lowered with D baked in instead; 320 takes
// the 512-wide tile), on sm_90a
// and, unchanged, on sm_80: the scatter-add of points into per-cluster sums and counts, the finalize
// (mean, empty clusters kept, norm and shift per centroid row) and the norms of the initial centroids.
#include <string>

#include "lower_check.hpp"

#include "kernels/kmeans/update.hpp"

using lower_check::has;
using lower_check::lower_and_build;

namespace {

constexpr int parts_for(long long d) { return static_cast<int>((d + 63) / 64); }
static_assert(cake::kernels::kmeans_update_detail::width_for(parts_for(320)) == 512);
static_assert(cake::kernels::kmeans_update_detail::width_for(parts_for(100)) == 128);

// The scatter program's atomics: an f32 add into global memory (atomicAdd with its result unused: PTX atom,
// SASS RED), per element on sm_80 and at ragged or misaligned groups.
bool has_f32_atomic(const std::string& ptx) { return has(ptx, "atom.global.add.f32") || has(ptx, "red.global.add.f32"); }

template <class In>
void check_scatter(cake::target_id t) {
  for (long long d : {64LL, 100LL, 128LL, 320LL, 512LL}) {
    INFO("D " << d);
    const cake::program p = cake::kernels::kmeans_scatter_program<In>(parts_for(d), t);
    CHECK(p.tensors.size() == 4);
    CHECK(p.scalars.size() == 1);
    const auto b = d == 100 ? lower_and_build(p, {{"D", d}}) : lower_and_build(p);
    CHECK(b.lowered.block_threads == 128);
    CHECK(has_f32_atomic(b.ptx()));
    CHECK(has(b.source(), "cake_dev::red_add_f32"));
    // The points' sums: 4 adjacent columns per vector reduction from sm_90 on (red.global.add.v4.f32; the
    // scalar fallback stays for ragged or misaligned groups); scalar reductions only on sm_80.
    CHECK(has(b.source(), "cake_dev::red_add_f32_group<4>") == (t != cake::target_id::sm_80));
    CHECK(has(b.ptx(), "red.global.add.v4.f32") == (t != cake::target_id::sm_80));
    CHECK_FALSE((t == cake::target_id::sm_80 && has(b.ptx(), "red.global.add.v")));
    // The counts: a row vector of ones, added once per point from one lane of its row (no tile of ones).
    CHECK_FALSE(has(b.source(), "ones"));
    MESSAGE(p.kernel_name.view() << " D " << d << ": " << b.art.resources.registers << " registers");
  }
}

template <class In>
void check_finalize(cake::target_id t) {
  using cake::kernels::kmeans_norm_form;
  for (long long d : {64LL, 100LL, 128LL, 320LL, 512LL}) {
    for (kmeans_norm_form m : {kmeans_norm_form::l2, kmeans_norm_form::cosine, kmeans_norm_form::none}) {
      INFO("D " << d << " form " << std::string(cake::kernels::to_string(m)));
      const cake::program p = cake::kernels::kmeans_finalize_program<In>(parts_for(d), m, t);
      CHECK(p.tensors.size() == (m == kmeans_norm_form::none ? 4u : 5u));  // no c_norm for form none
      const auto b = d == 100 ? lower_and_build(p, {{"D", d}}) : lower_and_build(p);
      CHECK(b.lowered.block_threads == 128);
      const std::string& ptx = b.ptx();
      CHECK(has(ptx, "shfl.sync.bfly"));                           // row sums across the lanes of a row
      CHECK(has(ptx, "div.rn.f32"));                               // sums / count, correctly rounded
      CHECK(has(ptx, "rsqrt") == (m == kmeans_norm_form::cosine));  // the cosine form
      CHECK_FALSE(has(ptx, "atom.global"));
      MESSAGE(p.kernel_name.view() << " D " << d << ": " << b.art.resources.registers << " registers");
    }
  }
}

template <class In>
void check_norms(cake::target_id t) {
  using cake::kernels::kmeans_norm_form;
  for (long long d : {64LL, 100LL, 128LL, 320LL, 512LL}) {
    for (kmeans_norm_form m : {kmeans_norm_form::l2, kmeans_norm_form::cosine}) {
      INFO("D " << d << " form " << std::string(cake::kernels::to_string(m)));
      const cake::program p = cake::kernels::kmeans_norms_program<In>(parts_for(d), m, t);
      CHECK(p.tensors.size() == 2);
      const auto b = d == 100 ? lower_and_build(p, {{"D", d}}) : lower_and_build(p);
      CHECK(b.lowered.block_threads == 128);
      CHECK(has(b.ptx(), "shfl.sync.bfly"));
      CHECK(has(b.ptx(), "rsqrt") == (m == kmeans_norm_form::cosine));
      MESSAGE(p.kernel_name.view() << " D " << d << ": " << b.art.resources.registers << " registers");
    }
  }
}

// The exact sums (kmeans_sums::i64_fixed): the scatter adds x * scale rounded to integers into i64 sums
// (cvt.rni.s64.f32, then a 64-bit integer reduction per element: no f32 atomic for the sums, and no vector
// reduction, which PTX has for floats only); the counts stay f32 adds of 1 (exact below 2^24). The
// finalize converts the sums back (cvt.rn.f32.s64) and takes no f32 atomics.
template <class In>
void check_exact(cake::target_id t) {
  using cake::kernels::kmeans_norm_form;
  using cake::kernels::kmeans_sums;
  for (long long d : {64LL, 100LL, 128LL, 512LL}) {
    INFO("D " << d);
    const cake::program sc = cake::kernels::kmeans_scatter_program<In>(parts_for(d), t, kmeans_sums::i64_fixed);
    REQUIRE(sc.errors.empty());
    CHECK(sc.scalars.size() == 2);  // K, scale
    CHECK(sc.tensors[2].dt == cake::dtype::i64);
    const auto b = d == 100 ? lower_and_build(sc, {{"D", d}}) : lower_and_build(sc);
    CHECK(has(b.source(), "cake_dev::red_add_s64_rn"));
    CHECK(has(b.ptx(), "cvt.rni.s64.f32"));
    CHECK((has(b.ptx(), "red.global.add.u64") || has(b.ptx(), "atom.global.add.u64")));
    CHECK_FALSE(has(b.ptx(), "red.global.add.v4.f32"));  // the sums take no float reduction
    CHECK(has_f32_atomic(b.ptx()));                       // the counts
    MESSAGE(sc.kernel_name.view() << " D " << d << ": " << b.art.resources.registers << " registers");
    const cake::program fi = cake::kernels::kmeans_finalize_program<In>(parts_for(d), kmeans_norm_form::l2, t, kmeans_sums::i64_fixed);
    REQUIRE(fi.errors.empty());
    CHECK(fi.scalars.size() == 1);  // inv_scale
    const auto f = d == 100 ? lower_and_build(fi, {{"D", d}}) : lower_and_build(fi);
    CHECK(has(f.ptx(), "cvt.rn.f32.s64"));
    CHECK_FALSE(has(f.ptx(), "atom.global"));
    MESSAGE(fi.kernel_name.view() << " D " << d << ": " << f.art.resources.registers << " registers");
  }
}

}  // namespace

TEST_CASE("k-means update: exact sums in i64 fixed point (scatter and finalize, bf16, f16, sm_90a and sm_80)") {
  check_exact<cake::bf16>(cake::target_id::sm_90a);
  check_exact<cake::f16>(cake::target_id::sm_90a);
  check_exact<cake::f16>(cake::target_id::sm_80);
}

TEST_CASE("k-means update: scatter-add of points into cluster sums and counts (bf16, f16, sm_90a and sm_80)") {
  check_scatter<cake::bf16>(cake::target_id::sm_90a);
  check_scatter<cake::f16>(cake::target_id::sm_90a);
  check_scatter<cake::bf16>(cake::target_id::sm_80);
  check_scatter<cake::f16>(cake::target_id::sm_80);
}

TEST_CASE("k-means update: finalize (mean, empty clusters kept, norm and shift per centroid, bf16, f16, sm_90a and sm_80)") {
  check_finalize<cake::bf16>(cake::target_id::sm_90a);
  check_finalize<cake::f16>(cake::target_id::sm_90a);
  check_finalize<cake::bf16>(cake::target_id::sm_80);
  check_finalize<cake::f16>(cake::target_id::sm_80);
}

TEST_CASE("k-means update: norms of the initial centroids (bf16, f16, sm_90a and sm_80)") {
  check_norms<cake::bf16>(cake::target_id::sm_90a);
  check_norms<cake::f16>(cake::target_id::sm_90a);
  check_norms<cake::bf16>(cake::target_id::sm_80);
  check_norms<cake::f16>(cake::target_id::sm_80);
}

// The sorted update (counting sort, then plain per-cluster sums): the count (one f32 add per point), the
// offsets (a row scan: shuffle-up across the 32 lanes of a row, no atomics), the placement (an atomic that
// returns the old count, then plain row stores of the points: no float atomics) and the segment sums (the
// column sum across the lanes of other rows, butterflies, then one vector reduction per 4 columns).
template <class In>
void check_sorted(cake::target_id t) {
  {
    const cake::program p = cake::kernels::kmeans_count_program(t);
    REQUIRE(p.errors.empty());
    const auto b = lower_and_build(p);
    CHECK(has_f32_atomic(b.ptx()));
  }
  {
    const cake::program p = cake::kernels::kmeans_offsets_program(t);
    REQUIRE(p.errors.empty());
    const auto b = lower_and_build(p);
    CHECK(has(b.ptx(), "shfl.sync.up"));
    CHECK_FALSE(has(b.ptx(), "atom.global"));
    MESSAGE(p.kernel_name.view() << ": " << b.art.resources.registers << " registers");
  }
  for (long long d : {64LL, 100LL, 128LL, 320LL, 512LL}) {
    INFO("D " << d);
    const cake::program pl = cake::kernels::kmeans_place_program<In>(parts_for(d), t);
    REQUIRE(pl.errors.empty());
    const auto b = d == 100 ? lower_and_build(pl, {{"D", d}}) : lower_and_build(pl);
    CHECK(has(b.ptx(), "atom.global.add.u32"));  // the slot (atomicAdd on an int, its old value used)
    CHECK_FALSE(has_f32_atomic(b.ptx()));
    CHECK(has(b.ptx(), "st.global.v4"));  // the rows, 16-byte stores
    MESSAGE(pl.kernel_name.view() << " D " << d << ": " << b.art.resources.registers << " registers");
    const cake::program ss = cake::kernels::kmeans_segment_sum_program<In>(parts_for(d), t);
    REQUIRE(ss.errors.empty());
    const auto s = d == 100 ? lower_and_build(ss, {{"D", d}}) : lower_and_build(ss);
    CHECK(has(s.source(), "cake_dev::red_add_f32_group<4>") == (t != cake::target_id::sm_80));
    CHECK(has_f32_atomic(s.ptx()));
    CHECK(has(s.ptx(), "shfl.sync.bfly"));  // the column sums across the row groups of the warp
    MESSAGE(ss.kernel_name.view() << " D " << d << ": " << s.art.resources.registers << " registers");
  }
}

TEST_CASE("k-means update: the sorted update (count, offsets, placement, segment sums), bf16 and f16, sm_90a and sm_80") {
  check_sorted<cake::bf16>(cake::target_id::sm_90a);
  check_sorted<cake::f16>(cake::target_id::sm_90a);
  check_sorted<cake::bf16>(cake::target_id::sm_80);
}

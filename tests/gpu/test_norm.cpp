// cake::softmax and cake::rmsnorm on the GPU against an f64 host reference: fresh random inputs at
// several scales (normal and uniform, up to magnitudes 8 and 30 for softmax), the output poisoned with
// the bf16 NaN pattern 0xFFFF first, then
//   - relative Frobenius error ||y - ref|| / ||ref|| < 1e-2 (bf16 output), no NaN or inf produced;
//   - every element of the rows x cols result written (no 0xFFFF left);
//   - nothing else written: the padding columns of y (ld > cols) and a guard zone after y's last row
//     keep their poison;
//   - nothing else read: x's padding columns and the guard after its last row hold NaN, which would
//     reach every output of a row through its max / sum of squares.
// Widths 128, 1000, 1024, 4096, 5000, 8192, 16384 (ragged ones: the tile of the next bucket, masked),
// rows 1, 7, 37, 1000, 4097 and 65536 for the narrow widths, padded leading dimensions (16-byte aligned
// rows and odd ones, which take the element-wise path), the sm_80 kernels run as compute_80 PTX, the
// persistent schedule and an in-place call. Host work (fills, reference) runs on all cores.
//
// CAKE_SEED=<n> reproduces a run (the seed is printed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/norm/norm.hpp"
#include "device_gate.hpp"

using namespace cake;

namespace {

constexpr std::uint16_t poison = 0xffff;   // bf16 NaN: what y holds before the kernel runs
constexpr std::uint16_t x_nan = 0x7fc0;    // bf16 NaN in x's padding and guard (must never be read)
constexpr long long guard = 4096;          // elements after the last row of x and y

bool usable_gpu() { return cake_gpu_test::require_device(8, 0, false, "cake::softmax / rmsnorm"); }
bool hopper() { return jit::driver::get().device(0).cc_major == 9 && jit::driver::get().device(0).cc_minor == 0; }

float bf(std::uint16_t b) { return harness::bf16_bits_to_float(b); }

struct norm_case {
  long long rows, cols, ld;
  harness::fill_spec fill;
  float eps = 1e-6f;
};
std::string describe(const norm_case& c) {
  std::string s = std::to_string(c.rows) + "x" + std::to_string(c.cols);
  if (c.ld != c.cols) s += " (ld " + std::to_string(c.ld) + ")";
  s += c.fill.dist == harness::distribution::normal ? ", normal " : ", uniform ";
  s += std::to_string(c.fill.scale);
  return s;
}

struct outcome {
  double rel_err = 0;
  long long nonfinite = 0;      // NaN or inf in the result (other than the poison)
  long long unwritten = 0;      // in-bounds elements still holding the poison
  long long pad_written = 0;    // padding columns of y that lost their poison
  long long guard_written = 0;  // guard elements after y that lost their poison
  bool ok() const { return rel_err < 1e-2 && nonfinite == 0 && unwritten == 0 && pad_written == 0 && guard_written == 0; }
};

// x (rows x ld, then the guard): random in-bounds values, NaN in the padding and the guard. The rows are
// filled in 64 chunks, each from its own generator seeded in order from `rng` (reproducible for a seed
// whatever the number of cores).
std::vector<std::uint16_t> make_input(const norm_case& c, harness::random_source& rng) {
  std::vector<std::uint16_t> x(static_cast<std::size_t>(c.rows * c.ld + guard), x_nan);
  constexpr int chunks = 64;
  std::uint64_t seeds[chunks];
  for (auto& s : seeds) s = rng.engine()();
  const long long per = (c.rows + chunks - 1) / chunks;
  harness::parallel_for(chunks, [&](long long b, long long e) {
    for (long long k = b; k < e; ++k) {
      harness::random_source local(seeds[k]);
      std::vector<harness::host_bf16> row(static_cast<std::size_t>(c.cols));
      for (long long r = k * per; r < std::min(c.rows, (k + 1) * per); ++r) {
        harness::fill_random(std::span<harness::host_bf16>(row), local, c.fill);
        for (long long j = 0; j < c.cols; ++j) x[static_cast<std::size_t>(r * c.ld + j)] = row[static_cast<std::size_t>(j)].bits;
      }
    }
  });
  return x;
}

// Runs `launch(x, y)` on fresh inputs and compares with the f64 reference computed by `reference(xrow,
// out)` (cols values of one row). in_place: y's buffer starts as a copy of x (padding and guard hold x's
// NaN instead of the poison) and the call is expected to read and write it.
template <class Launch, class Reference>
outcome check(const norm_case& c, harness::random_source& rng, Launch launch, Reference reference, bool in_place = false) {
  const auto x = make_input(c, rng);
  const std::size_t elems = x.size();
  jit::device_buffer dx(elems * 2), dy((elems * 2 + 3) / 4 * 4);
  dx.upload(std::span<const std::uint16_t>(x));
  dy.fill_u32(0xffffffffu);
  if (in_place) dy.upload(std::span<const std::uint16_t>(x));
  launch(dx.address(), dy.address());
  const auto& d = jit::driver::get();
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "waiting for the kernel");
  const std::uint16_t untouched = in_place ? x_nan : poison;  // what y's padding and guard must still hold
  std::vector<std::uint16_t> y(elems);
  dy.download(std::span<std::uint16_t>(y));

  struct partial {
    double err2 = 0, ref2 = 0;
    long long nonfinite = 0, unwritten = 0, pad = 0, guard = 0;
  };
  constexpr int chunks = 64;
  std::vector<partial> parts(chunks);
  const long long per = (c.rows + chunks - 1) / chunks;
  harness::parallel_for(chunks, [&](long long b, long long e) {
    std::vector<double> in(static_cast<std::size_t>(c.cols)), ref(static_cast<std::size_t>(c.cols));
    for (long long k = b; k < e; ++k) {
      partial& p = parts[static_cast<std::size_t>(k)];
      for (long long r = k * per; r < std::min(c.rows, (k + 1) * per); ++r) {
        const std::size_t row = static_cast<std::size_t>(r * c.ld);
        for (long long j = 0; j < c.cols; ++j) in[static_cast<std::size_t>(j)] = bf(x[row + static_cast<std::size_t>(j)]);
        reference(in, ref);
        for (long long j = 0; j < c.cols; ++j) {
          const std::uint16_t bits = y[row + static_cast<std::size_t>(j)];
          if (bits == poison && !in_place) {
            ++p.unwritten;
            continue;
          }
          const double v = bf(bits);
          if (!std::isfinite(v)) {
            ++p.nonfinite;
            continue;
          }
          const double rv = ref[static_cast<std::size_t>(j)];
          p.err2 += (v - rv) * (v - rv);
          p.ref2 += rv * rv;
        }
        for (long long j = c.cols; j < c.ld; ++j) p.pad += y[row + static_cast<std::size_t>(j)] != untouched;
      }
    }
  });
  outcome o;
  double err2 = 0, ref2 = 0;
  for (const auto& p : parts) {
    err2 += p.err2, ref2 += p.ref2;
    o.nonfinite += p.nonfinite, o.unwritten += p.unwritten, o.pad_written += p.pad;
  }
  for (std::size_t i = static_cast<std::size_t>(c.rows * c.ld); i < elems; ++i) o.guard_written += y[i] != untouched;
  o.rel_err = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return o;
}

void softmax_reference(const std::vector<double>& x, std::vector<double>& y) {
  double m = -INFINITY, s = 0;
  for (double v : x) m = std::max(m, v);
  for (std::size_t j = 0; j < x.size(); ++j) s += (y[j] = std::exp(x[j] - m));
  for (double& v : y) v /= s;
}

struct rms_reference {
  std::vector<double> w;
  double eps;
  void operator()(const std::vector<double>& x, std::vector<double>& y) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
    for (std::size_t j = 0; j < x.size(); ++j) y[j] = x[j] * rstd * w[j];
  }
};

// The scales cases cycle through: large magnitudes (8, 30) make softmax rows peaked, small ones flat.
const harness::fill_spec softmax_fills[] = {{harness::distribution::normal, 1.0f, 0.0f},  {harness::distribution::uniform, 8.0f, 0.0f},
                                            {harness::distribution::normal, 30.0f, 0.0f}, {harness::distribution::uniform, 30.0f, 0.0f},
                                            {harness::distribution::normal, 0.1f, 0.0f},  {harness::distribution::normal, 8.0f, 0.0f}};
const harness::fill_spec rms_fills[] = {{harness::distribution::normal, 1.0f, 0.0f},   {harness::distribution::uniform, 8.0f, 0.0f},
                                        {harness::distribution::normal, 0.01f, 0.0f},  {harness::distribution::uniform, 30.0f, 0.0f},
                                        {harness::distribution::normal, 0.1f, 0.5f}};
constexpr float rms_eps[] = {1e-6f, 1e-5f, 1e-2f};

// The shapes: every width with rows 1, 7, 37, 1000, 4097; 65536 rows for the narrow widths; padded
// leading dimensions (16-byte aligned rows: 1032, 136, 16392; odd: 1003, 5003).
std::vector<norm_case> shapes(bool softmax) {
  std::vector<norm_case> v;
  int k = 0;
  auto fill = [&] { return softmax ? softmax_fills[k % 6] : rms_fills[k % 5]; };
  auto add = [&](long long rows, long long cols, long long ld) {
    v.push_back({rows, cols, ld, fill(), rms_eps[k % 3]});
    ++k;
  };
  for (long long cols : {128, 1000, 1024, 4096, 5000, 8192, 16384}) {
    for (long long rows : {1, 7, 37, 1000, 4097}) add(rows, cols, cols);
    if (cols <= 1024) add(65536, cols, cols);
  }
  add(37, 1000, 1032);
  add(37, 1000, 1003);
  add(1000, 128, 136);
  add(7, 5000, 5003);
  add(7, 16384, 16392);
  return v;
}

harness::random_source seeded() {
  auto rng = harness::random_source::fresh();
  std::printf("seed %llu (CAKE_SEED=%llu reproduces this run)\n", static_cast<unsigned long long>(rng.seed()), static_cast<unsigned long long>(rng.seed()));
  return rng;
}

std::vector<std::uint16_t> random_weight(long long cols, harness::random_source& rng) {
  std::vector<std::uint16_t> w;
  w.reserve(static_cast<std::size_t>(cols));
  for (const auto& v : harness::random_vector<harness::host_bf16>(static_cast<std::size_t>(cols), rng, {harness::distribution::normal, 0.5f, 1.0f}))
    w.push_back(v.bits);
  return w;
}
std::vector<double> widen(const std::vector<std::uint16_t>& w) {
  std::vector<double> v;
  for (auto b : w) v.push_back(bf(b));
  return v;
}

void report(const char* what, const norm_case& c, const outcome& o, std::uint64_t seed) {
  INFO(what << " " << describe(c) << " (seed " << seed << "): rel_err " << o.rel_err << ", nonfinite " << o.nonfinite << ", unwritten " << o.unwritten
            << ", padding written " << o.pad_written << ", guard written " << o.guard_written);
  CHECK(o.ok());
  std::printf("%-8s %-40s rel_err %.2e%s\n", what, describe(c).c_str(), o.rel_err, o.ok() ? "" : "  FAILED");
}

}  // namespace

TEST_CASE("cake::softmax matches the f64 reference on every width bucket, ragged widths and padded rows") {
  if (!usable_gpu()) return;
  auto rng = seeded();
  for (const auto& c : shapes(true)) {
    const auto o = check(c, rng, [&](const void* x, void* y) { softmax(x, y, c.rows, c.cols, c.ld); }, softmax_reference);
    report("softmax", c, o, rng.seed());
  }
}

TEST_CASE("cake::rmsnorm matches the f64 reference on every width bucket, ragged widths and padded rows") {
  if (!usable_gpu()) return;
  auto rng = seeded();
  for (const auto& c : shapes(false)) {
    const auto w = random_weight(c.cols, rng);
    const auto dw = jit::to_device(w);
    const rms_reference ref{widen(w), c.eps};
    const auto o = check(c, rng, [&](const void* x, void* y) { rmsnorm(x, dw.address(), y, c.rows, c.cols, c.ld, c.eps); }, ref);
    report("rmsnorm", c, o, rng.seed());
  }
}

TEST_CASE("in place (y == x), the sm_80 kernels (compute_80 PTX) and the persistent schedule") {
  if (!usable_gpu()) return;
  auto rng = seeded();
  const harness::fill_spec f{harness::distribution::normal, 8.0f, 0.0f};
  for (long long cols : {1000LL, 8192LL}) {
    const norm_case c{1000, cols, cols, f, 1e-5f};
    const auto w = random_weight(cols, rng);
    const auto dw = jit::to_device(w);
    const rms_reference rref{widen(w), c.eps};
    // In place: y's buffer holds x (check() uploads it) and is passed as both.
    report("softmax", c, check(c, rng, [&](const void*, void* y) { softmax(y, y, c.rows, c.cols, c.ld); }, softmax_reference, true), rng.seed());
    report("rmsnorm", c, check(c, rng, [&](const void*, void* y) { rmsnorm(y, dw.address(), y, c.rows, c.cols, c.ld, c.eps); }, rref, true), rng.seed());
    // The sm_80 schedule (on Hopper: compute_80 PTX; on Ampere this is what the entry points pick anyway).
    auto s80 = kernels::softmax_config_for(cols);
    s80.target = target_id::sm_80;
    report("sm80 sm", c, check(c, rng, [&](const void* x, void* y) { softmax_with(s80, x, y, c.rows, c.cols, c.ld); }, softmax_reference), rng.seed());
    auto r80 = kernels::rmsnorm_config_for(cols);
    r80.target = target_id::sm_80;
    report("sm80 rms", c, check(c, rng, [&](const void* x, void* y) { rmsnorm_with(r80, x, dw.address(), y, c.rows, c.cols, c.ld, c.eps); }, rref),
           rng.seed());
    // Persistent: one 512-thread CTA per SM walking the row blocks.
    if (hopper()) {
      auto sp = kernels::softmax_config_for(cols);
      sp.persistent = true;
      sp.units = sp.warp_units ? 16 : 4;
      report("pers sm", c, check(c, rng, [&](const void* x, void* y) { softmax_with(sp, x, y, c.rows, c.cols, c.ld); }, softmax_reference), rng.seed());
      auto rp = kernels::rmsnorm_config_for(cols);
      rp.persistent = true;
      rp.units = sp.units;
      report("pers rms", c, check(c, rng, [&](const void* x, void* y) { rmsnorm_with(rp, x, dw.address(), y, c.rows, c.cols, c.ld, c.eps); }, rref),
             rng.seed());
    }
  }
}

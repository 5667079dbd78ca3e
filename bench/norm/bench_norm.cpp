// cake::softmax and cake::rmsnorm against a device-to-device copy of the same bytes, on the same GPU in
// the same process: L2 flushed before every run, CUDA events, median of --runs (>= 100) runs in 4
// rounds alternating Cake and the copy. Both kernels are memory bound, so the yardstick is bandwidth:
// achieved GB/s = (bytes read + bytes written) / time, and ratio = copy time / Cake time (1.0: Cake
// moves its bytes as fast as a copy does; the copy also reads and writes R x C bf16).
//
// The peer is cuMemcpyDtoDAsync (resolved from the driver library Cake has loaded); a copy written in
// Cake with the schedule of each row (load + store, the same 16-byte vectors and masking) is timed too
// ("cake_copy_ms"): the distance between it and softmax / RMSNorm is what the row math costs.
// Every shape is checked against an f64 reference (a sample of rows) before it is timed.
//
// Shapes marked "tuned" are the ones the schedule choice is to be tuned on (--sweep times the candidate
// schedules on them); the others are held out. The defaults were chosen by register counts and
// occupancy, before any measurement (docs/norm.md).
//
//   cake_bench_norm [--runs N] [--json FILE] [--driver VERSION] [--quick] [--sweep] [--cols W,W,...] [google benchmark flags]
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <cake/harness/parallel.hpp>
#include <cake/harness/random.hpp>
#include <cake/harness/timing.hpp>
#include <cake/jit/device_memory.hpp>

#include "kernels/norm/norm.hpp"
#include "../common.hpp"

namespace {

using cake::kernels::norm_config;
using cake::norm_kind;

struct shape {
  long long r, c;
  bool tuned;
};
struct row {
  std::string kernel, config;
  shape s;
  double cake_ms = 0, peer_ms = 0, copy_ms = 0, rel_err = 0, bytes = 0;
  int regs = 0;
  bool ok = false, sweep = false, is_default = true;
};

int g_runs = 100;
std::vector<row> g_rows;

// ---- the peer: cuMemcpyDtoDAsync from the driver library cake::jit loaded ----------------------
using memcpy_fn = decltype(&::cuMemcpyDtoDAsync);
memcpy_fn memcpy_dtod() {
  static memcpy_fn f = [] {
    const auto& d = cake::jit::driver::get();
    void* h = ::dlopen(d.library().c_str(), RTLD_NOW | RTLD_NOLOAD);
    void* p = h ? ::dlsym(h, "cuMemcpyDtoDAsync_v2") : nullptr;
    if (!p) throw cake::jit::error("cake_bench_norm: cuMemcpyDtoDAsync_v2 not found in " + d.library());
    return reinterpret_cast<memcpy_fn>(p);
  }();
  return f;
}

// ---- a copy in Cake with the schedule of a row kernel -----------------------------------------
cake::program copy_program(const norm_config& c) {
  using namespace cake;
  auto k = kernel("copy_rows").target(c.target);
  if (c.persistent) k.persistent();
  auto [R, C] = k.dims("R", spec("C"));
  auto X = k.input<bf16>("X", dims(R, C));
  auto Y = k.output<bf16>("Y", dims(R, C));
  auto rows = k.parallel(tiles(R, c.rows_per_cta()));
  auto body = [&](role& r) {
    auto x = r.fragment<bf16>("x", {c.rows, c.width});
    const index_expr unit = c.warp_units ? r.warp() : r.warpgroup();
    r.for_each(rows, [&](auto i) {
      r.load(x, X.tile(i * c.units + unit, 0));
      r.store(Y.tile(i * c.units + unit, 0), x);
    });
  };
  if (c.warp_units) k.role("rows", warps(c.units), body);
  else k.role("rows", warpgroups(c.units), body);
  return k.build();
}

// ---- data and checks ------------------------------------------------------------------------------
struct buffers {
  shape s;
  std::vector<std::uint16_t> hx, hw;
  cake::jit::device_buffer x, w, y;
  explicit buffers(shape sh, cake::harness::random_source& rng) : s(sh), x(bytes()), w(static_cast<std::size_t>(2 * sh.c + 16)), y(bytes()) {
    hx.resize(static_cast<std::size_t>(s.r * s.c));
    constexpr int chunks = 64;
    std::uint64_t seeds[chunks];
    for (auto& v : seeds) v = rng.engine()();
    const long long per = (static_cast<long long>(hx.size()) + chunks - 1) / chunks;
    cake::harness::parallel_for(chunks, [&](long long b, long long e) {
      for (long long k = b; k < e; ++k) {
        cake::harness::random_source local(seeds[k]);
        const long long lo = std::min<long long>(k * per, static_cast<long long>(hx.size())), hi = std::min<long long>(lo + per, static_cast<long long>(hx.size()));
        std::vector<cake::harness::host_bf16> v(static_cast<std::size_t>(hi - lo));
        cake::harness::fill_random(std::span<cake::harness::host_bf16>(v), local, {cake::harness::distribution::normal, 2.0f, 0.0f});
        for (long long i = lo; i < hi; ++i) hx[static_cast<std::size_t>(i)] = v[static_cast<std::size_t>(i - lo)].bits;
      }
    });
    for (const auto& v : cake::harness::random_vector<cake::harness::host_bf16>(static_cast<std::size_t>(s.c), rng, {cake::harness::distribution::normal, 0.5f, 1.0f}))
      hw.push_back(v.bits);
    x.upload(std::span<const std::uint16_t>(hx));
    w.upload(std::span<const std::uint16_t>(hw));
  }
  std::size_t bytes() const { return static_cast<std::size_t>(2 * s.r * s.c); }
};

constexpr float eps = 1e-6f;

// Relative Frobenius error over a sample of rows (the first and last 128 and 256 spread between).
double check(norm_kind kind, buffers& b) {
  const auto& d = cake::jit::driver::get();
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize", "after the checked run");
  std::vector<long long> rows;
  for (long long r = 0; r < std::min(b.s.r, 128LL); ++r) rows.push_back(r);
  for (long long r = std::max(0LL, b.s.r - 128); r < b.s.r; ++r) rows.push_back(r);
  for (long long k = 0; k < 256; ++k) rows.push_back((k * 2654435761LL) % b.s.r);
  double err2 = 0, ref2 = 0;
  std::vector<std::uint16_t> y(static_cast<std::size_t>(b.s.c));
  std::vector<double> ref(static_cast<std::size_t>(b.s.c));
  for (long long r : rows) {
    b.y.download(std::span<std::uint16_t>(y), static_cast<std::size_t>(2 * r * b.s.c));
    const std::uint16_t* x = b.hx.data() + r * b.s.c;
    auto xv = [&](long long j) { return static_cast<double>(cake::harness::bf16_bits_to_float(x[j])); };
    if (kind == norm_kind::softmax) {
      double m = -INFINITY, s = 0;
      for (long long j = 0; j < b.s.c; ++j) m = std::max(m, xv(j));
      for (long long j = 0; j < b.s.c; ++j) s += (ref[static_cast<std::size_t>(j)] = std::exp(xv(j) - m));
      for (auto& v : ref) v /= s;
    } else {
      double ss = 0;
      for (long long j = 0; j < b.s.c; ++j) ss += xv(j) * xv(j);
      const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(b.s.c) + eps);
      for (long long j = 0; j < b.s.c; ++j) ref[static_cast<std::size_t>(j)] = xv(j) * rstd * cake::harness::bf16_bits_to_float(b.hw[static_cast<std::size_t>(j)]);
    }
    for (long long j = 0; j < b.s.c; ++j) {
      const double v = cake::harness::bf16_bits_to_float(y[static_cast<std::size_t>(j)]), rv = ref[static_cast<std::size_t>(j)];
      err2 += std::isfinite(v) ? (v - rv) * (v - rv) : 1e30;
      ref2 += rv * rv;
    }
  }
  return std::sqrt(err2 / ref2);
}

// ---- timing -----------------------------------------------------------------------------------------
// Median times of a and b over --runs runs in 4 alternating rounds (clock drift hits both alike).
template <class A, class B>
std::pair<double, double> time_pair(A a, B b) {
  constexpr int rounds = 4;
  cake::harness::timing_options o;
  o.runs = (g_runs + rounds - 1) / rounds;
  o.warmup = 3;
  std::vector<double> sa, sb;
  for (int i = 0; i < rounds; ++i) {
    const auto ta = cake::harness::time_gpu(a, o);
    const auto tb = cake::harness::time_gpu(b, o);
    sa.insert(sa.end(), ta.samples_ms.begin(), ta.samples_ms.end());
    sb.insert(sb.end(), tb.samples_ms.begin(), tb.samples_ms.end());
  }
  return {cake::harness::summarize(sa).median_ms, cake::harness::summarize(sb).median_ms};
}
double time_one(const std::function<void(CUstream)>& f) {
  cake::harness::timing_options o;
  o.runs = g_runs;
  o.warmup = 3;
  return cake::harness::time_gpu(f, o).median_ms;
}

std::string config_name(norm_kind kind, const norm_config& c) {
  return std::string(cake::kernels::norm_detail::kernel_name(kind == norm_kind::softmax ? "softmax" : "rmsnorm", c).view());
}

cake::target_id device_target() {
  const auto& dev = cake::jit::driver::get().device(0);
  return dev.cc_major == 9 && dev.cc_minor == 0 ? cake::target_id::sm_90a : cake::target_id::sm_80;
}

void run_kernel(norm_kind kind, const norm_config& c, buffers& b, CUstream st) {
  if (kind == norm_kind::softmax) cake::softmax_with(c, b.x.address(), b.y.address(), b.s.r, b.s.c, b.s.c, st);
  else cake::rmsnorm_with(c, b.x.address(), b.w.address(), b.y.address(), b.s.r, b.s.c, b.s.c, eps, st);
}

// One shape and one kernel with its default schedule: check, then time against the copy and the Cake copy.
void bench_shape_or_throw(benchmark::State& state, norm_kind kind, shape s);
void bench_shape(benchmark::State& state, norm_kind kind, shape s) {
  try {
    bench_shape_or_throw(state, kind, s);
  } catch (const std::exception& e) {  // a failed build or launch skips the shape, the others still run
    std::fprintf(stderr, "cake_bench_norm: %lldx%lld: %s\n", s.r, s.c, e.what());
    state.SkipWithError(e.what());
  }
}
void bench_shape_or_throw(benchmark::State& state, norm_kind kind, shape s) {
  auto rng = cake::harness::random_source::fresh();
  buffers b(s, rng);
  norm_config c = kind == norm_kind::softmax ? cake::kernels::softmax_config_for(s.c) : cake::kernels::rmsnorm_config_for(s.c);
  c.target = device_target();
  row r;
  r.kernel = kind == norm_kind::softmax ? "softmax" : "rmsnorm";
  r.s = s;
  r.config = config_name(kind, c);
  r.bytes = 2.0 * b.bytes() + (kind == norm_kind::rmsnorm ? 2.0 * s.c : 0.0);
  b.y.fill_u32(0xffffffffu);
  run_kernel(kind, c, b, nullptr);
  r.rel_err = check(kind, b);
  r.ok = r.rel_err < 1e-2;
  r.regs = cake::norm_entry::kernel_for(kind, c, s.c, 0).artifacts().resources.registers;
  // The Cake copy with the same schedule (its own kernel, same buffers).
  cake::lower::emit_options opt;
  opt.specialized = {{1, s.c}};
  const auto copy = cake::runtime_kernel::build(copy_program(c), opt);
  const auto copy_cake = [&](CUstream st) {
    const cake::tensor_arg args[] = {cake::tensor_view(b.x.address(), {s.r, s.c}), cake::tensor_view(b.y.address(), {s.r, s.c})};
    copy.launch(args, {}, st);
  };
  const auto copy_peer = [&](CUstream st) {
    const auto& d = cake::jit::driver::get();
    d.check(memcpy_dtod()(b.y.get(), b.x.get(), b.bytes(), st), "cuMemcpyDtoDAsync", "the copy peer");
  };
  for (auto _ : state) {
    const auto [ck, pk] = time_pair([&](CUstream st) { run_kernel(kind, c, b, st); }, copy_peer);
    r.cake_ms = ck;
    r.peer_ms = pk;
    r.copy_ms = time_one(copy_cake);
    state.SetIterationTime(r.cake_ms / 1e3);
  }
  state.counters["cake_GBps"] = r.bytes / r.cake_ms / 1e6;
  state.counters["peer_GBps"] = 2.0 * b.bytes() / r.peer_ms / 1e6;
  state.counters["ratio"] = r.peer_ms / r.cake_ms;
  state.counters["regs"] = r.regs;
  state.counters["rel_err"] = r.rel_err;
  if (!r.ok) state.SkipWithError("correctness check failed");
  g_rows.push_back(r);
}

// --sweep: the candidate schedules for a width (valid ones: whole 16-byte vectors per thread, 16 to 128
// elements per thread, register tiles within the CTA's budget), each checked and timed alone; the rows
// are written with "sweep": true.
std::vector<norm_config> candidates(norm_kind kind, long long cols) {
  const norm_config base = kind == norm_kind::softmax ? cake::kernels::softmax_config_for(cols) : cake::kernels::rmsnorm_config_for(cols);
  std::vector<norm_config> v{base};
  const bool rms = kind == norm_kind::rmsnorm;
  auto add = [&](norm_config c) {
    const int e = c.elements_per_thread();
    if (e < 16 || e > 128 || (c.rows * c.width) % (8 * c.unit_threads()) || c.cta_threads() > 1024) return;
    if (cake::kernels::norm_tile_registers(c, rms) > cake::kernels::norm_register_budget(c)) return;  // would spill
    for (const auto& o : v)
      if (o == c) return;
    v.push_back(c);
  };
  for (bool warp : {true, false})
    for (int rows = 1; rows <= 64; rows *= 2)
      for (int units : warp ? std::vector<int>{4, 8} : std::vector<int>{1, 2}) {
        norm_config c = base;
        c.warp_units = warp;
        c.rows = rows;
        c.units = units;
        add(c);
      }
  for (int threads : {512, 1024}) {
    norm_config c = base;
    c.persistent = true;
    c.units = threads / c.unit_threads();
    add(c);
  }
  if (!rms) {  // softmax in place in the loaded tile (RMSNorm has no working tile)
    norm_config h = base;
    h.f32_work = false;
    add(h);
  }
  return v;
}

void sweep(const std::vector<shape>& shapes) {
  auto rng = cake::harness::random_source::fresh();
  for (const auto& s : shapes) {
    if (!s.tuned) continue;
    buffers b(s, rng);
    for (norm_kind kind : {norm_kind::softmax, norm_kind::rmsnorm}) {
      norm_config fallback = kind == norm_kind::softmax ? cake::kernels::softmax_config_for(s.c) : cake::kernels::rmsnorm_config_for(s.c);
      fallback.target = device_target();
      for (norm_config c : candidates(kind, s.c)) {
        c.target = device_target();
        row r;
        r.kernel = kind == norm_kind::softmax ? "softmax" : "rmsnorm";
        r.s = s;
        r.sweep = true;
        r.config = config_name(kind, c);
        r.is_default = r.config == config_name(kind, fallback);
        r.bytes = 2.0 * b.bytes() + (kind == norm_kind::rmsnorm ? 2.0 * s.c : 0.0);
        try {
          b.y.fill_u32(0xffffffffu);
          run_kernel(kind, c, b, nullptr);
          r.rel_err = check(kind, b);
          r.ok = r.rel_err < 1e-2;
          r.regs = cake::norm_entry::kernel_for(kind, c, s.c, 0).artifacts().resources.registers;
          r.cake_ms = time_one([&](CUstream st) { run_kernel(kind, c, b, st); });
        } catch (const std::exception& e) {
          std::printf("sweep %s %lldx%lld %s: %s\n", r.kernel.c_str(), s.r, s.c, r.config.c_str(), e.what());
          continue;
        }
        std::printf("sweep %-8s %7lldx%-6lld %-30s %3d regs %8.4f ms %7.1f GB/s%s%s\n", r.kernel.c_str(), s.r, s.c, r.config.c_str(), r.regs, r.cake_ms,
                    r.bytes / r.cake_ms / 1e6, r.is_default ? "  (default)" : "", r.ok ? "" : "  WRONG");
        g_rows.push_back(r);
      }
    }
  }
}

// ---- output ------------------------------------------------------------------------------------------
void write_json(const std::string& path, const std::string& command, const std::string& driver) {
  const auto& dev = cake::jit::driver::get().device(0);
  std::ostringstream j;
  j.setf(std::ios::fixed);
  j << "{\n  \"gpu\": \"" << dev.name << "\", \"sm\": \"" << to_string(device_target()) << "\", \"driver\": \"" << driver << "\", \"cuda\": \""
    << dev.driver_version / 1000 << "." << dev.driver_version % 1000 / 10 << "\", \"date\": \"" << cake_bench::today() << "\",\n  \"command\": \"" << command
    << "\",\n"
    << "  \"method\": \"CUDA events, L2 flushed before each run, median of " << g_runs
    << " runs in 4 alternating rounds of Cake and the peer (cuMemcpyDtoDAsync of the R x C bf16 input), same process, same buffers, after a 2 s "
       "warm-up; GB/s = (bytes read + bytes written) / time; cake_copy_ms: a load + store kernel in Cake with the same schedule, median of "
    << g_runs << " runs; rel_err over a sample of 640 rows against f64\",\n"
    << "  \"rows\": [\n";
  double log_s = 0, log_r = 0;
  int n_s = 0, n_r = 0;
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const auto& r = g_rows[i];
    const double peer_bytes = 4.0 * r.s.r * r.s.c;
    j.precision(4);
    j << "    {\"kernel\": \"" << r.kernel << "\", \"dtype\": \"bf16\", \"shape\": {\"R\": " << r.s.r << ", \"C\": " << r.s.c << "}, \"cake_ms\": " << r.cake_ms;
    if (!r.sweep) {
      j << ", \"peer\": \"copy\", \"peer_ms\": " << r.peer_ms;
      if (r.ok) j << ", \"ratio\": " << r.peer_ms / r.cake_ms;
    }
    j.precision(1);
    j << ", \"cake_gbps\": " << r.bytes / r.cake_ms / 1e6;
    if (!r.sweep) j << ", \"peer_gbps\": " << peer_bytes / r.peer_ms / 1e6;
    if (!r.sweep) {
      j.precision(4);
      j << ", \"cake_copy_ms\": " << r.copy_ms;
      j.precision(1);
      j << ", \"cake_copy_gbps\": " << peer_bytes / r.copy_ms / 1e6;
    }
    j.precision(5);
    j << ", \"rel_err\": " << r.rel_err << ", \"ok\": " << (r.ok ? "true" : "false") << ", \"tuned\": " << (r.s.tuned ? "true" : "false");
    if (r.sweep) j << ", \"sweep\": true, \"default\": " << (r.is_default ? "true" : "false");
    j << ", \"regs\": " << r.regs << ", \"config\": \"" << r.config << "\"}" << (i + 1 < g_rows.size() ? "," : "") << "\n";
    if (r.ok && !r.sweep) (r.kernel == "softmax" ? log_s : log_r) += std::log(r.peer_ms / r.cake_ms), ++(r.kernel == "softmax" ? n_s : n_r);
  }
  j.precision(4);
  // One geometric mean per kernel that was timed against the copy (a --sweep-only run has none).
  j << "  ],\n  \"summary\": {";
  if (n_s) j << "\"softmax_geomean_ratio\": " << std::exp(log_s / n_s) << (n_r ? ", " : "");
  if (n_r) j << "\"rmsnorm_geomean_ratio\": " << std::exp(log_r / n_r);
  j << "}\n}\n";
  std::ofstream(path) << j.str();
  std::printf("%s", j.str().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string json = "norm.json", driver = "unknown", command = "cake_bench_norm";
  bool quick = false, do_sweep = false;
  std::vector<long long> only_cols;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    command += std::string(" ") + argv[i];
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) g_runs = std::max(1, std::atoi(argv[++i])), command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--driver") && i + 1 < argc) driver = argv[++i], command += std::string(" ") + argv[i];
    else if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--sweep")) do_sweep = true;
    else if (!std::strcmp(argv[i], "--cols") && i + 1 < argc) {  // only the shapes of these row widths
      command += std::string(" ") + argv[i + 1];
      for (const char* p = argv[++i]; *p;) {
        char* end = nullptr;
        const long long c = std::strtoll(p, &end, 10);
        if (end == p || c <= 0) {
          std::fprintf(stderr, "cake_bench_norm: --cols takes widths separated by commas, e.g. 4096,16384 (got '%s')\n", argv[i]);
          return 2;
        }
        only_cols.push_back(c);
        p = *end == ',' ? end + 1 : end;
      }
    }
    else rest.push_back(argv[i]);
  }
  try {
    if (!cake::jit::driver::available()) {
      std::printf("cake_bench_norm: no GPU: %s\n", cake::jit::driver::unavailable_reason().c_str());
      return 0;
    }
    // Tuned: one shape per power-of-two width, 2^27 elements (256 MiB in, 256 MiB out). Held out: the
    // ends of the range at smaller sizes, ragged widths and widths between the powers of two.
    std::vector<shape> shapes =
        quick ? std::vector<shape>{{131072, 1024, true}, {8192, 16384, true}}
              : std::vector<shape>{{1048576, 128, true}, {524288, 256, true}, {262144, 512, true},   {131072, 1024, true},
                                   {65536, 2048, true},  {32768, 4096, true}, {16384, 8192, true},   {8192, 16384, true},
                                   {65536, 128, false},  {4096, 16384, false}, {131072, 1000, false}, {65536, 3584, false},
                                   {32768, 5120, false}, {32768, 5000, false}, {16384, 7168, false},  {8192, 12288, false}};
    if (!only_cols.empty())
      std::erase_if(shapes, [&](const shape& s) { return std::find(only_cols.begin(), only_cols.end(), s.c) == only_cols.end(); });
    for (norm_kind kind : {norm_kind::softmax, norm_kind::rmsnorm})
      for (const auto& s : shapes)
        benchmark::RegisterBenchmark((std::string(kind == norm_kind::softmax ? "softmax/" : "rmsnorm/") + std::to_string(s.r) + "x" + std::to_string(s.c) +
                                      (s.tuned ? "" : "/held_out"))
                                         .c_str(),
                                     [kind, s](benchmark::State& st) { bench_shape(st, kind, s); })
            ->UseManualTime()
            ->Iterations(1)
            ->Unit(benchmark::kMillisecond);
    {  // warm the GPU up to its sustained clock before anything is timed
      cake::jit::device_buffer a(512u << 20), b(512u << 20);
      const auto t0 = std::chrono::steady_clock::now();
      while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2)) {
        for (int i = 0; i < 20; ++i) memcpy_dtod()(b.get(), a.get(), a.size(), nullptr);
        cake::jit::driver::get().cuCtxSynchronize();
      }
    }
    if (do_sweep) sweep(shapes);
    int bargc = static_cast<int>(rest.size());
    benchmark::Initialize(&bargc, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    write_json(json, command, driver);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cake_bench_norm: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

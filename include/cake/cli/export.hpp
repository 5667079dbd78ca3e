#pragma once
// Registration of kernels in a schedule file for the `cake` command-line tool (docs/cli.md).
//
//   #include <cake/cake.hpp>
//   #include "kernels/gemm/sm90_bf16.hpp"
//
//   CAKE_EXPORT(gemm_bf16, cake::kernels::gemm_bf16_sm90(),
//               reference("gemm"), peer("cublas"), shape(4096, 4096, 4096), shape(129, 256, 72));
//
// CAKE_EXPORT(name, program, options...) evaluates `program` at compile time (a constexpr cake::program:
// every builder check that fails is a compile error, which `cake check` reports with its rule id, line
// and value) and registers it under `name` with its options:
//
//   reference("gemm")      what `cake run` checks it against: "gemm" is D[M,N] = A[M,K] * B[N,K]^T
//                          (tensors A, B, D in that order; bf16 or e4m3 inputs, bf16 output; an e4m3
//                          kernel takes one f32 scalar, the scale). No other reference exists yet.
//   peer("cublas")         what `cake bench` times it against: "cublas" (bf16), "cublaslt" (e4m3).
//   shape(M, N, K)         a problem size for run/bench/estimate (dims named M, N, K); repeatable.
//   shape({{"M", 64}, {"N", 128}, {"K", 256}})   the same for any dim names.
//   scalar_value("scale", 0.5)  the value of a scalar parameter (k.param) in run/bench.
//   tolerance(1e-2)        largest relative Frobenius error `cake run` accepts.
//
// The option names are found inside the macro (no `cake::cli::` needed). The tool compiles the file
// with this header already included, so a schedule file needs only <cake/cake.hpp>; include this header
// too to compile the file on its own.
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <string_view>
#include <utility>
#include <vector>

#include "../ir/program.hpp"
#include "../version.hpp"

namespace cake::cli {

struct dim_assignment {
  std::string name;
  long long value = 0;
};
using problem_shape = std::vector<dim_assignment>;

struct export_options {
  std::string reference;  // "" = none
  std::string peer;       // "" = none
  std::vector<problem_shape> shapes;
  std::vector<std::pair<std::string, double>> scalars;
  double tolerance = 0;   // 0 = the reference's default
};

// One option, applied in order.
struct option {
  void (*apply)(export_options&, const option&) = nullptr;
  std::string text;
  problem_shape shape;
  double number = 0;
};

inline option reference(std::string_view what) {
  return {[](export_options& o, const option& x) { o.reference = x.text; }, std::string(what), {}, 0};
}
inline option peer(std::string_view who) {
  return {[](export_options& o, const option& x) { o.peer = x.text; }, std::string(who), {}, 0};
}
inline option shape(long long m, long long n, long long k) {
  return {[](export_options& o, const option& x) { o.shapes.push_back(x.shape); }, {}, {{"M", m}, {"N", n}, {"K", k}}, 0};
}
inline option shape(std::initializer_list<dim_assignment> dims) {
  return {[](export_options& o, const option& x) { o.shapes.push_back(x.shape); }, {}, problem_shape(dims), 0};
}
inline option scalar_value(std::string_view name, double value) {
  return {[](export_options& o, const option& x) { o.scalars.emplace_back(x.text, x.number); }, std::string(name), {}, value};
}
inline option tolerance(double rel_err) {
  return {[](export_options& o, const option& x) { o.tolerance = x.number; }, {}, {}, rel_err};
}

template <class... Options>
export_options make_options(const Options&... opts) {
  export_options o;
  (opts.apply(o, opts), ...);
  return o;
}

struct exported_kernel {
  std::string name;
  const program* schedule = nullptr;  // static storage in the schedule's library
  export_options options;
  const char* file = "";
  int line = 0;
};

// ---- families: many candidates from one compiled library (docs/evolve.md) -------------------------------
//
//   constexpr gemm_sm90_config naive{.stages = 1, .cluster_m = 1, .direct_store = true, .persistent = false};
//   CAKE_EXPORT_FAMILY(gemm_bf16, cake::kernels::gemm_bf16_sm90, naive,
//                      domain(axis("bn", &gemm_sm90_config::bn, {128, 192, 256}),
//                             axis("pingpong", &gemm_sm90_config::pingpong, {false, true})),
//                      reference("gemm"), peer("cublas"), shape(4096, 4096, 4096));
//
// A family is a constexpr generator from a parameter struct to a program, a seed value of that struct,
// and a finite domain per parameter (an axis: a name, a member of the struct, its values). The seed's
// program is evaluated at compile time (every builder check on it is a compile error, as for
// CAKE_EXPORT); the other points of the domain are generated at run time by `cake evolve`, where the
// builder records what it finds in the Program (program::errors) and the analyzer reports it: a bad
// point is a diagnostic, never a crash or a compile error. The seed's own value of every axis belongs to
// the domain (added when the list lacks it), so the seed is always a candidate.

struct family_axis {
  std::string name;
  std::vector<long long> values;                 // as the tool sees them (bool: 0, 1)
  bool boolean = false;                          // shown as false/true
  std::function<void(void*, long long)> set;     // writes a value into the parameter struct
  std::function<long long(const void*)> get;     // reads it (the seed's value)
};

// axis(name, &Params::member, {values...}): an int or bool member of the family's parameter struct.
template <class P, class T>
family_axis axis(std::string_view name, T P::*member, std::initializer_list<std::type_identity_t<T>> values) {
  static_assert(std::is_integral_v<T>, "[cli.family-axis] a family axis is an int or bool member of the parameter struct (its values are whole numbers)");
  family_axis a;
  a.name = std::string(name);
  a.boolean = std::is_same_v<T, bool>;
  for (const T& v : values) a.values.push_back(static_cast<long long>(v));
  a.set = [member](void* p, long long v) { static_cast<P*>(p)->*member = static_cast<T>(v); };
  a.get = [member](const void* p) { return static_cast<long long>(static_cast<const P*>(p)->*member); };
  return a;
}

template <class... Axes>
std::vector<family_axis> domain(Axes... axes) {
  return {std::move(axes)...};
}

struct exported_family {
  std::string name;
  std::vector<family_axis> axes;
  std::vector<long long> seed;  // the seed's value on every axis
  // The program of a point (one value per axis, in axis order): the seed struct with those values set,
  // run through the generator at run time.
  std::function<program(const std::vector<long long>&)> generate;
  const program* seed_schedule = nullptr;  // the seed's program, evaluated at compile time
  export_options options;
  const char* file = "";
  int line = 0;
};

// A TEST-ONLY rule hook (docs/evolve.md, "Closing the loop"): a predicate over a Program that the tool's
// analyzer gate (cake check, cake evolve's analyze gate, cake corpus-gate) reports as an error with the
// id `test.<name>`. It stands in for a real analyzer rule (include/cake/analysis/rules.hpp) where a real
// one would be artificial: the failure class it rejects is scripted (CAKE_GPU_MOCK), not observed.
// The analyzer itself (cake::analyze) never sees it.
struct exported_rule {
  std::string id;                       // "test.<name>"
  bool (*fires)(const program&) = nullptr;
  std::string message, help;
  const char* file = "";
  int line = 0;
};

struct registry {
  std::vector<exported_kernel> kernels;
  std::vector<exported_family> families;
  std::vector<exported_rule> rules;  // CAKE_EXPORT_TEST_RULE
};

// One registry per schedule library (the tool compiles it with hidden visibility, so each library
// has its own; the tool reads it through the library's cake_cli_registry_v1()).
inline registry& the_registry() {
  static registry r;
  return r;
}

template <class P>
struct family_registrar {
  family_registrar(std::string name, program (*gen)(P), const P& seed, const program* seed_schedule, std::vector<family_axis> axes, export_options o,
                   const char* file, int line) {
    exported_family f;
    f.name = std::move(name);
    for (auto& a : axes) {
      const long long s = a.get(&seed);
      bool found = false;
      for (long long v : a.values) found = found || v == s;
      if (!found) a.values.insert(a.values.begin(), s);
      f.seed.push_back(s);
    }
    f.axes = std::move(axes);
    f.generate = [gen, seed, setters = f.axes](const std::vector<long long>& point) {
      P p = seed;
      for (std::size_t i = 0; i < setters.size() && i < point.size(); ++i) setters[i].set(&p, point[i]);
      return gen(p);
    };
    f.seed_schedule = seed_schedule;
    f.options = std::move(o);
    f.file = file;
    f.line = line;
    the_registry().families.push_back(std::move(f));
  }
};

struct registrar {
  registrar(std::string name, const program* p, export_options o, const char* file, int line) {
    the_registry().kernels.push_back({std::move(name), p, std::move(o), file, line});
  }
};

struct rule_registrar {
  rule_registrar(std::string id, bool (*fires)(const program&), std::string message, std::string help, const char* file, int line) {
    the_registry().rules.push_back({std::move(id), fires, std::move(message), std::move(help), file, line});
  }
};

// A fingerprint of the types the tool and a schedule library exchange: a library built from other
// headers than the tool is refused instead of being misread.
constexpr unsigned long long abi_mix(unsigned long long h, unsigned long long v) { return (h ^ v) * 1099511628211ull; }
constexpr unsigned long long abi_fingerprint() {
  unsigned long long h = 1469598103934665603ull;
  for (char c : std::string_view(CAKE_VERSION_STRING)) h = abi_mix(h, static_cast<unsigned char>(c));
  const unsigned long long sizes[] = {sizeof(program), sizeof(op), sizeof(build_error), sizeof(src_loc), sizeof(smem_region), sizeof(role_decl),
                                      sizeof(exported_kernel), sizeof(export_options), sizeof(exported_family), sizeof(family_axis), sizeof(registry), sizeof(exported_rule), static_cast<unsigned long long>(op_kind_count),
                                      static_cast<unsigned long long>(capacity::ops), static_cast<unsigned long long>(capacity::roles)};
  for (unsigned long long v : sizes)
    h = abi_mix(h, v);
  return h;
}

}  // namespace cake::cli

// CAKE_EXPORT(name, program_expression, options...): see the top of this file. A program expression
// with a comma outside parentheses (a template argument list) must be wrapped in parentheses.
#define CAKE_EXPORT(name, ...) CAKE_CLI_EXPORT_IMPL_(name, __VA_ARGS__)
#define CAKE_CLI_EXPORT_IMPL_(name, expr, ...)                                                                                 \
  namespace cake_export_##name {                                                                                               \
  inline constexpr ::cake::program schedule = (expr);                                                                          \
  inline const ::cake::cli::registrar registered{#name, &schedule,                                                            \
                                                 [] {                                                                          \
                                                   using namespace ::cake::cli;                                                \
                                                   return ::cake::cli::make_options(__VA_ARGS__);                              \
                                                 }(),                                                                          \
                                                 __FILE__, __LINE__};                                                          \
  }

// CAKE_EXPORT_FAMILY(name, generator, seed, domain(axis(...), ...), options...): see "families" above.
// `generator` is a function `cake::program f(Params)` (constexpr), `seed` a constant expression of type
// Params; the options are CAKE_EXPORT's.
#define CAKE_EXPORT_FAMILY(name, generator, seed, axes, ...)                                                                   \
  namespace cake_export_family_##name {                                                                                       \
  inline constexpr auto seed_params = (seed);                                                                                  \
  inline constexpr ::cake::program seed_schedule = (generator)(seed_params);                                                   \
  inline const ::cake::cli::family_registrar<std::remove_cv_t<decltype(seed_params)>> registered{                              \
      #name, (generator), seed_params, &seed_schedule,                                                                         \
      [] {                                                                                                                     \
        using namespace ::cake::cli;                                                                                           \
        return axes;                                                                                                           \
      }(),                                                                                                                     \
      [] {                                                                                                                     \
        using namespace ::cake::cli;                                                                                           \
        return ::cake::cli::make_options(__VA_ARGS__);                                                                         \
      }(),                                                                                                                     \
      __FILE__, __LINE__};                                                                                                     \
  }

// CAKE_EXPORT_TEST_RULE(name, predicate, "message", "help"): the test-only rule hook above, with the id
// "test.<name>" (name: [a_z0-9_], '_' shown as '-'). `predicate` is a function bool(const cake::program&).
#define CAKE_EXPORT_TEST_RULE(name, predicate, message, help)                                                                  \
  namespace cake_export_rule_##name {                                                                                          \
  inline const ::cake::cli::rule_registrar registered{[] {                                                                     \
                                                        std::string id = "test." #name;                                       \
                                                        for (char& ch : id)                                                    \
                                                          if (ch == '_') ch = '-';                                             \
                                                        return id;                                                             \
                                                      }(),                                                                     \
                                                      (predicate), message, help, __FILE__, __LINE__};                         \
  }

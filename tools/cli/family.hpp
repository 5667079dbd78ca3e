#pragma once
// Kernel families in a loaded schedule library (CAKE_EXPORT_FAMILY, include/cake/cli/export.hpp): the
// names of their points, and the one lookup every command and the GPU child use to turn a kernel name
// into a Program. A name is one of
//   NAME                         an exported kernel, or a family's seed (its compile-time program)
//   FAMILY@V0,V1,...@SHAPES      a point of a family (one value per axis, in axis order), generated at
//                                run time, with the shapes a GPU check uses (M=..,N=..,K=..;M=..,...)
// The second form is how `cake evolve` hands a candidate to the `cake __gpu` child: the child loads the
// same library and generates the same Program, so a candidate costs no compile of its own.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <cake/cli/export.hpp>

#include "library.hpp"
#include "util.hpp"

namespace cake_cli {

// "bm=128,bn=256,pingpong=true": the candidate's name in logs and messages (all axes, in axis order).
inline std::string point_id(const cake::cli::exported_family& f, const std::vector<long long>& point) {
  std::string s;
  for (std::size_t i = 0; i < f.axes.size() && i < point.size(); ++i) {
    s += (i ? "," : "") + f.axes[i].name + "=";
    s += f.axes[i].boolean ? (point[i] ? "true" : "false") : std::to_string(point[i]);
  }
  return s;
}

// The point a "name=value,..." text names (point_id's form; bool values true/false/1/0). Axes it does not
// name take `base`'s values (all must be named without a base). Returns why not, or "".
inline std::string parse_point(const cake::cli::exported_family& f, const std::string& text, std::vector<long long>& point,
                               const std::vector<long long>* base = nullptr) {
  point = base ? *base : std::vector<long long>(f.axes.size(), 0);
  std::vector<bool> named(f.axes.size(), false);
  std::size_t p = 0;
  while (p < text.size()) {
    std::size_t q = text.find(',', p);
    if (q == std::string::npos) q = text.size();
    const std::string part = text.substr(p, q - p);
    p = q + 1;
    if (part.empty()) continue;
    const auto eq = part.find('=');
    if (eq == std::string::npos) return "'" + part + "' is not NAME=VALUE";
    const std::string name = part.substr(0, eq), value = part.substr(eq + 1);
    std::size_t a = 0;
    while (a < f.axes.size() && f.axes[a].name != name) ++a;
    if (a == f.axes.size()) return "the family has no axis named '" + name + "'";
    long long v = 0;
    if (f.axes[a].boolean && (value == "true" || value == "false")) {
      v = value == "true";
    } else {
      char* end = nullptr;
      v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || !end || *end) return "'" + value + "' is not a whole number (axis " + name + ")";
      if (f.axes[a].boolean && v != 0 && v != 1) return "axis " + name + " is a bool: true, false, 1 or 0, not '" + value + "'";
    }
    point[a] = v;
    named[a] = true;
  }
  if (!base)
    for (std::size_t a = 0; a < f.axes.size(); ++a)
      if (!named[a]) return "axis " + f.axes[a].name + " has no value";
  return {};
}

inline std::string shapes_spec(const std::vector<cake::cli::problem_shape>& shapes) {
  std::string s;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    s += i ? ";" : "";
    for (std::size_t j = 0; j < shapes[i].size(); ++j) s += (j ? "," : "") + shapes[i][j].name + "=" + std::to_string(shapes[i][j].value);
  }
  return s;
}

inline std::string point_spec(const cake::cli::exported_family& f, const std::vector<long long>& point, const std::vector<cake::cli::problem_shape>& shapes) {
  std::string s = f.name + "@";
  for (std::size_t i = 0; i < point.size(); ++i) s += (i ? "," : "") + std::to_string(point[i]);
  return s + "@" + shapes_spec(shapes);
}

inline const cake::cli::exported_family* find_family(const schedule_library& lib, const std::string& name) {
  if (!lib.reg) return nullptr;
  for (const auto& f : lib.reg->families)
    if (f.name == name) return &f;
  return nullptr;
}

// The program of a point, generated at run time: builder findings are in its `errors` (the analyzer
// reports them); a generator that throws is reported here, never propagated.
struct generated_point {
  std::unique_ptr<cake::program> program;
  std::string error;  // the generator threw
};

inline generated_point generate_point(const cake::cli::exported_family& f, const std::vector<long long>& point) {
  generated_point g;
  try {
    g.program = std::make_unique<cake::program>(f.generate(point));
  } catch (const std::exception& e) {
    g.error = std::string("the family's generator threw: ") + e.what();
  } catch (...) {
    g.error = "the family's generator threw a non-standard exception";
  }
  return g;
}

// A kernel by name (the forms above), with the storage a generated point needs.
struct resolved_kernel {
  cake::cli::exported_kernel kernel;
  std::unique_ptr<cake::program> owned;
  const cake::cli::exported_family* family = nullptr;
  std::vector<long long> point;
  std::string display;  // "gemm_bf16[bn=128,...]" for a point, else the name
  std::string error;    // empty: found
};

inline bool parse_shapes_spec(const std::string& s, std::vector<cake::cli::problem_shape>& out) {
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t end = s.find(';', at);
    if (end == std::string::npos) end = s.size();
    cake::cli::problem_shape shape;
    std::size_t p = at;
    while (p < end) {
      std::size_t q = s.find(',', p);
      if (q == std::string::npos || q > end) q = end;
      const std::string part = s.substr(p, q - p);
      const auto eq = part.find('=');
      if (eq == std::string::npos) return false;
      shape.push_back({part.substr(0, eq), std::atoll(part.c_str() + eq + 1)});
      p = q + 1;
    }
    out.push_back(shape);
    at = end + 1;
  }
  return true;
}

inline resolved_kernel resolve_kernel(const schedule_library& lib, const std::string& name) {
  resolved_kernel r;
  r.display = name;
  const auto at = name.find('@');
  if (at == std::string::npos) {
    for (const auto& k : lib.kernels())
      if (k.name == name) {
        r.kernel = k;
        return r;
      }
    if (const auto* f = find_family(lib, name)) {
      r.kernel = {f->name, f->seed_schedule, f->options, f->file, f->line};
      return r;
    }
    r.error = "no exported kernel or family named " + name;
    return r;
  }
  const auto at2 = name.find('@', at + 1);
  const std::string fam = name.substr(0, at), values = name.substr(at + 1, at2 == std::string::npos ? std::string::npos : at2 - at - 1);
  r.family = find_family(lib, fam);
  if (!r.family) {
    r.error = "no family named " + fam;
    return r;
  }
  std::size_t p = 0;
  while (p <= values.size() && !values.empty()) {
    std::size_t q = values.find(',', p);
    if (q == std::string::npos) q = values.size();
    r.point.push_back(std::atoll(values.substr(p, q - p).c_str()));
    p = q + 1;
  }
  if (r.point.size() != r.family->axes.size()) {
    r.error = "a point of " + fam + " needs " + std::to_string(r.family->axes.size()) + " values, not " + std::to_string(r.point.size());
    return r;
  }
  auto g = generate_point(*r.family, r.point);
  if (!g.error.empty()) {
    r.error = g.error;
    return r;
  }
  r.owned = std::move(g.program);
  r.kernel = {name, r.owned.get(), r.family->options, r.family->file, r.family->line};
  if (at2 != std::string::npos) {
    std::vector<cake::cli::problem_shape> shapes;
    if (!parse_shapes_spec(name.substr(at2 + 1), shapes)) {
      r.error = "bad shapes in " + name;
      return r;
    }
    if (!shapes.empty()) r.kernel.options.shapes = shapes;
  }
  r.display = fam + "[" + point_id(*r.family, r.point) + "]";
  return r;
}

}  // namespace cake_cli

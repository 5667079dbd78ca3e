#pragma once
// Failure clustering of `cake evolve` (docs/evolve.md, "Failures: clusters and proposed corpus entries").
//
// Candidates that passed the analyzer but then failed a GPU gate (run or bench: a wrong result, a hang the
// trap caught or the child's timeout, a crash, a compute-sanitizer report) are grouped by a signature:
//   (gate, kind, pattern)   pattern: the shortest conjunction of axis=value terms (at most 3) that every
//                           member has and no candidate that passed the same gate has; the groups of one
//                           (gate, kind) are taken greedily, the pattern covering the most failures first.
// Failures no pure pattern separates from the passing candidates form one cluster per (gate, kind), marked
// "pure": false, whose pattern is what its members share. Each cluster also lists the axes constant over
// its members and those that vary. A cluster has a reproducer (the member with the fewest axes off the
// seed; `cake evolve` then walks it towards the seed, one axis at a time, re-running the gates, and
// shrinks the shape: failures_minimize in evolve.hpp) and a fixed twin (the passing candidate nearest to
// the reproducer). Proposals are files for a person to accept; nothing is added to any corpus here.
//
// This file works on log lines alone (no library), so `cake failures LOG` gives the same clusters as the
// search that wrote the log.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "util.hpp"

namespace cake_cli::failures {

// A candidate's axes as the log names them ("bn=128,pingpong=true" -> {bn,128},{pingpong,true}).
using point = std::vector<std::pair<std::string, std::string>>;

inline point parse_candidate(const std::string& id) {
  point p;
  std::size_t at = 0;
  while (at < id.size()) {
    std::size_t q = id.find(',', at);
    if (q == std::string::npos) q = id.size();
    const std::string part = id.substr(at, q - at);
    const auto eq = part.find('=');
    if (eq != std::string::npos) p.push_back({part.substr(0, eq), part.substr(eq + 1)});
    at = q + 1;
  }
  return p;
}

inline std::string str_field(const std::string& line, const char* name) {
  const std::regex re(std::string("\"") + name + "\":\"((?:[^\"\\\\]|\\\\.)*)\"");
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : std::string();
}

// The failure kind of a rejected run/bench line, from the child's evidence (tools/cli/gpu.hpp):
// "hang" (the hang trap named an op, or the child was killed at its time limit), "sanitizer" (compute-
// sanitizer reported errors), "crash" (the child died), "wrong" (the check against the reference failed).
inline std::string failure_kind(const std::string& line) {
  const auto ev = line.find("\"evidence\":");
  const std::string e = ev == std::string::npos ? line : line.substr(ev);
  const std::string status = str_field(e, "status");
  if (status == "timed_out" || e.find("\"hang\":{") != std::string::npos) return "hang";
  if (e.find("compute-sanitizer") != std::string::npos && e.find("\"sanitizer\":") != std::string::npos) return "sanitizer";
  if (status == "crashed") return "crash";
  return "wrong";
}

inline std::string kind_text(const std::string& kind) {
  if (kind == "hang") return "hang (trap or time limit)";
  if (kind == "sanitizer") return "sanitizer report";
  if (kind == "crash") return "crash";
  return "wrong result";
}

// M*N*K of "M=..,N=..,K=.." (any dims: the product of the values).
inline double shape_volume(const std::string& shape) {
  double v = 1;
  static const std::regex num(R"(=(\d+))");
  for (std::sregex_iterator it(shape.begin(), shape.end(), num), end; it != end; ++it) v *= std::stod((*it)[1]);
  return v;
}

// The smallest shape (by M*N*K) whose row of the evidence failed, as "M=..,N=..,K=..", or "".
inline std::string smallest_failing_shape(const std::string& line) {
  static const std::regex row(R"(\{"shape":\{"M":(\d+),"N":(\d+),"K":(\d+)\},"ok":false)");
  std::string best;
  double best_v = 0;
  for (std::sregex_iterator it(line.begin(), line.end(), row), end; it != end; ++it) {
    const double v = std::stod((*it)[1]) * std::stod((*it)[2]) * std::stod((*it)[3]);
    if (best.empty() || v < best_v) {
      best_v = v;
      best = "M=" + (*it)[1].str() + ",N=" + (*it)[2].str() + ",K=" + (*it)[3].str();
    }
  }
  return best;
}

// The log as the clustering reads it: the last line of every (candidate, shape, gate) of one family.
struct log_view {
  std::string family;
  std::string seed;  // the first candidate of the log (evolve evaluates the seed first)
  std::map<std::string, std::string> last;  // candidate|shape|gate -> line
  std::vector<std::string> order;           // candidates in order of first appearance
};

inline void add_line(log_view& v, const std::string& line) {
  const std::string cand = str_field(line, "candidate");
  if (cand.empty()) return;
  if (v.seed.empty()) v.seed = cand;
  const std::string k = cand + "|" + str_field(line, "shape") + "|" + str_field(line, "gate");
  const std::string verdict = str_field(line, "verdict");
  if (verdict == "budget" || verdict == "no-gpu") return;  // not results
  if (std::find(v.order.begin(), v.order.end(), cand) == v.order.end()) v.order.push_back(cand);
  v.last[k] = line;
}

struct failure {
  std::string candidate, shape, gate, kind, line;
  point params;  // the candidate parsed once (the pattern search matches it many times)
};

struct cluster {
  std::string gate, kind;
  point pattern;  // the separating terms (pure) or the shared ones (not pure)
  bool pure = true;
  std::vector<std::string> members;
  std::map<std::string, std::string> constant;              // axis -> the one value of every member
  std::map<std::string, std::set<std::string>> varying;      // axis -> the members' values
  std::vector<std::string> member_lines;                     // each member's failing line
  std::string reproducer, reproducer_shape, twin;            // twin: "" when nothing passed
  std::vector<std::string> minimize_steps;                   // what the minimization tried (evolve)

  std::string pattern_text() const {
    std::string s;
    for (const auto& [a, v] : pattern) s += (s.empty() ? "" : " & ") + a + "=" + v;
    return s.empty() ? std::string("(no shared value)") : s;
  }
  std::string signature() const { return gate + " / " + kind_text(kind) + ": " + pattern_text() + (pure ? "" : " (not separating)"); }
};

inline bool matches(const point& p, const point& terms) {
  for (const auto& t : terms)
    if (std::find(p.begin(), p.end(), t) == p.end()) return false;
  return true;
}

inline int distance(const point& a, const point& b) {
  int d = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) d += a[i].second != b[i].second;
  return d + static_cast<int>(a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

// The failures of the log and the candidates that passed each GPU gate.
inline std::vector<failure> collect(const log_view& v, std::map<std::string, std::set<std::string>>& passed) {
  std::vector<failure> out;
  // The GPU gate lines of each candidate, visited in the log's candidate order (one pass over the lines:
  // a search's log holds thousands of candidates).
  std::map<std::string, std::size_t> pos;
  for (std::size_t i = 0; i < v.order.size(); ++i) pos.emplace(v.order[i], i);
  std::vector<std::vector<std::pair<std::string, const std::string*>>> by(v.order.size());  // (gate, line)
  for (const auto& [k, line] : v.last) {
    const auto bar = k.find('|'), bar2 = k.rfind('|');
    const std::string gate = k.substr(bar2 + 1);
    if (gate != "run" && gate != "bench") continue;
    if (const auto it = pos.find(k.substr(0, bar)); it != pos.end()) by[it->second].push_back({gate, &line});
  }
  std::set<std::string> failed_once;
  for (std::size_t i = 0; i < v.order.size(); ++i)
    for (const auto& [gate, line] : by[i]) {
      const std::string& cand = v.order[i];
      const std::string verdict = str_field(*line, "verdict");
      if (verdict == "pass") passed[gate].insert(cand);
      if (verdict == "reject" && failed_once.insert(cand).second) out.push_back({cand, str_field(*line, "shape"), gate, failure_kind(*line), *line, parse_candidate(cand)});
    }
  // A candidate that failed somewhere does not count as passing that gate elsewhere (another shape).
  for (auto& [g, s] : passed)
    for (const auto& f : out) s.erase(f.candidate);
  return out;
}

inline std::vector<cluster> cluster_failures(const log_view& v) {
  std::map<std::string, std::set<std::string>> passed;
  const auto fails = collect(v, passed);
  std::vector<cluster> out;
  std::map<std::pair<std::string, std::string>, std::vector<const failure*>> groups;  // (gate, kind)
  for (const auto& f : fails) groups[{f.gate, f.kind}].push_back(&f);
  const point seed = parse_candidate(v.seed);
  for (auto& [gk, members] : groups) {
    std::vector<point> pass_pts;
    for (const auto& c : passed[gk.first]) pass_pts.push_back(parse_candidate(c));
    std::vector<const failure*> left = members;
    while (!left.empty()) {
      // The conjunction (1 to 3 terms of one member) covering the most remaining failures and no passing candidate.
      point best;
      int best_n = 0;
      auto consider = [&](const point& terms) {
        for (const auto& q : pass_pts)
          if (matches(q, terms)) return;
        int cover = 0;
        for (const auto* g : left) cover += matches(g->params, terms);
        if (cover > best_n || (cover == best_n && terms.size() < best.size())) best = terms, best_n = cover;
      };
      for (const auto* f : left) {
        const point& p = f->params;
        const std::size_t n = p.size();
        for (std::size_t i = 0; i < n; ++i) {
          consider({p[i]});
          for (std::size_t j = i + 1; j < n; ++j) {
            consider({p[i], p[j]});
            for (std::size_t k = j + 1; k < n; ++k) consider({p[i], p[j], p[k]});
          }
        }
      }
      cluster c;
      c.gate = gk.first;
      c.kind = gk.second;
      std::vector<const failure*> in, rest;
      if (best_n > 0) {
        c.pattern = best;
        for (const auto* f : left) (matches(f->params, best) ? in : rest).push_back(f);
      } else {
        c.pure = false;
        in = left;
      }
      for (const auto* f : in) {
        c.members.push_back(f->candidate);
        c.member_lines.push_back(f->line);
      }
      // Constant and varying axes over the members (a non-separating cluster's pattern is the constant ones).
      const point& first = in.front()->params;
      for (std::size_t a = 0; a < first.size(); ++a) {
        std::set<std::string> vals;
        for (const auto* f : in) {
          const point& p = f->params;
          if (a < p.size()) vals.insert(p[a].second);
        }
        if (vals.size() == 1) c.constant[first[a].first] = *vals.begin();
        else c.varying[first[a].first] = vals;
        if (!c.pure && vals.size() == 1) c.pattern.push_back(first[a]);
      }
      // The reproducer: the fewest axes off the seed, then the smallest failing shape in its evidence.
      const failure* rep = in.front();
      for (const auto* f : in)
        if (distance(f->params, seed) < distance(rep->params, seed)) rep = f;
      c.reproducer = rep->candidate;
      c.reproducer_shape = rep->shape;
      for (const auto& [k, line] : v.last) {
        if (k.compare(0, c.reproducer.size() + 1, c.reproducer + "|") != 0 || str_field(line, "gate") != c.gate) continue;
        if (str_field(line, "verdict") != "reject" || failure_kind(line) != c.kind) continue;
        const std::string s = smallest_failing_shape(line);
        if (!s.empty() && shape_volume(s) < shape_volume(c.reproducer_shape)) c.reproducer_shape = s;
      }
      out.push_back(std::move(c));
      left = rest;
    }
  }
  return out;
}

// The fixed twin: the candidate that passed the cluster's gate nearest to the reproducer (fewest differing
// axes; ties: nearer the seed, then the log's order).
inline std::string fixed_twin(const log_view& v, const cluster& c) {
  std::map<std::string, std::set<std::string>> passed;
  collect(v, passed);
  const point rep = parse_candidate(c.reproducer), seed = parse_candidate(v.seed);
  std::string best;
  for (const auto& cand : v.order) {
    if (!passed[c.gate].count(cand)) continue;
    const point p = parse_candidate(cand);
    if (best.empty()) {
      best = cand;
      continue;
    }
    const point b = parse_candidate(best);
    const int d = distance(p, rep), bd = distance(b, rep);
    if (d < bd || (d == bd && distance(p, seed) < distance(b, seed))) best = cand;
  }
  return best;
}

inline std::string point_json(const std::string& cand) {
  std::string s = "{";
  for (const auto& [a, v] : parse_candidate(cand)) {
    const bool word = v == "true" || v == "false" || (!v.empty() && v.find_first_not_of("-0123456789") == std::string::npos);
    s += std::string(s.size() > 1 ? "," : "") + json_string(a) + ":" + (word ? v : json_string(v));
  }
  return s + "}";
}

inline std::string to_json(const cluster& c, int n) {
  std::string members, constant, varying, steps;
  for (const auto& m : c.members) members += (members.empty() ? "" : ",") + json_string(m);
  for (const auto& [a, v] : c.constant) constant += (constant.empty() ? "" : ",") + json_string(a) + ":" + json_string(v);
  for (const auto& [a, vs] : c.varying) {
    std::string l;
    for (const auto& x : vs) l += (l.empty() ? "" : ",") + json_string(x);
    varying += (varying.empty() ? "" : ",") + json_string(a) + ":[" + l + "]";
  }
  for (const auto& s : c.minimize_steps) steps += (steps.empty() ? "" : ",") + json_string(s);
  std::string pattern;
  for (const auto& [a, v] : c.pattern) pattern += (pattern.empty() ? "" : ",") + json_string(a + "=" + v);
  return "{\"cluster\":" + std::to_string(n) + ",\"signature\":" + json_string(c.signature()) + ",\"gate\":" + json_string(c.gate) + ",\"kind\":" +
         json_string(c.kind) + ",\"pattern\":[" + pattern + "],\"pure\":" + (c.pure ? "true" : "false") + ",\"members\":[" + members + "],\"constant\":{" +
         constant + "},\"varying\":{" + varying + "},\"reproducer\":{\"candidate\":" + json_string(c.reproducer) + ",\"params\":" + point_json(c.reproducer) +
         ",\"shape\":" + json_string(c.reproducer_shape) + "},\"fixed_twin\":" +
         (c.twin.empty() ? std::string("null") : "{\"candidate\":" + json_string(c.twin) + ",\"params\":" + point_json(c.twin) + "}") + ",\"minimize\":[" + steps +
         "]}";
}

// Writes the proposals into `dir` (replacing earlier ones): clusters.json and cluster-N/ with README.md,
// bad.txt, good.txt, entry.txt (the form cake corpus-gate reads once accepted) and evidence.jsonl.
inline std::string write_proposals(const std::string& dir, const std::string& family, const std::string& source, const log_view& v,
                                   const std::vector<cluster>& cs) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("cluster-", 0) == 0) fs::remove_all(e.path(), ec);
  std::string all;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const auto& c = cs[i];
    const int n = static_cast<int>(i) + 1;
    all += (all.empty() ? "" : ",\n") + to_json(c, n);
    const fs::path d = fs::path(dir) / ("cluster-" + std::to_string(n));
    fs::create_directories(d, ec);
    write_file(d / "bad.txt", c.reproducer + "\n");
    write_file(d / "good.txt", (c.twin.empty() ? std::string("# no candidate passed the ") + c.gate + " gate: write the fixed twin by hand" : c.twin) + "\n");
    std::string ev;
    for (const auto& cand : {c.reproducer, c.twin})
      for (const auto& [k, line] : v.last)
        if (!cand.empty() && k.compare(0, cand.size() + 1, cand + "|") == 0) ev += line + "\n";
    for (const auto& l : c.member_lines)
      if (ev.find(l) == std::string::npos) ev += l + "\n";
    write_file(d / "evidence.jsonl", ev);
    write_file(d / "entry.txt",
               "# A proposed corpus-gate entry (docs/evolve.md, \"Accepting a proposal\"): the family point that must raise RULE\n"
               "# (bad) and its fixed twin that must stay clean (good). To accept: write the rule (a real analyzer rule in\n"
               "# include/cake/analysis, or a test-only CAKE_EXPORT_TEST_RULE), replace TODO.rule-id below, copy this folder to\n"
               "# tests/verify/accepted/<name>/ and run `cake corpus-gate --update-baseline`.\n"
               "file " + (source.empty() ? std::string("TODO.schedule-file") : source) + "\nfamily " + family + "\nbad " + c.reproducer + "\ngood " +
                   (c.twin.empty() ? std::string("TODO.fixed-twin") : c.twin) + "\nexpect TODO.rule-id\n");
    std::string readme = "# Failure cluster " + std::to_string(n) + " of family `" + family + "`\n\n";
    readme += "Signature: **" + c.signature() + "** (" + std::to_string(c.members.size()) + " candidate(s)).\n\n";
    readme += c.pure ? "No candidate that passed the " + c.gate + " gate has this pattern.\n\n"
                     : "No pattern of at most 3 axis values separates these failures from the candidates that passed: the pattern is what they share.\n\n";
    readme += "Constant over the members:";
    for (const auto& [a, x] : c.constant) readme += " " + a + "=" + x;
    readme += "\nVarying:";
    for (const auto& [a, xs] : c.varying) {
      readme += " " + a + " {";
      std::string l;
      for (const auto& x : xs) l += (l.empty() ? "" : ", ") + x;
      readme += l + "}";
    }
    readme += "\n\nMembers:\n";
    for (const auto& m : c.members) readme += "- " + m + "\n";
    readme += "\n## Reproducer (bad twin: bad.txt)\n\n" + c.reproducer + " at " + c.reproducer_shape + "\n";
    if (!c.minimize_steps.empty()) {
      readme += "\nMinimization (one axis towards the seed at a time, then the shape; the gates re-run):\n";
      for (const auto& s : c.minimize_steps) readme += "- " + s + "\n";
    }
    readme += "\n## Fixed twin (good.txt)\n\n" + (c.twin.empty() ? std::string("none: no candidate passed the gate") : c.twin + ": the nearest candidate that passed the " + c.gate + " gate") + "\n";
    readme += "\n## Files\n\n- `bad.txt`, `good.txt`: the two points (the candidate form of the evidence log)\n"
              "- `evidence.jsonl`: the log lines of the reproducer, the twin and every member's failing gate\n"
              "- `entry.txt`: the corpus-gate entry to accept (rule id to fill in)\n\n"
              "Nothing has been added to any corpus: a person decides whether this is a real failure class, writes the rule, and accepts the entry.\n";
    write_file(d / "README.md", readme);
  }
  write_file(fs::path(dir) / "clusters.json", "{\"schema\":\"cake.evolve.failures/1\",\"family\":" + json_string(family) + ",\"clusters\":[\n" + all + "]}\n");
  return dir;
}

inline std::string summary_text(const std::vector<cluster>& cs, const std::string& dir) {
  if (cs.empty()) return "failures: none (no candidate that passed the analyzer failed a GPU gate)\n";
  std::string t = "failures: " + std::to_string(cs.size()) + " cluster(s); proposals in " + dir + "/\n";
  for (std::size_t i = 0; i < cs.size(); ++i)
    t += "  cluster " + std::to_string(i + 1) + ": " + cs[i].signature() + ", " + std::to_string(cs[i].members.size()) + " candidate(s); reproducer " +
         cs[i].reproducer + " at " + cs[i].reproducer_shape + "; fixed twin " + (cs[i].twin.empty() ? std::string("none") : cs[i].twin) + "\n";
  return t;
}

inline std::string clusters_json(const std::vector<cluster>& cs, const std::string& dir) {
  std::string s;
  for (std::size_t i = 0; i < cs.size(); ++i) s += (s.empty() ? "" : ",") + to_json(cs[i], static_cast<int>(i) + 1);
  return "{\"dir\":" + json_string(dir) + ",\"clusters\":[" + s + "]}";
}

}  // namespace cake_cli::failures

#pragma once
// `cake corpus-gate` (docs/evolve.md, "cake corpus-gate"): refuses an analyzer change that turns a clean
// schedule into an error or loses a detection.
//
// What it analyzes (the analyzer only, no lowering, no GPU):
//   verify    every case of the verify corpus (tests/verify/cases): its bad twin must raise its rule, its
//             clean twin must raise nothing. Run by cake_corpus_gate (tests/verify/corpus_gate.cpp), which
//             links the corpus runner's case objects: the cases are compiled once, by the build.
//   kernel    the shipped schedules of kernels/* with the configurations their entry points pick (the same
//             binary): they must raise nothing.
//   accepted  tests/verify/accepted/NAME/entry.txt: accepted proposals of `cake evolve` (failures.hpp), a
//             family point that must raise a rule and its fixed twin that must stay clean, generated from the
//             entry's schedule file (compiled by cake, cached) with its test-only rule hooks.
// Each schedule's rule ids (errors and warnings) are compared with the committed baseline
// (tests/verify/corpus_baseline.tsv, same line form as cake_corpus_gate prints); every change is named.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "failures.hpp"
#include "family.hpp"

#ifndef CAKE_CLI_CORPUS_GATE
#define CAKE_CLI_CORPUS_GATE ""
#endif

namespace cake_cli {

struct corpus_gate_options {
  std::string baseline, accepted, corpus_bin;
  bool update = false;
  std::vector<std::string> without_rules;  // --without-rule ID: drop ID from what the analyzer raised (a rule removed)
};

namespace corpus_gate_detail {

struct observation {
  std::string expect;           // the rule a bad twin must raise, or "-"
  std::set<std::string> rules;  // errors and warnings
};

inline std::set<std::string> split_rules(const std::string& s) {
  std::set<std::string> r;
  if (s == "-" || s.empty()) return r;
  std::istringstream in(s);
  std::string id;
  while (std::getline(in, id, ','))
    if (!id.empty()) r.insert(id);
  return r;
}

inline std::string join(const std::set<std::string>& r) {
  std::string s;
  for (const auto& x : r) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? "-" : s;
}

// "corpus\tname\ttwin\texpect\trules" lines into key "corpus name twin" -> observation; others ignored.
inline void parse_lines(const std::string& text, std::map<std::string, observation>& out) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::istringstream ls(line);
    std::string x;
    while (std::getline(ls, x, '\t')) f.push_back(x);
    if (f.size() != 5) continue;
    out[f[0] + " " + f[1] + " " + f[2]] = {f[3], split_rules(f[4])};
  }
}

inline std::string baseline_text(const std::map<std::string, observation>& obs) {
  std::string t =
      "# The baseline of `cake corpus-gate` (docs/evolve.md): the rule ids (errors and warnings) each schedule of the\n"
      "# verify corpus, the kernel corpus and the accepted evolve proposals raises. Rewritten by\n"
      "# `cake corpus-gate --update-baseline` once a person has accepted a change; never by hand.\n"
      "# corpus\tcase\ttwin\texpected-rule\trules\n";
  for (const auto& [k, o] : obs) {
    std::istringstream ks(k);
    std::string corpus, name, twin;
    ks >> corpus >> name >> twin;
    t += corpus + "\t" + name + "\t" + twin + "\t" + o.expect + "\t" + join(o.rules) + "\n";
  }
  return t;
}

// An accepted entry: key value lines (file, family, bad, good, expect).
struct accepted_entry {
  std::string name, file, family, bad, good, expect, why;
};

inline accepted_entry read_entry(const fs::path& path) {
  accepted_entry e;
  e.name = path.parent_path().filename().string();
  const auto text = read_file(path);
  if (!text) {
    e.why = "cannot read " + path.string();
    return e;
  }
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (const auto h = line.find('#'); h != std::string::npos) line.erase(h);
    line = trim(line);
    if (line.empty()) continue;
    const auto sp = line.find(' ');
    const std::string k = line.substr(0, sp), v = sp == std::string::npos ? "" : trim(line.substr(sp + 1));
    if (k == "file") e.file = v;
    else if (k == "family") e.family = v;
    else if (k == "bad") e.bad = v;
    else if (k == "good") e.good = v;
    else if (k == "expect") e.expect = v;
    else e.why = "unknown key '" + k + "'";
  }
  if (e.why.empty() && (e.file.empty() || e.family.empty() || e.bad.empty() || e.good.empty() || e.expect.empty()))
    e.why = "needs the keys file, family, bad, good and expect";
  if (e.why.empty() && e.expect.rfind("TODO", 0) == 0) e.why = "the rule id is still a placeholder (" + e.expect + ")";
  return e;
}

}  // namespace corpus_gate_detail

inline outcome cmd_corpus_gate(const options& opt, const corpus_gate_options& g) {
  using namespace corpus_gate_detail;
  outcome o;
  stopwatch clock;
  const fs::path root = CAKE_CLI_SOURCE_DIR;
  const std::string baseline = g.baseline.empty() ? (root / "tests/verify/corpus_baseline.tsv").string() : g.baseline;
  const std::string accepted = g.accepted.empty() ? (root / "tests/verify/accepted").string() : g.accepted;
  const std::string bin = g.corpus_bin.empty() ? std::string(CAKE_CLI_CORPUS_GATE) : g.corpus_bin;
  if (bin.empty()) {
    fail_usage(o, "cli.usage", "cake corpus-gate needs the corpus tool: build the target cake_corpus_gate (tests/verify) or pass --corpus-bin PATH", exit_environment);
    return o;
  }
  std::map<std::string, observation> now;
  // verify + kernel corpora
  const auto pr = run_process({bin}, 600);
  if (!pr.ok()) {
    fail_usage(o, "cli.environment",
               "the corpus tool " + bin + " failed (" + (pr.started ? "exit " + std::to_string(pr.exit_code) : pr.start_error) + "): " + trim(pr.output.substr(0, 600)),
               exit_environment);
    return o;
  }
  parse_lines(pr.output, now);
  std::size_t n_corpus = now.size();
  // accepted proposals
  std::vector<std::string> entry_problems;
  std::error_code ec;
  std::vector<fs::path> entries;
  if (fs::is_directory(accepted, ec))
    for (const auto& d : fs::directory_iterator(accepted, ec))
      if (fs::exists(d.path() / "entry.txt", ec)) entries.push_back(d.path() / "entry.txt");
  std::sort(entries.begin(), entries.end());
  std::map<std::string, std::unique_ptr<compiled>> libs;  // by file: one compile per schedule file
  for (const auto& p : entries) {
    const auto e = read_entry(p);
    if (!e.why.empty()) {
      entry_problems.push_back("accepted " + e.name + ": " + e.why);
      continue;
    }
    fs::path file = e.file;
    if (file.is_relative() && !fs::exists(file, ec)) file = root / file;
    auto& c = libs[file.string()];
    if (!c) {
      c = std::make_unique<compiled>();
      options copt = opt;
      copt.file = file.string();
      copt.kernel.clear();
      outcome co;
      if (!compile_file(copt, co, *c)) {
        entry_problems.push_back("accepted " + e.name + ": " + display_path(file.string()) + " does not compile: " + trim(co.text.substr(0, 600)));
        continue;
      }
    }
    if (!c->lib.reg) continue;
    const auto* fam = find_family(c->lib, e.family);
    if (!fam) {
      entry_problems.push_back("accepted " + e.name + ": no family " + e.family + " in " + e.file);
      continue;
    }
    for (const auto& [twin, text] : {std::pair<std::string, std::string>{"bad", e.bad}, {"good", e.good}}) {
      std::vector<long long> pt;
      if (const auto why = parse_point(*fam, text, pt); !why.empty()) {
        entry_problems.push_back("accepted " + e.name + ": " + twin + " '" + text + "': " + why);
        continue;
      }
      auto gp = generate_point(*fam, pt);
      std::set<std::string> rules;
      if (!gp.error.empty()) rules.insert("evolve.generator");
      else
        for (const auto& id : rule_ids(analyze_program(*gp.program, &c->lib.reg->rules), true)) rules.insert(id);
      now["accepted " + e.name + " " + twin] = {twin == "bad" ? e.expect : "-", rules};
    }
  }
  for (const auto& r : g.without_rules)
    for (auto& [k, ob] : now) ob.rules.erase(r);

  // The invariants (whatever the baseline says) and the differences from the baseline.
  std::vector<std::string> problems = entry_problems;
  int lost = 0, now_err = 0, changed = 0;
  for (const auto& [k, ob] : now) {
    if (ob.expect != "-" && !ob.rules.count(ob.expect)) {
      problems.push_back(k + ": lost detection: no longer raises " + ob.expect + " (now: " + join(ob.rules) + ")");
      ++lost;
    }
    if (ob.expect == "-" && !ob.rules.empty()) {
      problems.push_back(k + ": a clean schedule now raises " + join(ob.rules));
      ++now_err;
    }
  }
  std::map<std::string, observation> base;
  const auto btext = read_file(baseline);
  if (btext) parse_lines(*btext, base);
  else if (!g.update) problems.push_back("no baseline at " + baseline + " (create it with --update-baseline)");
  if (!g.update && btext) {
    for (const auto& [k, ob] : now) {
      const auto it = base.find(k);
      if (it == base.end()) {
        problems.push_back(k + ": new, not in the baseline (raises " + join(ob.rules) + "; accept with --update-baseline)");
        ++changed;
        continue;
      }
      if (it->second.rules == ob.rules) continue;
      std::set<std::string> gone, added;
      for (const auto& r : it->second.rules)
        if (!ob.rules.count(r)) gone.insert(r);
      for (const auto& r : ob.rules)
        if (!it->second.rules.count(r)) added.insert(r);
      const bool bad_twin = ob.expect != "-";
      std::string what = k + ": rules changed from " + join(it->second.rules) + " to " + join(ob.rules);
      if (!gone.empty()) what += bad_twin ? "; lost detection of " + join(gone) : "; no longer raises " + join(gone);
      if (!added.empty()) what += bad_twin ? "; new finding " + join(added) : "; a clean schedule now raises " + join(added);
      problems.push_back(what);
      ++changed;
    }
    for (const auto& [k, ob] : base)
      if (!now.count(k)) {
        problems.push_back(k + ": in the baseline (raising " + join(ob.rules) + ") but no longer in the corpus");
        ++changed;
      }
  }
  if (g.update) {
    if (!g.without_rules.empty()) {
      fail_usage(o, "cli.usage", "--update-baseline with --without-rule would record a simulated analyzer: pass one or the other");
      return o;
    }
    if (!write_file(baseline, baseline_text(now))) {
      fail_usage(o, "cli.environment", "cannot write the baseline " + baseline, exit_environment);
      return o;
    }
    o.text += "baseline written: " + display_path(baseline) + " (" + std::to_string(now.size()) + " schedules)\n";
  }
  std::string pj;
  for (const auto& p : problems) {
    o.text += "corpus-gate: " + p + "\n";
    pj += (pj.empty() ? "" : ",") + json_string(p);
  }
  std::size_t n_accepted = now.size() - n_corpus;
  char b[400];
  std::snprintf(b, sizeof b, "cake corpus-gate: %zu schedules (%zu verify and kernel corpus, %zu accepted), %zu problem(s)%s; baseline %s; %.1f s\n", now.size(), n_corpus,
                n_accepted, problems.size(), g.without_rules.empty() ? "" : " (with rules removed)", display_path(baseline).c_str(), clock.ms() / 1e3);
  o.text += b;
  o.json_fields += ",\"corpus_gate\":{\"schedules\":" + std::to_string(now.size()) + ",\"accepted\":" + std::to_string(n_accepted) + ",\"baseline\":" + json_string(baseline) +
                   ",\"lost_detections\":" + std::to_string(lost) + ",\"clean_now_raising\":" + std::to_string(now_err) + ",\"changed\":" + std::to_string(changed) +
                   ",\"updated\":" + (g.update ? "true" : "false") + ",\"problems\":[" + pj + "]}";
  o.code = problems.empty() ? exit_ok : exit_failed;
  return o;
}

// `cake failures LOG`: the clusters and proposals of an evidence log, without re-running anything.
inline outcome cmd_failures(const options& opt, const std::string& family_arg, const std::string& dir_arg) {
  outcome o;
  const auto text = read_file(opt.file);
  if (!text) {
    fail_usage(o, "cli.missing-file", "cannot read the evidence log " + opt.file);
    return o;
  }
  failures::log_view v;
  std::istringstream in(*text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    if (line.find("\"schema\":\"cake.evolve/1\"") == std::string::npos) {
      fail_usage(o, "cli.usage", opt.file + ":" + std::to_string(n) + " is not a cake.evolve/1 line");
      return o;
    }
    const std::string fam = failures::str_field(line, "family");
    if (v.family.empty()) v.family = family_arg.empty() ? fam : family_arg;
    if (fam == v.family) failures::add_line(v, line);
  }
  if (v.order.empty()) {
    fail_usage(o, "cli.usage", "no line of family " + (v.family.empty() ? std::string("(any)") : v.family) + " in " + opt.file);
    return o;
  }
  auto cs = failures::cluster_failures(v);
  for (auto& c : cs) c.twin = failures::fixed_twin(v, c);
  const std::string dir = dir_arg.empty() ? opt.file + ".failures" : dir_arg;
  if (!cs.empty()) failures::write_proposals(dir, v.family, "", v, cs);
  o.text = failures::summary_text(cs, dir);
  o.json_fields += ",\"failures\":" + failures::clusters_json(cs, cs.empty() ? std::string() : dir);
  return o;
}

}  // namespace cake_cli

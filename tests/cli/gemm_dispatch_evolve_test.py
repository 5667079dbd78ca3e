#!/usr/bin/env python3
"""The dispatcher generator's evolve input (tools/gen/gemm_dispatch.py --from-evolve; docs/gemm.md, "The dispatcher"),
end to end with the GPU stage mocked (CAKE_GPU_MOCK, docs/evolve.md): two `cake evolve` searches of the small bf16 family
of tests/cli/dispatch_family.cpp write two logs, the generator turns them into a header in a scratch folder, and:

  - each searched shape that counts has its bucket, naming the fastest candidate that is correct and that a plan can
    say (search A, M=8 x 4096 x 4096: bn256_s4_c2; search B, M=512 x 4096 x 4096: bn128_s4_c1; B's shape outside the
    domain, 1000 x 3000 x 3000: bn128_s4_c1), through the header's own lookup (cake::find_gemm_bucket, compiled);
  - a candidate a gate found wrong is never chosen, whichever log says so: the ping-pong points are timed fastest in A
    but wrong at B's run gate, bn128_s4_c2 is timed fastest in B but wrong at A's bench gate;
  - the direct-store points (timed fastest everywhere; no plan can say them) are skipped and counted, never mapped;
  - the held-out shape of B (64 x 4096 x 4096) is left out and counted, and taken with --include-held-out;
  - the header names its evidence (the logs, the command) and is marked as not measured (a mocked GPU);
  - --check passes on the header and fails on an edited copy; a family of unknown input type, or a file that is not
    a log, is refused with the reason;
  - a third search, of the e4m3 family (search C, timed against cuBLASLt), gives the header an e4m3 table beside the
    bf16 one when its type is declared (its lookup answers C's pick), and is skipped and counted when it is not;
  - and the committed H200 log (bench/results/h200/evolve_gemm_4096_run2.jsonl.gz): a real GPU's log, its best
    candidate's raster group named (bn256_s4_c1_r4), its held-out shape taken only with --include-held-out.

    gemm_dispatch_evolve_test.py --cake BIN --cost-bin BIN --cxx COMPILER --out DIR
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "tools" / "gen" / "gemm_dispatch.py"
FAMILY = "tests/cli/dispatch_family.cpp"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cake", required=True)
    ap.add_argument("--cost-bin", required=True)
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    problems = []

    def check(cond, what):
        if not cond:
            problems.append(what)
        return cond

    # ---- the three searches (one compile of the families, through the tool's cache): A and B of the bf16 family, C of
    # the e4m3 one ----
    searches = {"a": ["M=8,N=4096,K=4096"], "b": ["M=512,N=4096,K=4096", "M=64,N=4096,K=4096", "M=1000,N=3000,K=3000"], "c": ["M=8,N=4096,K=4096"]}
    logs = {}
    for s, shapes in searches.items():
        logs[s] = out / ("%s.jsonl" % s)
        family = "dispatch_e4m3" if s == "c" else "dispatch_bf16"
        cmd = [a.cake, "evolve", FAMILY, "--family", family, "--log", str(logs[s])] + [x for sh in shapes for x in ("--shape", sh)]
        env = dict(os.environ, CAKE_GPU_MOCK=str(ROOT / "tests" / "cli" / ("dispatch_mock_%s.txt" % s)))
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("search %s: cake evolve exit %d\n%s\n%s" % (s, r.returncode, r.stdout, r.stderr[-3000:]))

    # What the logs say, read here independently of the generator: the direct-store candidates that reached a GPU gate
    # (and how many of them were timed), and the expressible rows timed at the held-out shape.
    records = [json.loads(line) for s in "ab" for line in logs[s].read_text().splitlines() if line.strip()]
    gpu = [r for r in records if r["gate"] in ("run", "bench") and r["shape"]]
    direct = {r["candidate"] for r in gpu if r["params"]["direct_store"]}
    direct_timed = {r["candidate"] for r in gpu if r["params"]["direct_store"] and r["gate"] == "bench" and r["verdict"] == "pass"}
    held_out_rows = {r["candidate"] for r in gpu if r["shape"] == "M=64,N=4096,K=4096" and r["gate"] == "bench" and r["verdict"] == "pass"
                     and not r["params"]["direct_store"]}
    check(len(direct) >= 2 and direct_timed and held_out_rows, "the searches did not time what the test needs: direct-store %s, held-out rows %s"
          % (sorted(direct), sorted(held_out_rows)))

    def gen(*args):
        cmd = [sys.executable, str(GEN), "--from-evolve", str(logs["a"]), str(logs["b"]), "--cost-bin", a.cost_bin] + list(args)
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)

    header = out / "gemm_dispatch.hpp"
    r = gen("--family", "dispatch_bf16=bf16", "--sm-count", "132", "-o", str(header))
    if not check(r.returncode == 0, "the generator failed (exit %d): %s" % (r.returncode, r.stderr.strip())):
        sys.exit("\n".join(problems))
    print(r.stdout, end="")
    check("skipped %d candidate(s) (%d of them timed): direct_store=true (no plan says it)" % (len(direct), len(direct_timed)) in r.stdout,
          "the skipped direct-store candidates are not counted as %d (%d timed): %s" % (len(direct), len(direct_timed), r.stdout))
    check("left out %d timed row(s) at held-out shapes" % len(held_out_rows) in r.stdout, "the %d held-out rows are not counted: %s" % (len(held_out_rows), r.stdout))
    h = header.read_text()

    # Provenance: the logs and the command, and no claim of a measurement.
    def shown(p):  # as the header names a log: from the source root where it is inside it
        try:
            return p.resolve().relative_to(ROOT).as_posix()
        except ValueError:
            return str(p)

    regen = "//   python3 tools/gen/gemm_dispatch.py --from-evolve %s %s --sm-count 132 --family dispatch_bf16=bf16\n" % (shown(logs["a"]), shown(logs["b"]))
    check(regen in h, "the header has no 'regenerate with' line naming both logs:\n" + "\n".join(h.splitlines()[:4]))
    check(shown(logs["a"]) + ": dispatch_bf16 (bf16); M=8,N=4096,K=4096 (a search shape of llama3-8b.o)" in h, "the header does not describe log A")
    check("M=1000,N=3000,K=3000 (outside the domain)" in h and "M=64,N=4096,K=4096 (a held-out shape of llama3-8b.o)" in h,
          "the header does not place B's shapes in the domain")
    check("// PLACEHOLDER EVIDENCE: the GPU verdicts of these logs are scripted" in h and "inline constexpr bool measured = false;" in h,
          "a mocked log's header claims a measurement")
    check("inline constexpr int sm_count = 132;" in h, "the header's SM count is not --sm-count's")
    # The bans: a wrong result at either log's gate bans the schedule for the type.
    ban = re.search(r"^// bf16: never chosen \(rejected at a run or bench gate[^)]*\): (.*)$", h, re.M)
    banned = ban.group(1).split(", ") if ban else []
    check("bn128_s4_c2" in banned and "bn128_s4_c1_pp128" in banned, "the wrong schedules are not banned: %s" % banned)
    plans = re.findall(r"^    \{gemm_kernel::.*,  // \d+ (\S+)$", h, re.M)
    check(plans and not set(plans) & set(banned), "the header's plans %s include a banned one (%s)" % (plans, banned))
    # The evidence lines of the searched shapes: the fastest correct, expressible candidate's time (not a direct-store
    # point's 0.005 ms, nor a wrong one's 0.010 / 0.015 ms); none at the held-out shape.
    for m, plan, note in ((8, "bn256_s4_c2", "a search shape of llama3-8b.o"), (512, "bn128_s4_c1", "a search shape of llama3-8b.o"),
                          (1000, "bn128_s4_c1", "outside the domain")):
        check(re.search(r"^    //   M=%d: %s 0\.0200 ms, peer 0\.0300 ms, ratio 1\.500 .*%s\]$" % (m, plan, re.escape(note)), h, re.M),
              "no evidence line for M=%d naming %s at 0.0200 ms (%s)" % (m, plan, note))
    check(not re.search(r"^    //   M=64: ", h, re.M), "the held-out shape M=64 is evidence without --include-held-out")

    # The header compiles, and its own lookup answers each searched shape with its pick (and no banned schedule at any M
    # of the 4096 x 4096 cell, the held-out M included).
    tu = out / "lookup.cpp"
    tu.write_text('#include <cstdio>\n#include <cstdlib>\n#include "%s"\n' % header +
                  "int main(int argc, char** argv) {\n  namespace t = cake::gemm_dispatch_table;\n"
                  "  for (int i = 1; i + 3 < argc; i += 4) {\n"
                  "    const auto in = argv[i][0] == 'b' ? cake::gemm_input::bf16 : cake::gemm_input::e4m3;\n"
                  "    const int p = cake::find_gemm_bucket(t::cells, t::buckets, in, std::atoll(argv[i + 1]), std::atoll(argv[i + 2]), std::atoll(argv[i + 3]));\n"
                  '    std::printf("%s\\n", p < 0 ? "-" : cake::plan_name(t::plans[static_cast<std::size_t>(p)]).c_str());\n'
                  "  }\n  return 0;\n}\n")
    exe = out / "lookup"
    c = subprocess.run([a.cxx, "-std=c++20", "-O0", "-I", str(ROOT / "include"), "-I", str(ROOT), "-iquote", str(ROOT / "include" / "cake"), str(tu), "-o", str(exe)],
                       capture_output=True, text=True)
    if check(c.returncode == 0, "the header does not compile:\n" + c.stderr[-3000:]):
        asks = [("b", 8, 4096, 4096, "bn256_s4_c2"), ("b", 512, 4096, 4096, "bn128_s4_c1"), ("b", 1000, 3000, 3000, "bn128_s4_c1"),
                ("e", 8, 4096, 4096, "-"), ("b", 8, 65536, 4096, "-")]
        sweep = [("b", m, 4096, 4096, None) for m in list(range(1, 1025, 7)) + [64]]
        q = subprocess.run([str(exe)] + [str(x) for t in asks + sweep for x in t[:4]], capture_output=True, text=True, check=True).stdout.split()
        for (d, m, n, k, want), got in zip(asks, q):
            check(got == want, "%s %d x %d x %d: the header's lookup answers %s, expected %s" % (d, m, n, k, got, want))
        check(len(q) == len(asks + sweep) and not set(q[len(asks):]) & set(banned) and "-" not in q[len(asks):],
              "the lookup of M = 1..1024 at 4096 x 4096 answers a banned schedule or none: %s" % sorted(set(q[len(asks):])))

    # --check: the same arguments match; an edited copy does not.
    r = gen("--family", "dispatch_bf16=bf16", "--sm-count", "132", "-o", str(header), "--check")
    check(r.returncode == 0 and "matches" in r.stdout, "--check on the fresh header: exit %d %s" % (r.returncode, r.stderr.strip()))
    edited = out / "edited.hpp"
    edited.write_text(h.replace("{1, 8, ", "{1, 9, ", 1))
    r = gen("--family", "dispatch_bf16=bf16", "--sm-count", "132", "-o", str(edited), "--check")
    check(r.returncode == 1 and "stale or hand-edited" in r.stderr and "--from-evolve" in r.stderr, "--check on an edited header: exit %d %s" % (r.returncode, r.stderr.strip()))

    # --include-held-out: the held-out shape becomes evidence.
    r = gen("--family", "dispatch_bf16=bf16", "--sm-count", "132", "-o", str(out / "with_held_out.hpp"), "--include-held-out")
    check(r.returncode == 0 and re.search(r"^    //   M=64: ", (out / "with_held_out.hpp").read_text(), re.M) and "left out" not in r.stdout,
          "--include-held-out does not take the held-out shape (exit %d)" % r.returncode)

    # Both types from evolve logs: with search C's log (the e4m3 family, timed against cuBLASLt) and both --family
    # declarations, the header has an e4m3 table too: its searched shape answers C's pick (bn256_s4_c1), and bf16 is as
    # before. Without C's type declared, its log's rows are skipped and counted, not read as bf16.
    both = out / "both_types.hpp"
    r = subprocess.run([sys.executable, str(GEN), "--from-evolve", str(logs["a"]), str(logs["b"]), str(logs["c"]), "--cost-bin", a.cost_bin,
                        "--family", "dispatch_bf16=bf16", "--family", "dispatch_e4m3=e4m3", "--sm-count", "132", "-o", str(both)],
                       cwd=ROOT, capture_output=True, text=True)
    if check(r.returncode == 0, "the generator on both types' logs failed (exit %d): %s" % (r.returncode, r.stderr.strip())):
        hb = both.read_text()
        check(re.search(r"^    //   M=8: bn256_s4_c1 0\.0100 ms, peer 0\.0200 ms, ratio 2\.000 .*\]$", hb, re.M) is not None,
              "no e4m3 evidence line for M=8 naming bn256_s4_c1 at 0.0100 ms")
        check(shown(logs["c"]) + ": dispatch_e4m3 (e4m3); M=8,N=4096,K=4096 (a search shape of llama3-8b.o)" in hb, "the header does not describe log C")
        tu2 = out / "lookup_both.cpp"
        tu2.write_text(tu.read_text().replace(str(header), str(both)))
        exe2 = out / "lookup_both"
        c = subprocess.run([a.cxx, "-std=c++20", "-O0", "-I", str(ROOT / "include"), "-I", str(ROOT), "-iquote", str(ROOT / "include" / "cake"), str(tu2), "-o", str(exe2)],
                           capture_output=True, text=True)
        if check(c.returncode == 0, "the two-type header does not compile:\n" + c.stderr[-3000:]):
            q = subprocess.run([str(exe2), "e", "8", "4096", "4096", "b", "8", "4096", "4096", "e", "1", "4096", "4096"], capture_output=True, text=True, check=True).stdout.split()
            check(q[:2] == ["bn256_s4_c1", "bn256_s4_c2"] and q[2] == "bn256_s4_c1",
                  "the two-type header's lookup answers %s for e4m3 8 / bf16 8 / e4m3 1 x 4096 x 4096, expected bn256_s4_c1, bn256_s4_c2, bn256_s4_c1" % q)
    r = subprocess.run([sys.executable, str(GEN), "--from-evolve", str(logs["a"]), str(logs["c"]), "--cost-bin", a.cost_bin, "--family", "dispatch_bf16=bf16",
                        "--sm-count", "132", "-o", str(out / "c_unknown.hpp")], cwd=ROOT, capture_output=True, text=True)
    check(r.returncode == 0 and "family dispatch_e4m3: no input type known for it" in (r.stdout + r.stderr),
          "search C's log without its type declared: exit %d %s %s" % (r.returncode, r.stdout, r.stderr.strip()))

    # Refusals: a family of unknown input type (named, with the option), no SM count from a mocked GPU, not a log.
    r = gen("--sm-count", "132", "-o", str(out / "unknown.hpp"))
    check(r.returncode == 2 and "family dispatch_bf16: no input type known for it (--family dispatch_bf16=bf16|e4m3" in r.stderr,
          "a family of unknown type: exit %d %s" % (r.returncode, r.stderr.strip()))
    r = gen("--family", "dispatch_bf16=bf16", "-o", str(out / "nosm.hpp"))
    check(r.returncode == 2 and "pass --sm-count N" in r.stderr, "no SM count: exit %d %s" % (r.returncode, r.stderr.strip()))
    r = subprocess.run([sys.executable, str(GEN), "--from-evolve", str(ROOT / "tests/cli/dispatch_mock_a.txt"), "--cost-bin", a.cost_bin, "-o", str(out / "x.hpp")],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "is not JSON" in r.stderr, "a file that is not a log: exit %d %s" % (r.returncode, r.stderr.strip()))

    # A real log (the committed H200 search of 2026-12-03 at 4096 x 4096 x 4096, gzipped): the GPU and SM count from the
    # log, the raster group in the plan's name (its best, bn256_s4_c1_r4, 0.1961 ms, against bn256_s4_c2 with raster
    # group 8), its 19 direct-store candidates skipped; its shape is a held-out one, so without --include-held-out the
    # log is no evidence (refused, with the counts).
    real = ["--from-evolve", str(ROOT / "bench/results/h200/evolve_gemm_4096_run2.jsonl.gz"), "--cost-bin", a.cost_bin]
    r = subprocess.run([sys.executable, str(GEN)] + real + ["-o", str(out / "h200.hpp"), "--include-held-out"], capture_output=True, text=True)
    h = (out / "h200.hpp").read_text() if r.returncode == 0 else ""
    check(r.returncode == 0 and "skipped 19 candidate(s) (19 of them timed): direct_store=true" in r.stdout, "the H200 log: exit %d %s %s" % (r.returncode, r.stdout, r.stderr))
    check(re.search(r"^    \{1, 8192, 0\},  // M 1\.\.8192: bn256_s4_c1_r4$", h, re.M) and "//   M=4096: bn256_s4_c1_r4 0.1961 ms, peer 0.1955 ms" in h
          and "(fallback bn256_s4_c2: 0.998)" in h and ".raster_group = 4," in h, "the H200 log's header does not pick its best, bn256_s4_c1_r4")
    check("), NVIDIA H200 (cc 9.0), 132 SMs;" in h and "inline constexpr bool measured = true;" in h and "PLACEHOLDER" not in h,
          "the H200 log's header does not name its GPU as measured")
    r = subprocess.run([sys.executable, str(GEN)] + real + ["-o", str(out / "h200_no.hpp")], capture_output=True, text=True)
    check(r.returncode == 2 and "left out 21 timed row(s) at held-out shapes" in r.stderr, "the H200 log without --include-held-out: exit %d %s" % (r.returncode, r.stderr))

    if problems:
        print("gemm_dispatch_evolve_test: %d problem(s):\n  %s" % (len(problems), "\n  ".join(problems)), file=sys.stderr)
        return 1
    print("gemm_dispatch_evolve_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# A scripted stand-in for an external agent of `cake evolve --agent CMD` (docs/evolve.md, "--agent"):
# called as `CMD ROUND_DIR`, it may read ROUND_DIR/summary.json and ROUND_DIR/best.txt, and writes its
# proposals to ROUND_DIR/proposals.txt, one point per line (NAME=VALUE,...; axes it does not name keep
# the best candidate's values). Writing nothing ends the rounds.
# Round 1 proposes the best so far with 3 stages (a value outside the declared domain), with 9 stages
# (the analyzer must reject it) and a line naming no axis of the family (evolve must ignore it and say
# so in the next round's summary); round 2 proposes nothing.
set -e
dir="$1"
test -s "$dir/summary.json"
best=$(cat "$dir/best.txt")
case "$(basename "$dir")" in
  round-1)
    {
      echo "# from $best"
      echo "stages=3"
      echo "stages=9"
      echo "width=3"
    } > "$dir/proposals.txt"
    ;;
esac

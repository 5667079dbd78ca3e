#!/bin/sh
# A scripted stand-in for an external agent of `cake evolve --agent CMD` (docs/evolve.md, "--agent"):
# called as `CMD ROUND_DIR`, it may read ROUND_DIR/summary.json, ROUND_DIR/best.txt and ROUND_DIR/schedule.cpp
# (the best schedule file so far), and writes its proposals to ROUND_DIR/proposals.txt, one point per line
# (NAME=VALUE,...; axes it does not name keep the best candidate's values), and/or a new schedule file
# ROUND_DIR/proposal.cpp exporting the same family. Writing neither ends the rounds.
# Round 1 proposes the best so far with 3 stages (a value outside the declared domain), with 9 stages
# (the analyzer must reject it) and a line naming no axis of the family (evolve must ignore it and say
# so in the next round's summary), and a schedule file whose family declares 5 stages only (searched by a
# nested evolve; the mocked GPU times its 5-stage point fastest of all); round 2 returns a file that does
# not compile (evolve must say so in round 3's summary); round 3 returns nothing.
set -e
dir="$1"
test -s "$dir/summary.json"
test -s "$dir/schedule.cpp"
best=$(cat "$dir/best.txt")
case "$(basename "$dir")" in
  round-1)
    {
      echo "# from $best"
      echo "stages=3"
      echo "stages=9"
      echo "width=3"
    } > "$dir/proposals.txt"
    sed 's/{2, 4, 7}/{5}/' "$dir/schedule.cpp" > "$dir/proposal.cpp"
    ;;
  round-2)
    { echo '#error the stand-in agent returns a file that does not compile'; cat "$dir/schedule.cpp"; } > "$dir/proposal.cpp"
    ;;
esac

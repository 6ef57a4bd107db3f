#!/bin/bash
# The peer job's throughput on `reins serve --threads A` against `--threads B`, in N
# alternated pairs (a drift of the machine touches both alike), each pair preceded by a
# fixed CPU task whose time says how fast the machine is at that moment (this VM's
# speed moves by half within an hour; a pair timed slow says so). Prints each pair and
# the median of the pairs' ratios. Usage: bench/peer_job/threads_ab.sh [N] [A] [B]
#   (after `make build`; REINS_PEER_JOB=path to use another build's binary)
set -euo pipefail
n=${1:-10}; a=${2:-1}; b=${3:-2}
job=${REINS_PEER_JOB:-build/bench/reins_peer_job}
tput() {
  "$job" --only tput --node none --serve-arg --threads --serve-arg "$1" 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    if line.startswith("{") and "turns_per_s" in line:
        j = json.loads(line); print(round(j["turns_per_s"]), round(j["cpu_us_per_turn"]))'
}
probe() { /usr/bin/time -f %e sh -c 'head -c 100000000 /dev/zero | sha256sum >/dev/null' 2>&1; }
for _ in $(seq "$n"); do echo "$(probe) $(tput "$a") $(tput "$b")"; done | python3 -c '
import statistics as st, sys
a, b = sys.argv[1], sys.argv[2]
rows = [list(map(float, l.split())) for l in sys.stdin if len(l.split()) == 5]
for p, ta, ca, tb, cb in rows:
    print(f"probe {p:.2f} s | threads {a}: {ta:.0f} turns/s {ca:.0f} us/turn | threads {b}: {tb:.0f} turns/s {cb:.0f} us/turn | {tb/ta:.3f}x turns/s, {cb/ca:.3f}x cpu")
print(f"median of {len(rows)} pairs: turns/s {st.median(r[3]/r[1] for r in rows):.3f}x, server cpu/turn {st.median(r[4]/r[2] for r in rows):.3f}x")
' "$a" "$b"

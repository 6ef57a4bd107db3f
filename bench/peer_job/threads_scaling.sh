#!/bin/bash
# The peer job's throughput on `reins serve --threads T` for each T given, R rounds, the
# T alternated within each round (a drift of the machine touches all alike). On a machine
# of many cores one client thread and one mock thread would bound the server, so both get
# K threads (--load-threads), and W turns are in flight (--tput-width). Prints each run,
# then each T's median turns/s and server CPU per turn, and its ratio to the first T.
# Usage: bench/peer_job/threads_scaling.sh [R] [K] [W] [TURNS] [T ...]
#   e.g. bench/peer_job/threads_scaling.sh 3 4 256 40000 1 2 4 8
#   (after `make build`; REINS_PEER_JOB=path to use another build's binary)
set -euo pipefail
rounds=${1:-3}; load=${2:-4}; width=${3:-256}; turns=${4:-40000}
shift $(($# < 4 ? $# : 4))
threads=("$@"); [ ${#threads[@]} -gt 0 ] || threads=(1 2 4 8)
job=${REINS_PEER_JOB:-build/bench/reins_peer_job}
for round in $(seq "$rounds"); do
  for t in "${threads[@]}"; do
    "$job" --only tput --node none --load-threads "$load" --tput-width "$width" --tput-turns "$turns" \
      --serve-arg --threads --serve-arg "$t" 2>/dev/null | grep '^{' | sed "s/^{/{\"threads\":$t,\"round\":$round,/"
  done
done | tee /dev/stderr | python3 -c '
import json, statistics as st, sys
runs = [json.loads(line) for line in sys.stdin]
by = {}
for r in runs:
    if "error" in r: print("error:", r["error"]); continue
    by.setdefault(r["threads"], []).append(r)
base = None
print("| --threads | turns/s (runs) | median | x one | server CPU us/turn | client / mock CPU us/turn |")
print("|---:|---|---:|---:|---:|---|")
for t, rs in sorted(by.items()):
    tps = [r["turns_per_s"] for r in rs]; med = st.median(tps)
    base = base or med
    cpu = st.median(r["cpu_us_per_turn"] for r in rs)
    cl = st.median(r["client_cpu_us_per_turn"] for r in rs); mo = st.median(r["mock_cpu_us_per_turn"] for r in rs)
    each = ", ".join(f"{x:,.0f}" for x in tps)
    print(f"| {t} | {each} | {med:,.0f} | {med/base:.2f}x | {cpu:.0f} | {cl:.0f} / {mo:.0f} |")
'

#!/usr/bin/env bash
# Runs the README's "Your own agent with an HTTP tool" as written: writes each file it
# shows, runs each command block it marks, then serves the agent against a local
# stand-in for the OpenAI API (tests/cli/mock_openai.py) and talks to it with curl.
# Port 9000 in the README becomes a free port here.
set -uo pipefail
reins="$1"
root=$(cd "$2" && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Starts wait up to a minute: a margin over well under a second, for a busy machine.
wait_port() { for _ in $(seq 1200); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; pkill -f "shop.py $shop_port" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
shop_port=$(free_port)
export PATH="$(cd "$(dirname "$reins")" && pwd):$PATH"

# The section's files and command blocks, in order, with the shop's port replaced.
python3 - "$root/README.md" "$tmp" "$shop_port" <<'PY' || { echo "FAIL: cannot read the walkthrough"; exit 1; }
import os, re, sys
readme, out, port = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(readme).read()
start = text.index("## Your own agent with an HTTP tool")
section = text[start:text.index("\n## ", start + 1)]
blocks = 0
for m in re.finditer(r"<!-- walkthrough (file: (\S+)|run) -->\n```[a-z]*\n(.*?)```", section, re.S):
    body = m.group(3).replace("9000", port)
    if m.group(2):
        path = os.path.join(out, m.group(2))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(body)
    else:
        blocks += 1
        open(os.path.join(out, "step%d.sh" % blocks), "w").write(body)
assert blocks >= 2, "the walkthrough marks fewer than two command blocks"
PY

cd "$tmp"
for step in step*.sh; do
  # To a file, not a pipe: the shop the step starts in the background keeps its output.
  bash "$step" > "$step.out" 2>&1; rc=$?
  [ "$rc" -eq 0 ] || fail "$step exited $rc: $(cat "$step.out")"
  wait_port "$shop_port" || fail "the shop did not start"
done
grep -q "ok agent.yaml  agent bookshop, 2 tools" step*.out || fail "reins check did not say ok: $(cat step*.out)"
grep -q "PASS order-dune  (9 checks)" step*.out || fail "the scenario did not pass 9 checks: $(cat step*.out)"
grep -q "invariants hold" step*.out || fail "the scenario's invariants were not reported holding"

# Step 4: serve the agent; its model is a local stand-in speaking the OpenAI wire format.
cat > script.json <<'JSON'
[{"tool_calls": [{"name": "search_books", "args": {"query": "dune"}}]},
 {"text": "We have Dune by Frank Herbert for $9.99. Shall I order it?"},
 {"tool_calls": [{"name": "place_order", "args": {"book_id": "b_dune"}}]},
 {"text": "Lovely choice, I'm ordering Dune for you now."}]
JSON
model_port=$(free_port)
python3 "$root/tests/cli/mock_openai.py" "$model_port" script.json > model.log 2>&1 &
pids+=($!)
wait_port "$model_port" || fail "the model stand-in did not start"
OPENAI_API_KEY=sk-test OPENAI_BASE_URL="http://127.0.0.1:$model_port/v1" \
  reins serve --config agent.yaml --listen 127.0.0.1:0 > serve.out 2> serve.err &
pids+=($!)
for _ in $(seq 1200); do grep -q listening serve.out 2>/dev/null && break; sleep 0.05; done
api=$(grep -o 'http://127.0.0.1:[0-9]*' serve.out | head -n 1)
[ -n "$api" ] || fail "reins serve did not say where it listens: $(cat serve.out serve.err)"
session=$(curl -s -X POST "$api/v1/sessions" -H 'Content-Type: application/json' -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["session_id"])')
orders() { cat step*.out | grep -c "order placed"; }
orders_before=$(orders)
first=$(curl -s -X POST "$api/v1/sessions/$session/turns" -H 'Content-Type: application/json' -d '{"say":"Do you have Dune?"}')
grep -q '"reply":"We have Dune by Frank Herbert for \$9.99' <<<"$first" || fail "first served turn: $first"
second=$(curl -s -X POST "$api/v1/sessions/$session/turns" -H 'Content-Type: application/json' -d '{"say":"Yes please, order it"}')
grep -q '"status":"deferred"' <<<"$second" || fail "the order was not deferred: $second"
grep -q '"status":"completed"' <<<"$second" || fail "second served turn: $second"
[ "$(orders)" -eq $((orders_before + 1)) ] || fail "the served order did not reach the shop once: $(cat step*.out)"
kill "${pids[-1]}"; wait "${pids[-1]}" 2>/dev/null
trace=$(reins trace --store sqlite:bookshop.db --session "$session")
grep -q "place_order" <<<"$trace" || fail "reins trace does not show the order: $trace"
grep -q 'TOOL QUEUED.*"role": "tool"' model.log || fail "the model saw the order's result instead of the deferred instruction: $(cat model.log)"

echo "walkthrough_test: $failures failures"
[ "$failures" -eq 0 ]

#!/usr/bin/env bash
# `reins serve` exporting OpenTelemetry spans to a local collector that checks every
# payload against the OTLP JSON mapping (otlp_receiver.py): the span tree of a governed
# turn under the caller's traceparent, the traceparent its HTTP tools were sent, no
# contents by default, the counts in /metrics; then a collector that never answers,
# and turns that do not notice. Usage: otlp_e2e_test.sh REINS_BINARY SOURCE_DIR
set -euo pipefail
reins=$1
cd "$2"
dir=$(mktemp -d)
pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; [ -s "$dir/log" ] && tail -5 "$dir/log"; exit 1; }

python3 tests/telemetry/otlp_receiver.py "$dir" >"$dir/receiver" &
pids+=($!)
# Starts wait up to a minute: a margin over well under a second, for a busy machine.
for _ in $(seq 1200); do [ -s "$dir/receiver" ] && break; sleep 0.05; done
collector=http://127.0.0.1:$(head -n 1 "$dir/receiver")

# serve AGENT_ENV...: starts reins serve on $agent with the given environment; sets $base.
agent=tests/telemetry/agent.yaml
serve() {
  # The shell truncates the file in the background child: an earlier server's line
  # must not be read as this one's.
  rm -f "$dir/out" "$dir/log"
  env "$@" "$reins" serve --config "$agent" --listen 127.0.0.1:0 >"$dir/out" 2>"$dir/log" &
  server=$!
  pids+=($server)
  for _ in $(seq 1200); do grep -q "listening on" "$dir/out" && break; sleep 0.05; done
  base=$(sed -n 's|.*\(http://127.0.0.1:[0-9]*\).*|\1|p' "$dir/out")
  [ -n "$base" ] || fail "the server did not start"
}
turn() {  # turn SESSION TEXT [HEADER...]
  local session=$1 text=$2
  shift 2
  curl -sf -X POST "$base/v1/sessions/$session/turns" -H 'Content-Type: application/json' "$@" \
    -d "{\"speaker\":\"user\",\"say\":\"$text\"}" >/dev/null || fail "turn '$text'"
}

serve RECEIVER="$collector" OTEL_EXPORTER_OTLP_ENDPOINT="$collector" OTEL_SERVICE_NAME=reins-e2e
session=$(curl -sf -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["session_id"])')
trace=4bf92f3577b34da6a3ce929d0e0e4736
caller=00f067aa0ba902b7
turn "$session" "Check my order please" -H "traceparent: 00-$trace-$caller-01"
turn "$session" "hello"
# The exporter sends a partial batch within a second; the deferred write's span may
# come in a batch of its own. (A minute at most, for a busy machine.)
for _ in $(seq 600); do
  [ "$(grep -c invoke_agent "$dir/spans.jsonl" 2>/dev/null)" = 2 ] && grep -q "execute_tool save_note" "$dir/spans.jsonl" && break
  sleep 0.1
done
python3 - "$dir" "$session" "$trace" "$caller" <<'PY' || fail "spans"
import json, sys
out, session, trace, caller = sys.argv[1:]
try:
    errors = open(f"{out}/errors.txt").read()
except FileNotFoundError:
    errors = ""
assert not errors, "the collector refused payloads:\n" + errors
spans = [json.loads(l) for l in open(f"{out}/spans.jsonl")]
attrs = lambda s: {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
turns = [s for s in spans if attrs(s).get("gen_ai.operation.name") == "invoke_agent"]
assert len(turns) == 2, f"two turns, two invoke_agent spans: {[s['name'] for s in spans]}"
first = next(s for s in turns if s["traceId"] == trace)
assert first["parentSpanId"] == caller, "the turn's span is the caller's child"
assert first["_service"] == "reins-e2e", first["_service"]
a = attrs(first)
assert first["name"] == "invoke_agent telemetry-test" and a["gen_ai.agent.name"] == "telemetry-test", a
assert a["gen_ai.conversation.id"] == session and a["reins.turn.status"] == "completed", a
children = [s for s in spans if s.get("parentSpanId") == first["spanId"]]
chats = [s for s in children if attrs(s).get("gen_ai.operation.name") == "chat"]
assert len(chats) == 2 and all(attrs(s)["gen_ai.provider.name"] == "scripted" and s["kind"] == 3 for s in chats), chats
tools = {attrs(s)["gen_ai.tool.name"]: s for s in children if attrs(s).get("gen_ai.operation.name") == "execute_tool"}
assert set(tools) == {"lookup_order", "save_note"}, f"the tools that ran: {set(tools)}"
assert attrs(tools["lookup_order"]).get("gen_ai.tool.call.id"), "a tool span names its call"
assert attrs(tools["save_note"])["reins.tool.deferred"] is True
events = {e["name"]: {x["key"]: next(iter(x["value"].values())) for x in e.get("attributes", [])} for e in first.get("events", [])}
assert events["reins.tool.rejected"]["reins.reason"] == "schema", events
assert events["reins.tool.rejected"]["gen_ai.tool.name"] == "refund", events
assert "reins.tool.deferred" in events, events
assert all(s["traceId"] == trace for s in children)
# What the tools were sent: each its own span's context in the caller's trace.
sent = {t["tool"]: t["traceparent"] for t in map(json.loads, open(f"{out}/tools.jsonl"))}
for name in ("lookup_order", "save_note"):
    assert sent[name] == f"00-{trace}-{tools[name]['spanId']}-01", (name, sent[name], tools[name]["spanId"])
# Contents are off by default: no argument, result or reply text on any span.
text = open(f"{out}/spans.jsonl").read()
assert "o_secret_1" not in text and "noted it" not in text and "gen_ai.tool.call.arguments" not in text
second = next(s for s in turns if s is not first)
assert second["traceId"] != trace and "parentSpanId" not in second, "a turn without traceparent starts its own trace"
PY
metrics=$(curl -sf "$base/metrics")
grep -q '^reins_telemetry_spans_exported_total [1-9]' <<<"$metrics" || fail "exported spans not counted: $(grep telemetry <<<"$metrics")"
kill -TERM $server
wait $server || fail "exit code $?"

# A turn over the OpenAI wire: each chat span names the model the agent asked for and the
# one that answered, says why the model stopped (a call, then a reply), and the provider
# was sent the chat span's own traceparent (a gateway between joins the trace).
agent=tests/telemetry/openai_agent.yaml
rm -f "$dir/spans.jsonl"
serve RECEIVER="$collector" OTEL_EXPORTER_OTLP_ENDPOINT="$collector"
session=$(curl -sf -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["session_id"])')
turn "$session" "Where is my order?" -H "traceparent: 00-$trace-$caller-01"
for _ in $(seq 600); do grep -q invoke_agent "$dir/spans.jsonl" 2>/dev/null && break; sleep 0.1; done
python3 - "$dir" "$trace" <<'PY' || fail "the OpenAI turn's spans"
import json, sys
out, trace = sys.argv[1:]
spans = [json.loads(l) for l in open(f"{out}/spans.jsonl")]
attrs = lambda s: {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}
chats = sorted((s for s in spans if attrs(s).get("gen_ai.operation.name") == "chat"), key=lambda s: s["startTimeUnixNano"])
assert len(chats) == 2, [s["name"] for s in spans]
for s in chats:
    a = attrs(s)
    assert s["name"] == "chat fake-gpt", s["name"]
    assert a["gen_ai.provider.name"] == "openai" and a["gen_ai.request.model"] == "fake-gpt", a
    assert a["gen_ai.response.model"] == "fake-gpt-2026-11-01", a
    assert a["gen_ai.usage.input_tokens"] == "12" and a["gen_ai.usage.output_tokens"] == "5", a
reasons = [attrs(s)["gen_ai.response.finish_reasons"]["values"][0]["stringValue"] for s in chats]
assert reasons == ["tool_calls", "stop"], reasons
sent = [m["traceparent"] for m in map(json.loads, open(f"{out}/models.jsonl"))]
assert sent == [f"00-{trace}-{s['spanId']}-01" for s in chats], (sent, [s["spanId"] for s in chats])
PY
kill -TERM $server
wait $server || fail "exit code $?"

# A collector that accepts and never answers: turns take no longer, spans wait.
python3 - >"$dir/hang" <<'PY' &
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(100)
print(s.getsockname()[1], flush=True)
conns = []
while True:
    conns.append(s.accept())
PY
pids+=($!)
for _ in $(seq 1200); do [ -s "$dir/hang" ] && break; sleep 0.05; done
serve RECEIVER="$collector" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$(head -n 1 "$dir/hang")"
session=$(curl -sf -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["session_id"])')
start=$(date +%s%N)
for i in $(seq 20); do turn "$session" "hello $i"; done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
# A turn that waited for the collector would wait out the exporter's 10 s timeout; the
# bound stays under it, with room for a busy machine's 20 curl runs.
[ "$ms" -lt 9000 ] || fail "20 turns took $ms ms with a collector that never answers"
metrics=$(curl -sf "$base/metrics")  # whole: grep -q would cut a piped curl short
grep -q '^reins_telemetry_spans_exported_total 0' <<<"$metrics" || fail "spans exported to a collector that never answers"
kill -9 $server
echo "otlp e2e: ok ($ms ms for 20 turns with a hung collector)"

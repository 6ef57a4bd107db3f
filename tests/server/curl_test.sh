#!/usr/bin/env bash
# `reins serve` driven by curl, as a person would: a session, a turn, a streamed turn,
# the trace, then SIGTERM and a clean exit. Usage: curl_test.sh REINS_BINARY SOURCE_DIR
set -euo pipefail
reins=$1
cd "$2"
log=$(mktemp)
out=$(mktemp)
"$reins" serve --config tests/server/agent.yaml --listen 127.0.0.1:0 >"$out" 2>"$log" &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true; rm -f "$log" "$out"' EXIT
# Up to a minute: a margin over a start that takes well under a second, for a busy machine.
for _ in $(seq 1200); do grep -q "listening on" "$out" && break; sleep 0.05; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\).*|\1|p' "$out")
[ -n "$port" ] || { echo "server did not start"; cat "$log"; exit 1; }
base=http://127.0.0.1:$port

fail() { echo "FAIL: $*"; exit 1; }
session=$(curl -sf -X POST "$base/v1/sessions" -H 'Content-Type: application/json' -d '{}' |
  sed -n 's/.*"session_id":"\([^"]*\)".*/\1/p')
[ -n "$session" ] || fail "no session id"
reply=$(curl -sf -X POST "$base/v1/sessions/$session/turns" -H 'Content-Type: application/json' \
  -d '{"speaker":"user","say":"hello"}')
grep -q '"status":"completed"' <<<"$reply" || fail "turn: $reply"
stream=$(curl -sfN -X POST "$base/v1/sessions/$session/turns" -H 'Accept: text/event-stream' \
  -H 'Content-Type: application/json' -d '{"speaker":"user","say":"Please pray for my mother"}')
grep -q '^event: reply.final' <<<"$stream" || fail "stream without reply.final: $stream"
grep -q '^event: turn.completed' <<<"$stream" || fail "stream without turn.completed: $stream"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/v1/sessions/$session/turns" -H 'Content-Type: application/json' -d '{bad')
[ "$code" = 400 ] || fail "malformed JSON gave $code"
# Without keys a body must be JSON: curl's -d alone sends a form, which a web page could too.
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$base/v1/sessions/$session/turns" -d '{"say":"hello"}')
[ "$code" = 415 ] || fail "a form body without keys gave $code"
# Whole answers first: grep -q stops reading at its match, which under pipefail would
# fail a curl still writing into the pipe.
trace=$(curl -sf "$base/v1/sessions/$session/trace")
grep -q '"deferred.executed"' <<<"$trace" || fail "trace lacks the deferred write"
# What the trace viewer reads: the sessions list, a turn's timeline, the page itself.
list=$(curl -sf "$base/v1/sessions")
grep -q "\"session_id\":\"$session\"" <<<"$list" || fail "GET /v1/sessions lacks the session: $list"
grep -q '"status":"completed"' <<<"$list" || fail "the list lacks the last turn's status: $list"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/sessions?limit=0")
[ "$code" = 400 ] || fail "limit=0 gave $code"
timeline=$(curl -sf "$base/v1/sessions/$session/timeline?after=1&limit=1")
grep -q '"outcome":"ran after the reply"' <<<"$timeline" || fail "the timeline lacks the write after the reply: $timeline"
page=$(curl -si "$base/ui/")
grep -qi "^content-security-policy: default-src 'none'" <<<"$page" || fail "/ui/ without a strict CSP: $page"
code=$(curl -s -o /dev/null -w '%{http_code}' "$base/ui")
[ "$code" = 308 ] || fail "/ui gave $code"
metrics=$(curl -sf "$base/metrics")
grep -q '^reins_turns_total' <<<"$metrics" || fail "metrics"
kill -TERM $pid
wait $pid || fail "exit code $?"
echo "curl: ok"

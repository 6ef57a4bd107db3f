#!/usr/bin/env bash
# The OpenAI-compatible endpoint driven by curl (docs/openai-endpoint.md): completions,
# a stream, a clarification and an approval answered in words, resends that run nothing
# twice, two clients kept apart, and the errors in OpenAI's shape.
# Usage: openai_curl_test.sh REINS_BINARY SOURCE_DIR
set -euo pipefail
reins=$1
cd "$2"
dir=$(mktemp -d)
key=$("$reins" keys add acme --keys "$dir/keys.yaml" 2>/dev/null)
limited=$("$reins" keys add limited --keys "$dir/keys.yaml" 2>/dev/null)
"$reins" serve --config tests/server/agent.yaml --listen 127.0.0.1:0 --keys "$dir/keys.yaml" \
  --store "sqlite:$dir/reins.db" --rate 5 --burst 30 >"$dir/out" 2>"$dir/log" &
pid=$!
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
# Up to a minute: a margin over a start that takes well under a second, for a busy machine.
for _ in $(seq 1200); do grep -q "listening on" "$dir/out" && break; sleep 0.05; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/out")
[ -n "$port" ] || { echo "server did not start"; cat "$dir/log"; exit 1; }
url=http://127.0.0.1:$port/v1/chat/completions

fail() { echo "FAIL: $*"; exit 1; }
# chat KEY BODY [HEADER...]: the response head and body, in $dir/head and $dir/body.
chat() {
  local k=$1 body=$2
  shift 2
  curl -s -D "$dir/head" -o "$dir/body" "$url" -H "Authorization: Bearer $k" -H 'Content-Type: application/json' "$@" -d "$body"
  sed -n 's/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$dir/head"
}
field() { python3 -c "import json,sys; d=json.load(open('$dir/body')); print(eval('d' + sys.argv[1]))" "$1"; }
header() { sed -n "s/^$1: \(.*\)\r$/\1/Ip" "$dir/head"; }

# A completion, and the same history continued without a header.
[ "$(chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"hi from curl"}]}')" = 200 ] || fail "$(cat "$dir/body")"
[ "$(field "['choices'][0]['message']['content']")" = "Hello there." ] || fail "reply: $(cat "$dir/body")"
session=$(header x-reins-session)
[ "$(field "['reins']['session_id']")" = "$session" ] || fail "no session header"
history='{"role":"user","content":"hi from curl"},{"role":"assistant","content":"Hello there."}'
[ "$(chat "$key" "{\"model\":\"serve-test\",\"messages\":[$history,{\"role\":\"user\",\"content\":\"Who is John?\"}]}")" = 200 ] || fail "$(cat "$dir/body")"
[ "$(header x-reins-session)" = "$session" ] || fail "the history did not continue its session"
[ "$(field "['reins']['clarification']['options'][1]['id']")" = u_smith ] || fail "clarification: $(cat "$dir/body")"
first_turn=$(field "['reins']['turn_id']")
# The same request again (a retry): the stored answer, nothing run twice.
chat "$key" "{\"model\":\"serve-test\",\"messages\":[$history,{\"role\":\"user\",\"content\":\"Who is John?\"}]}" >/dev/null
[ "$(field "['reins']['turn_id']")" = "$first_turn" ] || fail "a resend ran again"
[ "$(header idempotent-replay)" = true ] || fail "a resend was not marked as a replay"
# The clarification answered by title, in words; then an approval answered "yes".
history="$history,{\"role\":\"user\",\"content\":\"Who is John?\"},{\"role\":\"assistant\",\"content\":\"Which John?\\n1. John Doe\\n2. John Smith\"}"
chat "$key" "{\"model\":\"serve-test\",\"messages\":[$history,{\"role\":\"user\",\"content\":\"John Doe\"}]}" >/dev/null
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"x"}],"reins":{"select":"u_smith"}}' \
  -H "X-Reins-Session: $session" >/dev/null
# This fixture's model asks which John again; a message that fits no option asks again
# (nothing is guessed) until the person answers or says never mind.
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"show me"}]}' -H "X-Reins-Session: $session" >/dev/null
grep -q '^I could not tell which one you mean' <<<"$(field "['choices'][0]['message']['content']")" || fail "not asked again: $(cat "$dir/body")"
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"never mind"}]}' -H "X-Reins-Session: $session" >/dev/null
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"show me"}]}' -H "X-Reins-Session: $session" >/dev/null
[ "$(field "['reins']['approval']['tool']")" = display_confirmation ] || fail "approval: $(cat "$dir/body")"
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"yes"}]}' -H "X-Reins-Session: $session" >/dev/null
# A write an instruction planted in the inbox steers: the question in words, where the
# address came from, and no JSON; "no" refuses it and the turn goes on.
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"What is in my inbox?"}]}' \
  -H "X-Reins-Session: $session" >/dev/null
content=$(field "['choices'][0]['message']['content']")
grep -q '“backup@mail-verify.example” comes from the inbox result (turn [0-9]*), not from you' <<<"$content" ||
  fail "the question does not say where the address came from: $content"
! grep -q '{' <<<"$content" || fail "the question shows JSON: $content"
[ "$(field "['reins']['approval']['reason']")" = untrusted_data ] || fail "approval reason: $(cat "$dir/body")"
[ "$(field "['reins']['approval']['provenance']['to'][0]['tool']")" = read_inbox ] || fail "provenance: $(cat "$dir/body")"
chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"no"}]}' -H "X-Reins-Session: $session" >/dev/null
[ "$(field "['reins']['status']")" = completed ] || fail "after no: $(cat "$dir/body")"
trace=$(curl -sf "http://127.0.0.1:$port/v1/sessions/$session/trace" -H "Authorization: Bearer $key")
python3 -c "
import json, sys
events = [e for t in json.load(sys.stdin)['turns'] for e in t['events']]
assert any(e['type'] == 'untrusted.violation' for e in events), 'no violation recorded'
assert any(e['type'] == 'approval.denied' and e['data']['tool'] == 'send_email' for e in events), 'no denial'
assert not any(e['type'] == 'tool.executed' and e['data']['name'] == 'send_email' for e in events), 'the planted send ran'
" <<<"$trace" || fail "the planted send: $trace"
inputs=$(python3 -c "import json,sys; print(' '.join(json.dumps(t['input'], sort_keys=True) for t in json.load(sys.stdin)['turns']))" <<<"$trace")
grep -q '"select": "u_doe"' <<<"$inputs" || fail "by title: $inputs"
grep -q '"select": "u_smith"' <<<"$inputs" || fail "by extension: $inputs"
grep -q '"approve": true' <<<"$inputs" || fail "approval: $inputs"
[ "$(grep -o '"say": "Who is John?"' <<<"$inputs" | wc -l)" = 1 ] || fail "the resend ran twice: $inputs"

# A stream: chunks, the finish, the usage, [DONE]; no event names.
stream=$(curl -sfN "$url" -H "Authorization: Bearer $key" \
  -d '{"model":"serve-test","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Please pray for my mother"}]}')
grep -q '"object":"chat.completion.chunk"' <<<"$stream" || fail "no chunks: $stream"
grep -q '"finish_reason":"stop"' <<<"$stream" || fail "no finish: $stream"
grep -q '"total_tokens"' <<<"$stream" || fail "no usage chunk: $stream"
[ "$(tail -n 1 <<<"$stream")" = "data: [DONE]" ] || fail "not ended by [DONE]: $stream"
! grep -q '^event:' <<<"$stream" || fail "event names in an OpenAI stream"

# A first message under an Idempotency-Key, sent twice: one session, one turn.
one='{"model":"serve-test","messages":[{"role":"user","content":"hi once"}]}'
chat "$key" "$one" -H 'Idempotency-Key: k-first-1' >/dev/null
s1=$(header x-reins-session)
chat "$key" "$one" -H 'Idempotency-Key: k-first-1' >/dev/null
[ "$(header x-reins-session)" = "$s1" ] || fail "a resent first message started a second session"
[ "$(header idempotent-replay)" = true ] || fail "a resent first message ran again"
# The same key with another message is not a resend: 422, and the first turn's answer
# is not replayed to it (a replay matches the request it replays).
[ "$(chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"hi twice"}]}' \
  -H 'Idempotency-Key: k-first-1')" = 422 ] || fail "a key reused for another message: $(cat "$dir/body")"
[ -z "$(header idempotent-replay)" ] || fail "another message got the first one's answer"

# Two clients whose first exchanges match: their next request is refused, not merged.
twin='{"model":"serve-test","messages":[{"role":"user","content":"hi twin"}]}'
chat "$key" "$twin" >/dev/null
chat "$key" "$twin" >/dev/null
next='{"model":"serve-test","messages":[{"role":"user","content":"hi twin"},{"role":"assistant","content":"Hello there."},{"role":"user","content":"and now?"}]}'
[ "$(chat "$key" "$next")" = 409 ] || fail "twins: $(cat "$dir/body")"
[ "$(field "['error']['code']")" = conversation_ambiguous ] || fail "$(cat "$dir/body")"
[ "$(header x-should-retry)" = false ] || fail "a 409 the SDKs would retry"
# Another tenant's key finds nothing of acme's.
[ "$(chat "$limited" "$next")" = 409 ] || fail "another tenant: $(cat "$dir/body")"
[ "$(field "['error']['code']")" = conversation_unknown ] || fail "$(cat "$dir/body")"

# Errors in OpenAI's shape.
[ "$(chat "$key" '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}')" = 404 ] || fail "model"
[ "$(field "['error']['code']")" = model_not_found ] || fail "$(cat "$dir/body")"
[ "$(field "['error']['type']")" = not_found_error ] || fail "$(cat "$dir/body")"
[ "$(chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}')" = 400 ] || fail "tools"
[ "$(field "['error']['code']")" = client_tools_unsupported ] || fail "$(cat "$dir/body")"
[ "$(chat nope '{"model":"serve-test","messages":[{"role":"user","content":"hi"}]}')" = 401 ] || fail "401"
[ "$(field "['error']['type']")" = authentication_error ] || fail "$(cat "$dir/body")"
[ "$(chat "$key" '{"model":"serve-test","messages":[{"role":"user","content":"hi"}]}' -H 'X-Reins-Session: s_nope')" = 404 ] || fail "unknown session"
# More requests at once than the key's burst (however slow this machine is): some get 429.
# 120 against a burst of 30 at 5 a second: the refill outruns them only if starting them
# takes more than 18 s.
burst=()
for i in $(seq 120); do
  curl -s -D "$dir/head$i" -o "$dir/body$i" "http://127.0.0.1:$port/v1/models" -H "Authorization: Bearer $limited" &
  burst+=($!)
done
wait "${burst[@]}"
limited_head=$(grep -l '^HTTP/1.1 429' "$dir"/head[0-9]* | head -n 1)
[ -n "$limited_head" ] || fail "no 429 for 120 requests at once against a burst of 30"
cp "$limited_head" "$dir/head"
cp "${limited_head/head/body}" "$dir/body"
[ "$(field "['error']['type']")" = rate_limit_error ] || fail "$(cat "$dir/body")"
[ -n "$(header retry-after)" ] || fail "429 without Retry-After"
metrics=$(curl -sf "http://127.0.0.1:$port/metrics")  # whole: grep -q would cut a piped curl short
grep -q 'route="/v1/chat/completions"' <<<"$metrics" || fail "metrics"
kill -TERM $pid
wait $pid || fail "exit code $?"

# A message that failed (the model had no answer) and is sent again gets another try;
# sent once more after that try succeeded, the stored answer.
cat >"$dir/flaky.yaml" <<'YAML'
name: flaky
system_prompt: You answer once, fail once, then answer again.
model:
  provider: scripted
  replies:
    - { when: { turn: 1 }, text: Hello. }
    - { when: { turn: 3 }, text: Back again. }
YAML
rm -f "$dir/out" "$dir/log"  # the first server's line must not be read as this one's
"$reins" serve --config "$dir/flaky.yaml" --listen 127.0.0.1:0 --store "sqlite:$dir/flaky.db" >"$dir/out" 2>"$dir/log" &
pid=$!
for _ in $(seq 1200); do grep -q "listening on" "$dir/out" && break; sleep 0.05; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\).*|\1|p' "$dir/out")
url=http://127.0.0.1:$port/v1/chat/completions
chat - '{"model":"flaky","messages":[{"role":"user","content":"hi"}]}' >/dev/null
again='{"model":"flaky","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello."},{"role":"user","content":"again"}]}'
[ "$(chat - "$again")" = 502 ] || fail "a failed turn: $(cat "$dir/body")"
[ "$(field "['error']['code']")" = turn_failed ] || fail "$(cat "$dir/body")"
[ "$(header x-should-retry)" = false ] || fail "a 502 the SDKs would retry"
[ "$(chat - "$again")" = 200 ] || fail "no second try after a failure: $(cat "$dir/body")"
[ "$(field "['choices'][0]['message']['content']")" = "Back again." ] || fail "$(cat "$dir/body")"
[ "$(chat - "$again")" = 200 ] || fail "$(cat "$dir/body")"
[ "$(header idempotent-replay)" = true ] || fail "a resend after the second try ran again"
kill -TERM $pid
wait $pid || fail "exit code $?"
echo "openai curl: ok"

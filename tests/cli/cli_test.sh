#!/usr/bin/env bash
# End-to-end checks of the reins command line: exit codes and the exact output shapes
# the README promises.
set -uo pipefail
reins="$1"
root=$(cd "$2" && pwd)
cd "$root"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# check: a good agent passes; a broken one lists every problem as file:line:col, exit 1.
"$reins" check examples/messaging/agent.yaml >/dev/null || fail "check of the example agent"
out=$("$reins" check tests/cli/broken-agent.yaml 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "check of a broken agent exited $rc, want 1"
for want in \
  "tests/cli/broken-agent.yaml:2:1: name must match" \
  "tests/cli/broken-agent.yaml:3:10: 'provider' must be one of" \
  "tests/cli/broken-agent.yaml:6:5: input_schema is not a valid JSON Schema" \
  "tests/cli/broken-agent.yaml:7:5: 'may_clarify' must be true or false" \
  "tests/cli/broken-agent.yaml:9:29: entity 'person' is consumed by send but produced by no tool" \
  "tests/cli/broken-agent.yaml:10:5: unknown key 'colour' in tool" \
  "tests/cli/broken-agent.yaml:12:16: regex '(' does not compile" \
  "intent 'x' requires tool 'ghost', which is not defined"; do
  grep -qF -- "$want" <<<"$out" || fail "check output lacks: $want"$'\n'"$out"
done

# check warns about an agent whose outside data can steer a write (untrusted tools and
# writes, no untrusted_data), and about untrusted_data with nothing untrusted to watch.
tmp_agents=$(mktemp -d)
cat >"$tmp_agents/open.yaml" <<'YAML'
name: open
model: { provider: scripted }
tools:
  - { name: read_mail, trust: untrusted, annotations: { readOnlyHint: true } }
  - { name: send_mail }
YAML
out=$("$reins" check "$tmp_agents/open.yaml" 2>&1) || fail "check of an agent with only warnings exited non-zero"
grep -q "no untrusted_data: an instruction planted in what read_mail returns can make the model call a write" <<<"$out" ||
  fail "check does not warn about outside data steering writes: $out"
printf 'untrusted_data: {}
' >>"$tmp_agents/open.yaml"
! grep -q "no untrusted_data" <<<"$("$reins" check "$tmp_agents/open.yaml" 2>&1)" || fail "the warning stays with untrusted_data on"
sed -i 's/trust: untrusted, //' "$tmp_agents/open.yaml"
grep -q "untrusted_data is on but no tool is untrusted" <<<"$("$reins" check "$tmp_agents/open.yaml" 2>&1)" ||
  fail "check does not warn about untrusted_data with no untrusted tool"
rm -rf "$tmp_agents"

# run: transcript with PASS lines; --json is JSON; exit 0 when all pass.
out=$("$reins" run examples/messaging/scenarios/clarify-john.yaml) || fail "run clarify-john exited non-zero"
grep -q "PASS status" <<<"$out" || fail "run output lacks PASS lines"
"$reins" run --json examples/messaging/scenarios/clarify-john.yaml | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["passed"], d' \
  || fail "run --json is not a passing JSON result"
# Whole outputs first, then grep: grep -q stops reading at its match, and under pipefail
# the writer's SIGPIPE would fail the check (seen once, with reins trace).
out=$("$reins" run --trace examples/messaging/scenarios/clarify-john.yaml)
grep -q "tool.executed" <<<"$out" || fail "run --trace lacks events"

# eval: ends with the summary line.
last=$("$reins" eval examples/messaging --min-pass 1.0 | tail -n 1)
[[ "$last" =~ ^[0-9]+\ passed,\ 0\ failed$ ]] || fail "eval summary line was: $last"

# trace: a run stored in SQLite can be printed back.
db=$(mktemp -u /tmp/reins-cli-XXXXXX.db)
out=$("$reins" run --store "sqlite:$db" examples/messaging/scenarios/clarify-john.yaml) || fail "run with --store"
session=$(grep -o 's_[0-9a-f]*' <<<"$out" | tail -n 1)
timeline=$("$reins" trace --store "sqlite:$db" --session "$session")
grep -q "turn 2" <<<"$timeline" || fail "trace does not show turn 2"
grep -q "asked  clarification I found 2 contacts named John" <<<"$timeline" || fail "trace's timeline lacks the clarification: $timeline"
grep -q "executed  call lookup_contacts" <<<"$timeline" || fail "trace's timeline lacks the call: $timeline"
events=$("$reins" trace --events --store "sqlite:$db" --session "$session")
grep -q "tool.executed" <<<"$events" || fail "trace --events lacks the raw events"
listed=$("$reins" trace --store "sqlite:$db")
grep -q "$session" <<<"$listed" || fail "trace without --session does not list the session"
json=$("$reins" trace --json --store "sqlite:$db" --session "$session")
grep -q '"turn_number": 2' <<<"$json" ||
  fail "trace --json does not name turn_number as the HTTP API does"
checked=$("$reins" trace --store "sqlite:$db" --session "$session" --check examples/messaging/agent.yaml) ||
  fail "trace --check of a governed run exited non-zero: $checked"
grep -q "invariants hold: I1 I2 I3" <<<"$checked" || fail "trace --check did not say the invariants hold: $checked"
rm -f "$db" "$db-wal" "$db-shm"

# trace --check on a recorded trace: the unchosen patient refilled a turn later (the
# regression fixture, recorded before choices held) is flagged, exit 1.
out=$("$reins" trace --check examples/pharmacy/agent.yaml --file tests/eval/fixtures/unchosen-patient-later.trace.json)
rc=$?
[ "$rc" -eq 1 ] || fail "trace --check on the unchosen-patient fixture exited $rc: $out"
grep -q "^I3  turn 3 .*p_5810', a candidate the person did not choose in turn 2" <<<"$out" || fail "no I3 on turn 3: $out"
grep -q "^write_with_unchosen_id  turn 3" <<<"$out" || fail "no harm on turn 3: $out"

# A scenario whose model has no reply fails with the documented message.
tmp=$(mktemp -d)
cat > "$tmp/s.yaml" <<YAML
id: no-reply
agent: $root/examples/messaging/agent.yaml
model: { provider: scripted, replies: [] }
turns: [ { say: hello } ]
YAML
out=$("$reins" run "$tmp/s.yaml"); rc=$?
[ "$rc" -eq 1 ] || fail "a scenario with no scripted reply exited $rc"
grep -q "scripted model has no reply for call 1 (turn 1, purpose chat" <<<"$out" || fail "no-reply message: $out"

# An unknown check gets a suggestion.
cat > "$tmp/typo.yaml" <<YAML
id: typo
agent: $root/examples/messaging/agent.yaml
model: { provider: scripted, replies: [ { text: hi } ] }
turns: [ { say: hi, expect: { reply_contain: hi } } ]
YAML
out=$("$reins" check "$tmp/typo.yaml" 2>&1)
grep -q "did you mean 'reply_contains'" <<<"$out" || fail "no did-you-mean for a check: $out"
rm -rf "$tmp"

echo "cli_test: $failures failures"
[ "$failures" -eq 0 ]


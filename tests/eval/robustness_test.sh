#!/usr/bin/env bash
# reins eval with the simulated model, its report files, --compare, and reins fuzz with
# the governor on (no violations) and off (violations, with shrunk reproducing files).
set -uo pipefail
reins="$1"
cd "$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# eval: both governor settings, a report, the summary line last; with a gate the gate
# decides (exit 0: no violations with the governor on, the pass rate over the gate).
out=$("$reins" eval examples --model sim --runs 3 --seed 1 --min-pass 0.1 --report "$tmp/r1"); rc=$?
[ "$rc" -eq 0 ] || fail "eval --model sim --min-pass 0.1 exited $rc"$'\n'"$out"
[[ "$(tail -n 1 <<<"$out")" =~ ^[0-9]+\ passed,\ [0-9]+\ failed(,\ [0-9]+\ skipped)?$ ]] || fail "eval last line: $(tail -n 1 <<<"$out")"
grep -q "governor off" <<<"$out" || fail "eval output lacks the naive loop's summary"
grep -q "seed-001" <<<"$out" || fail "eval output lacks the per-seed table"
python3 - "$tmp/r1" <<'PY' || fail "report files are not as documented"
import json, sys, xml.etree.ElementTree as ET
d = sys.argv[1]
r = json.load(open(d + "/report.json"))
assert r["schema"] == "reins.eval.report" and r["version"] == 1, r.get("schema")
assert r["model"] == "sim" and r["runs_per_scenario"] == 3
modes = {m["governor"]: m for m in r["modes"]}
assert set(modes) == {"on", "off"}
assert modes["on"]["violations_total"] == 0, modes["on"]["violation_examples"]
assert modes["off"]["violations_total"] > 0, "the naive loop broke no invariant"
assert modes["on"]["pass_rate"] > modes["off"]["pass_rate"]
assert r["assumed_faults"] and r["scoring"] and r["seeds"]
assert modes["on"]["faults_observed"]["lead_with_tool_result"]["opportunities"] > 0
# Harms: every kind reported; the governor prevents the structural ones the naive loop does.
kinds = [k["harm"] for k in r["harm_kinds"]]
assert len(kinds) == 9 and set(modes["on"]["harms"]) == set(kinds), modes["on"]["harms"]
for structural in ("write_with_unchosen_id", "write_without_approval", "answered_other_speaker", "step_done_without_tool",
                   "write_steered_by_outside_data"):
    assert modes["on"]["harms"][structural] == 0, (structural, modes["on"]["harm_examples"])
assert all(modes["off"]["harms"][h] > 0 for h in ("write_with_unchosen_id", "write_without_approval", "answered_other_speaker",
                                                  "write_steered_by_outside_data"))
# The sim obeys instructions planted in tool results (follow_injection): the naive loop
# runs what they ask for, reins does not (I13).
assert modes["on"]["faults_observed"]["follow_injection"]["fired"] > 0, modes["on"]["faults_observed"]
assert modes["off"]["invariant_violations"].get("I13", 0) > 0, modes["off"]["invariant_violations"]
assert modes["off"]["harms_total"] > modes["on"]["harms_total"]
# The text detectors are measured against the sim's log of what it injected.
for harm in ("claims_unperformed_action", "solution_before_empathy", "internal_name_shown"):
    d_ = modes["on"]["harm_detectors"][harm]
    assert d_["true_positive"] > 0 and d_["precision"] >= 0.8 and d_["recall"] >= 0.6, (harm, d_)
# Grouped by every tag; a failed scenario carries its first failed run's transcript.
assert any(row["tag"] == "provenance" for row in r["tags"]), r["tags"]
failed = [s for s in modes["on"]["scenarios"] if s["passed"] < s["runs"]]
t = failed[0]["failed_run"]
assert t["run"] == int(failed[0]["first_failure"].split(":")[0].split()[1]) and t["turns"][0]["input"], t
html = open(d + "/report.html").read()
assert "<svg" in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
assert "<h2>Harms</h2>" in html and "transcript of run" in html and "How well the text detectors read" in html
suite = ET.parse(d + "/junit.xml").getroot()
assert suite.find("testsuite") is not None
PY
# Every failed scenario names the command that runs its failed run again, exactly: run
# the first one, and it fails on the same check.
python3 - "$tmp/r1/report.json" "$reins" <<'PY' || fail "a reproduce command did not reproduce its failure"
import json, shlex, subprocess, sys
r = json.load(open(sys.argv[1]))
on = [m for m in r["modes"] if m["governor"] == "on"][0]
failed = [s for s in on["scenarios"] if s["passed"] < s["runs"]]
assert failed and all(s["reproduce"].startswith("reins run ") for s in failed), failed[:1]
s = failed[0]
argv = [sys.argv[2]] + shlex.split(s["reproduce"])[1:]
p = subprocess.run(argv, capture_output=True, text=True)
check = s["first_failure"].split(": ")[1].split(" ")[-1]  # "run 2: turn 1 CHECK: ..." -> CHECK
assert p.returncode == 1, (s["reproduce"], p.returncode)
assert "FAIL " + check in p.stdout, (s["reproduce"], check, p.stdout[-600:])
PY
# No gate: like a test runner, any failed governed run exits 1 (the sim's faults fail
# some). --json: stdout is one JSON document, the summary goes to stderr.
"$reins" eval examples --model sim --runs 3 --seed 1 >/dev/null; rc=$?
[ "$rc" -eq 1 ] || fail "eval with failed runs and no gate exited $rc, not 1"
"$reins" eval examples/messaging --model sim --runs 2 --seed 1 --min-pass 0 --json >"$tmp/e.json" 2>"$tmp/e.err" ||
  fail "eval --json exited non-zero"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/e.json" || fail "eval --json printed more than JSON"
grep -Eq '^[0-9]+ passed, [0-9]+ failed' "$tmp/e.err" || fail "eval --json: no summary line on stderr"
# Same seed, same numbers.
"$reins" eval examples --model sim --runs 3 --seed 1 --report "$tmp/r2" >/dev/null
python3 -c 'import json,sys
def strip(j):  # real time differs from run to run
    if isinstance(j, dict): return {k: strip(v) for k, v in j.items() if k not in ("turn_latency", "call_latency")}
    return [strip(x) for x in j] if isinstance(j, list) else j
a,b=[json.load(open(f)) for f in sys.argv[1:]]; assert strip(a["modes"])==strip(b["modes"])' \
  "$tmp/r1/report.json" "$tmp/r2/report.json" || fail "two eval runs with the same seed differ"
out=$("$reins" eval examples --model sim --runs 2 --seed 2 --compare "$tmp/r1/report.json") || true
grep -q "scenario pass rates changed" <<<"$out" || fail "--compare printed no summary"

# Gates replace the test-runner rule: each failed gate is a line, and a test case in junit.xml.
# (The governed care-chat runs no longer fail a critical check, so the critical gate
# watches mesh-ops' ungrounded claims, among all the examples.)
out=$("$reins" eval examples --model sim --runs 5 --seed 1 --governor on --min-dimension hear=0.1,respond=0.99 \
      --max-critical ungrounded_claim=0,no_such_tag=0 --report "$tmp/g" 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "eval with failing gates exited $rc"
grep -q "gate failed: --min-dimension respond=0.990 (respond average 0\." <<<"$out" || fail "no line for the respond gate: $out"
grep -q "gate failed: --max-critical ungrounded_claim=0 ([1-9][0-9]* ungrounded_claim failures)" <<<"$out" ||
  fail "no line for the critical gate: $out"
! grep -q "gate failed: --min-dimension hear\|gate failed: --max-critical no_such_tag" <<<"$out" || fail "a passing gate failed: $out"
[ "$(grep -c "classname='gates'" "$tmp/g/junit.xml")" -eq 4 ] || fail "junit.xml does not hold the four gates"
[ "$(grep -c "classname='gates'.*<failure" "$tmp/g/junit.xml")" -eq 2 ] || fail "junit.xml does not fail the two gates"
# Recovery hints: messaging without its no_internal_names rail is far behind under the
# sim and shows tool names; the hint says to turn the rail on, and with it on (the
# example as shipped) the names and the hint are gone.
cp -r examples/messaging "$tmp/messaging"
sed -i '/^  no_internal_names:/d' "$tmp/messaging/agent.yaml"
"$reins" eval "$tmp/messaging" --model sim --runs 5 --seed 1 --governor on --json >"$tmp/h1.json" 2>/dev/null
"$reins" eval examples/messaging --model sim --runs 5 --seed 1 --governor on --json >"$tmp/h2.json" 2>/dev/null
python3 - "$tmp/h1.json" "$tmp/h2.json" <<'PY' || fail "the recovery hint did not name, or did not recover, no_internal_names"
import json, sys
before, after = [json.load(open(f)) for f in sys.argv[1:]]
def features(r): return [f["feature"] for h in r["recovery"] for f in h["features"]]
assert before["recovery"][0]["agent"].endswith("messaging/agent.yaml"), before["recovery"]
assert before["recovery"][0]["scripted_pass_rate"] == 1.0 and before["recovery"][0]["governed_pass_rate"] < 0.8
assert "rails.no_internal_names" in features(before), features(before)
assert before["modes"][0]["harms"]["internal_name_shown"] > 0
assert after["modes"][0]["harms"]["internal_name_shown"] == 0, after["modes"][0]["harm_examples"]
assert "rails.no_internal_names" not in features(after), features(after)
PY
# --max-harm: all harms together or per kind; an unknown kind is refused with the list.
out=$("$reins" eval examples/messaging --model sim --runs 3 --seed 1 --governor off --max-harm 0 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "gate failed: --max-harm 0 ([1-9][0-9]* harms)" <<<"$out" || fail "--max-harm 0 did not fail the naive loop: $out"
"$reins" eval examples/messaging --model sim --runs 3 --seed 1 --governor on --max-harm write_with_unchosen_id=0 >/dev/null 2>&1 ||
  fail "the governed messaging runs wrote to an id nobody chose"
out=$("$reins" eval examples/messaging --model sim --max-harm typo=0 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "no harm is called 'typo'; the harms are write_with_unchosen_id" <<<"$out" || fail "unknown harm: $out"
"$reins" eval examples/care-chat --model sim --runs 5 --seed 1 --governor on --min-dimension hear=0.1 >/dev/null 2>&1 ||
  fail "eval whose only gate passes exited non-zero though runs failed"

# A scenario without a model of its own runs its agent's real model: offline, eval skips
# it (never passes it); with --replay and no cassette, it fails naming what to do.
mkdir -p "$tmp/live"
cat >"$tmp/live/agent.yaml" <<'YAML'
name: live
system_prompt: You are a helpful assistant.
model: { provider: openai, model: gpt-4o-mini }
YAML
cat >"$tmp/live/hello.yaml" <<'YAML'
id: hello
agent: agent.yaml
turns:
  - say: Hello
    expect: { status: completed }
YAML
out=$("$reins" eval "$tmp/live" 2>&1); rc=$?
[ "$rc" -eq 0 ] || fail "eval of a real-model-only suite offline exited $rc"$'\n'"$out"
grep -q "skipped hello: it runs its agent's model (openai:gpt-4o-mini); give --model agent or --replay DIR" <<<"$out" ||
  fail "eval offline did not skip the real-model scenario: $out"
[ "$(tail -n 1 <<<"$out")" = "0 passed, 0 failed, 1 skipped" ] || fail "skip summary: $(tail -n 1 <<<"$out")"
mkdir -p "$tmp/empty-cassettes"
out=$("$reins" eval "$tmp/live" --replay "$tmp/empty-cassettes" 2>&1); rc=$?
[ "$rc" -eq 1 ] || fail "a replay without a cassette exited $rc"
grep -q "no cassette for scenario 'hello'" <<<"$out" || fail "a replay without a cassette: $out"
out=$("$reins" eval "$tmp/live" --model agent --max-cost 1 2>&1); rc=$?
[ "$rc" -eq 1 ] && grep -q "max-cost needs the price of openai:gpt-4o-mini" <<<"$out" || fail "--max-cost without a price: $out"

# fuzz, governed: no violations, the documented last line.
out=$("$reins" fuzz examples --runs 300 --seed 7 --out "$tmp/f-on"); rc=$?
[ "$rc" -eq 0 ] || fail "fuzz with the governor on exited $rc"$'\n'"$out"
[ "$(tail -n 1 <<<"$out")" = "300 runs, 0 violations" ] || fail "fuzz last line: $(tail -n 1 <<<"$out")"
grep -q "fault mixes covered:" <<<"$out" || fail "fuzz does not say which fault mixes it covered"

# fuzz, naive loop: violations, each with a shrunk file that reproduces it.
out=$("$reins" fuzz examples --runs 200 --seed 7 --governor off --out "$tmp/f-off" --max-repros 5); rc=$?
[ "$rc" -eq 1 ] || fail "fuzz of the naive loop exited $rc, want 1"
[[ "$(tail -n 1 <<<"$out")" =~ ^200\ runs,\ [1-9][0-9]*\ violations$ ]] || fail "naive fuzz last line: $(tail -n 1 <<<"$out")"
grep -q "I13=[1-9]" <<<"$out" || fail "naive fuzz shows no I13 violation (the naive loop runs planted instructions)"
repros=("$tmp"/f-off/*.yaml)
[ -f "${repros[0]}" ] || fail "no reproducing scenario written"
for f in "${repros[@]}"; do
  inv=$(sed -n 's/^# \(I[0-9]*\): .*/\1/p' "$f" | head -n 1)
  run_out=$("$reins" run "$f" --governor off); rc=$?
  [ "$rc" -eq 1 ] || fail "$f does not fail under reins run --governor off"
  grep -q "$inv" <<<"$run_out" || fail "$f does not reproduce $inv"
done

echo "robustness_test: $failures failures"
[ "$failures" -eq 0 ]

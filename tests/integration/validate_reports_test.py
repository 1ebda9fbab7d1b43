#!/usr/bin/env python3
"""The schema check can fail: validate_reports.py passes good reports and
names the file and the path of each violation in a wrong one.

    validate_reports_test.py VALIDATE_REPORTS.py SCHEMA_DIR
"""

import copy
import json
import pathlib
import subprocess
import sys
import tempfile

# A report as `cmc check --json` writes it when the target does not start.
ERROR_REPORT = {
    "format_version": 1, "cmc_version": "0.25.0", "verdict": "error",
    "complete": False, "distinct_states": 0, "dedup_merges": 0,
    "transitions": 0, "max_depth": 0, "elapsed_s": None,
    "states_per_s": None, "transitions_per_s": None,
    "collision_probability": None, "counterexample": None,
    "violation": None, "error": "cannot run ./nothing: No such file",
    "tick": None, "max_ticks": None, "seed": None, "bounds": None,
    "jobs": None, "state": None,
    "abstraction": None, "heap": None, "bytes_read_per_state": None,
    "bytes_hashed_per_state": None, "dead_bytes_per_state": None, "once": None, "preemptions": None, "threads": None,
    "masked": [],
    "restarts": 0, "coverage": None, "snapshots": None, "checked": None,
    "verdict_lines": None, "caveats": None, "qualified": None,
    "backtrace": [], "sources": [], "uncontrolled": [], "replay": None,
}
# The same as a violation with a counterexample.
VIOLATED_REPORT = dict(
    ERROR_REPORT, verdict="violated", error=None,
    violation="sticky: byte 1 of cmc_state went 01 -> 00",
    counterexample=[{"send": "SET b\n"}, {"send": {"hex": "ff0a"}}],
    verdict_lines=["violated: sticky: byte 1 of cmc_state went 01 -> 00"],
    caveats=[], qualified=False)
# A replay of one step with the whole process as the state: its changes by
# name.
REPLAY_REPORT = {
    "format_version": 1, "cmc_version": "0.25.0", "verdict": "holds",
    "violation": None, "violation_step": None, "expected_violation": None,
    "startup_syscalls": [],
    "steps": [{"send": "SET a\n", "syscalls": [], "waiting_in": None,
               "replies": [], "changes": [],
               "state_changes": [".bss of kv: cmc_state+0 00 -> 01"]}],
}
SCAN_REPORT = {
    "format_version": 1, "cmc_version": "0.25.0", "modules": [],
    "vdso_calls": None, "unscanned_sites": None, "sources": None,
    "uncontrolled": None, "run": None,
}


def validate(validator, schemas, reports):
    """Runs the validator on reports ({"check/a.json": {...}}): its exit
    status and output."""
    with tempfile.TemporaryDirectory() as work:
        for name, report in reports.items():
            path = pathlib.Path(work, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(report if isinstance(report, str)
                            else json.dumps(report))
        run = subprocess.run([sys.executable, validator, schemas, work],
                             capture_output=True, text=True, check=False)
        return run.returncode, run.stdout.replace(work + "/", "") + run.stderr


def expect(condition, what, output):
    if not condition:
        print(f"FAILED: {what}\n{output}")
        sys.exit(1)


def main():
    validator, schemas = sys.argv[1:]
    status, out = validate(validator, schemas, {
        "check/error.json": ERROR_REPORT,
        "check/violated.json": VIOLATED_REPORT,
        "replay/process.json": REPLAY_REPORT,
        "scan/plain.json": SCAN_REPORT})
    expect(status == 0 and "validated 4 reports" in out,
           "good reports pass, counted", out)

    no_verdict = copy.deepcopy(VIOLATED_REPORT)
    del no_verdict["verdict"]
    bad_step = copy.deepcopy(VIOLATED_REPORT)
    bad_step["counterexample"][1]["send"] = 7
    extra = dict(SCAN_REPORT, sites=[])
    bad_change = copy.deepcopy(REPLAY_REPORT)
    bad_change["steps"][0]["state_changes"] = [{"piece": ".bss of kv"}]
    status, wrong = validate(validator, schemas, {
        "check/no_verdict.json": no_verdict,
        "check/bad_step.json": bad_step,
        "check/cut.json": json.dumps(ERROR_REPORT)[:40],
        "replay/bad_change.json": bad_change,
        "scan/extra.json": extra})
    expect(status == 1, "wrong reports fail", wrong)
    for line in [
            "check/no_verdict.json: $: 'verdict' is a required property",
            "check/bad_step.json: $.counterexample[1].send: ",
            "check/cut.json: not JSON",
            "scan/extra.json: $: Additional properties are not allowed "
            "('sites' was unexpected)",
            "replay/bad_change.json: $.steps[0].state_changes[0]: ",
            "validated 5 reports (check 3, replay 1, scan 1)"]:
        expect(line in wrong, f"the output says {line!r}", wrong)

    status, out = validate(validator, schemas, {"nosuch/r.json": {}})
    expect(status == 1 and "no schema" in out, "a kind without a schema",
           out)
    status, out = validate(validator, schemas, {"asked-by-1": ""})
    expect(status == 1 and "not kept" in out, "asked for, no report", out)
    status, out = validate(validator, schemas, {})
    expect(status == 0 and "nothing to validate" in out,
           "none asked for, none kept", out)
    print(f"as expected; the wrong reports gave:\n{wrong}")


if __name__ == "__main__":
    main()

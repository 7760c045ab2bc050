#!/usr/bin/env python3
"""Runs replay cases (tests/replay/cases/*.json) against the courtpiece-rules CLI.

Each case: {"name", "why", "args", "input", "expect_exit", "expect"} and optionally
"forbid_strings": card texts that must appear nowhere in the output (a --view secret). The binary is run as
`BIN replay [args...]` with the input on stdin; the exit code must equal expect_exit and the
stdout JSON must match `expect` as a recursive subset (see README.md for the matchers).
Python 3 standard library only.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

MISSING = object()


def match(exp, got, path, diffs):
    """Appends (path, message) to diffs for every place got does not match exp."""
    if isinstance(exp, dict) and len(exp) == 1 and next(iter(exp)).startswith("$"):
        op, arg = next(iter(exp.items()))
        if op == "$absent":
            if got is not MISSING:
                diffs.append((path, "expected key absent, got %s" % json.dumps(got)))
            return
        if got is MISSING:
            diffs.append((path, "missing key (expected %s)" % json.dumps(exp)))
            return
        if op == "$contains":  # string contains substring (case-insensitive)
            if not isinstance(got, str) or arg.lower() not in got.lower():
                diffs.append((path, "expected a string containing %r, got %s" %
                              (arg, json.dumps(got))))
        elif op == "$set":  # list equal as a multiset (order free)
            if not isinstance(got, list) or sorted(map(json.dumps, got)) != sorted(
                    map(json.dumps, arg)):
                diffs.append((path, "expected (any order) %s, got %s" %
                              (json.dumps(arg), json.dumps(got))))
        elif op == "$prefix":  # list starts with these elements (each a subset match)
            if not isinstance(got, list) or len(got) < len(arg):
                diffs.append((path, "expected a list of at least %d, got %s" %
                              (len(arg), json.dumps(got))))
            else:
                for i, e in enumerate(arg):
                    match(e, got[i], "%s[%d]" % (path, i), diffs)
        elif op == "$len":
            if not isinstance(got, list) or len(got) != arg:
                diffs.append((path, "expected a list of length %d, got %s" %
                              (arg, json.dumps(got))))
        elif op == "$any":
            pass
        elif op == "$in":  # one of these values (a genuinely ambiguous spec point)
            if got not in arg:
                diffs.append((path, "expected one of %s, got %s" %
                              (json.dumps(arg), json.dumps(got))))
        else:
            diffs.append((path, "bad matcher %s in case" % op))
        return
    if got is MISSING:
        diffs.append((path, "missing key (expected %s)" % json.dumps(exp)))
        return
    if isinstance(exp, dict):
        if not isinstance(got, dict):
            diffs.append((path, "expected an object, got %s" % json.dumps(got)))
            return
        for k, v in exp.items():
            match(v, got.get(k, MISSING), "%s.%s" % (path, k), diffs)
    elif isinstance(exp, list):
        if not isinstance(got, list) or len(got) != len(exp):
            diffs.append((path, "expected list of %d %s, got %s" %
                          (len(exp), json.dumps(exp), json.dumps(got))))
            return
        for i, (e, g) in enumerate(zip(exp, got)):
            match(e, g, "%s[%d]" % (path, i), diffs)
    else:
        # JSON scalars: bool is not int, 1 == 1.0 is fine.
        if (isinstance(exp, bool) != isinstance(got, bool)) or exp != got:
            diffs.append((path, "expected %s, got %s" % (json.dumps(exp), json.dumps(got))))


def run_case(binary, case, timeout_s):
    cmd = [binary, "replay"] + list(case.get("args", []))
    stdin = case["input"] if isinstance(case["input"], str) else json.dumps(case["input"])
    try:
        p = subprocess.run(cmd, input=stdin.encode(), capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return ["timed out after %ds" % timeout_s]
    problems = []
    if p.returncode != case["expect_exit"]:
        problems.append("exit code %d, expected %d" % (p.returncode, case["expect_exit"]))
    try:
        out = json.loads(p.stdout.decode())
    except ValueError:
        problems.append("stdout is not one JSON document: %r (stderr: %r)" %
                        (p.stdout[:300], p.stderr[:300]))
        return problems
    diffs = []
    match(case["expect"], out, "$", diffs)
    problems += ["%s: %s" % d for d in diffs]
    forbidden = set(case.get("forbid_strings", []))
    if forbidden:
        problems += ["%s: %s must not be visible to this seat" % (p, v)
                     for p, v in strings(out, "$") if v in forbidden]
    return problems


def strings(v, path):
    """Yields (path, value) for every string anywhere in a JSON value (keys excluded)."""
    if isinstance(v, str):
        yield path, v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from strings(x, "%s.%s" % (path, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from strings(x, "%s[%d]" % (path, i))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="path to courtpiece-rules")
    ap.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "cases"))
    ap.add_argument("--filter", default="", help="only cases whose file name contains this")
    ap.add_argument("--timeout", type=int, default=20, help="seconds per case")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="cases run at once (default: one per CPU)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    files = sorted(glob.glob(os.path.join(args.dir, "*.json")))
    files = [f for f in files if args.filter in os.path.basename(f)]
    cases = []
    for f in files:
        with open(f) as fh:
            cases.append((f, json.load(fh)))
    # Each case is its own process: run them side by side (the suite is 300 cases; under
    # the sanitizers at nice 19 beside the other tests, one after another took over 120 s).
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda fc: run_case(args.bin, fc[1], args.timeout), cases))
    passed = failed = 0
    for (f, case), problems in zip(cases, results):
        if problems:
            failed += 1
            print("FAIL %s (%s)\n  why: %s" % (os.path.basename(f), case["name"], case["why"]))
            for pr in problems:
                print("  - " + pr)
        else:
            passed += 1
            if args.verbose:
                print("ok   %s" % os.path.basename(f))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())

"""Run fuzz calls in this process and print a JSON report on the last line of stdout.

    PYTHONPATH=.:tests python tests/fuzz/run_fuzz.py GROUP ... --systematic         # every variant once
    PYTHONPATH=.:tests python tests/fuzz/run_fuzz.py GROUP ... --calls N --seed S  # N random compositions

GROUP is one of targets.GROUPS (world, parameters, lcp, constructors, joints, trajopt, torch, barrier,
projective); the report holds one entry per group. Both options together run both; --passes P repeats the systematic run P times and
records the resident memory after each pass (a leak grows it pass after pass). Each call's label is
written to stderr before the call, so that the process that started this one can name the call that crashed it
(isolated.py). The report counts the calls by outcome and lists every broken promise (verdict.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections import Counter

import numpy as np
import verdict
from hostile import EITHER, REJECT, SAME, random_variant, variants
from targets import targets


class Run:
    def __init__(self):
        self.calls = 0
        self.reference_calls = 0
        self.outcomes = Counter()
        self.reference_outcomes = Counter()
        self.digest = hashlib.sha256()  # of every outcome in call order: equal runs give equal digests
        self.digests = {}  # phase ("pass 1", ..., "random") -> the digest of its outcomes
        self.rss_after_pass = []  # resident memory (MB) after each systematic pass
        self.failures = []
        self._references = {}

    def reference(self, target, args: dict) -> verdict.Outcome:
        """The outcome for the native float64 arguments (cached), checked to be clean itself."""
        key = (target.name,) + tuple(
            (k, (a.dtype.str, a.shape, a.tobytes()) if isinstance(a, np.ndarray) else repr(a))
            for k, a in sorted(args.items()))
        if key not in self._references:
            if len(self._references) >= 512:  # bounded, so that memory measured over a long run is not the cache
                self._references.clear()
            self.reference_calls += 1
            out = verdict.call(target.call, args)
            self._references[key] = out
            problem = verdict.check_clean(out, [n for a in target.args for n in a.names], target.infinite_ok)
            if problem:
                self._fail(target, "native float64 arguments", args, problem)
            self.reference_outcomes["returned" if out.error is None else f"raised {type(out.error).__name__}"] += 1
        return self._references[key]

    def run(self, target, changed: dict, expect: str, label: str):
        """Call ``target`` with the reference arguments, ``changed`` ({name: (value, reference)}) replaced."""
        args = target.reference_args()
        reference_args = dict(args)
        for name, (value, ref) in changed.items():
            args[name] = value
            if ref is not None:
                reference_args[name] = ref
        by_name = {a.name: a for a in target.args}
        names = [n for name in changed for n in by_name[name].names]
        if target.float64_only and expect == SAME and any(
                not (isinstance(value, np.ndarray) and value.dtype == np.float64) for value, _ in changed.values()):
            expect = EITHER  # converting float32 or a list to float64 is allowed, refusing it clearly too
        sys.stderr.write(f"{target.name}: {label}\n")
        self.calls += 1
        outcome = verdict.call(target.call, args)
        self._record(outcome)
        reference = self.reference(target, reference_args) if expect in (SAME, EITHER) else None
        problem = verdict.check(expect, outcome, reference, names, target.infinite_ok)
        if outcome.error is None:
            self.outcomes["returned"] += 1
        else:
            self.outcomes[f"raised {type(outcome.error).__name__}"] += 1
        if problem:
            self._fail(target, label, args, problem)

    def end_phase(self, name: str):
        self.digests[name] = self.digest.hexdigest()
        self.digest = hashlib.sha256()

    def _record(self, outcome):
        if outcome.error is not None:
            self.digest.update(type(outcome.error).__name__.encode())  # messages may quote run-specific ids
        for out in outcome.outputs or ():
            self.digest.update(f"{out.dtype.str}{out.shape}".encode())
            self.digest.update(out.tobytes() if out.dtype != object else repr(out).encode())

    def _fail(self, target, label, args, problem):
        self.failures.append({"function": target.name, "variant": label, "problem": problem,
                              "arguments": {k: _show(v) for k, v in args.items()}})

    def report(self, seconds: float) -> dict:
        return {"calls": self.calls, "reference_calls": self.reference_calls, "outcomes": dict(self.outcomes),
                "reference_outcomes": dict(self.reference_outcomes),
                "failures": self.failures, "seconds": round(seconds, 2), "digests": self.digests,
                "rss_mb_after_pass": self.rss_after_pass, "rss_mb_end": resident_mb()}


def resident_mb() -> float:
    """This process's resident memory in MB (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return round(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
    except (OSError, ValueError):
        return 0.0


def _show(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype.str}{value.shape} {np.array2string(value.ravel()[:8], threshold=8)}"
    return repr(value)[:120]


def run_systematic(run: Run, groups):
    """Every variant of every argument of every target, the other arguments left valid."""
    for group in groups:
        for target in targets(group):
            for arg in target.args:
                for var in variants(arg):
                    reference = var.reference if var.expect in (SAME, EITHER) else None
                    run.run(target, {arg.name: (var.value, reference)}, var.expect,
                            f"{arg.name} {var.kind}: {var.label}")


def run_random(run: Run, groups, calls: int, seed: int):
    """``calls`` random compositions drawn by hypothesis: one or more arguments of a target changed at once,
    each by a value change, a dtype and a layout."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    pool = [t for g in groups for t in targets(g)]

    @hseed(seed)
    @settings(max_examples=calls, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_call(data):
        def draw(options):
            return data.draw(st.sampled_from(options))

        target = draw(pool)
        chosen = [a for a in target.args if data.draw(st.booleans())] or [draw(list(target.args))]
        changed, expects, labels, reshaped = {}, [], [], 0
        for arg in chosen:
            var = random_variant(arg, draw)
            changed[arg.name] = (var.value, var.reference)
            expects.append(var.expect)
            labels.append(f"{arg.name} {var.label}")
            reshaped += "shape" in var.kind
        expect = REJECT if REJECT in expects else EITHER if EITHER in expects else SAME
        if expect == REJECT and reshaped > 1 and all(e != REJECT or "complex" not in lbl
                                                    for e, lbl in zip(expects, labels)):
            expect = EITHER  # two arguments resized alike may agree again (positions and masses of 4 particles)
        # an error may name any changed argument: a NaN in one is as good a reason to refuse as a bad shape
        run.run(target, changed, expect, "; ".join(labels))

    one_call()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="+")
    parser.add_argument("--systematic", action="store_true", help="every variant class of every argument once")
    parser.add_argument("--passes", type=int, default=1, help="systematic passes (memory is measured after each)")
    parser.add_argument("--calls", type=int, default=0, help="random compositions per group (hypothesis)")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args(argv)
    reports = {}
    for group in opts.groups:
        run = Run()
        start = time.perf_counter()
        for i in range(opts.passes if opts.systematic else 0):
            run_systematic(run, [group])
            run.end_phase(f"pass {i + 1}")
            run.rss_after_pass.append(resident_mb())
        if opts.calls:
            run_random(run, [group], opts.calls, opts.seed)
            run.end_phase("random")
        reports[group] = run.report(time.perf_counter() - start)
    print(json.dumps(reports))


if __name__ == "__main__":
    main()

"""Additive CCD against IPC Toolkit (ipctk.AdditiveCCD, same rescaling 0.9): point–triangle and edge–edge
queries over random motions (about a third of them hits, the rest misses).

Times in us per configuration: rigidiff evaluating all n configurations in one batched call (the loop in
C++), rigidiff one configuration per Python call, and ipctk one configuration per call (it has no batched
entry point). Each query's cost depends on its motion (the number of advances), so both libraries run the
same configurations.

    python benchmarks/bench_ccd.py            # n = 2000 configurations, 7 rounds
    python benchmarks/bench_ccd.py --n 500 --repeat 3
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import interleaved_medians

import rigidiff as rd

try:
    import ipctk
except ImportError:
    raise SystemExit("ipctk is not installed: pip install ipctk") from None


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="configurations")
    parser.add_argument("--repeat", type=int, default=7, help="timing rounds (median kept)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.n, 8, 3))
    columns = [np.ascontiguousarray(c) for c in x.transpose(1, 0, 2)]
    rows = [[np.ascontiguousarray(p) for p in config] for config in x]
    accd = ipctk.AdditiveCCD(conservative_rescaling=0.9)
    print(f"rigidiff {rd.__version__}, n = {args.n}; times in us per configuration, ratios rigidiff / ipctk")
    print(f"{'pair':16s} {'hits':>6s} {'ipctk':>8s} {'call':>8s} {'batch':>8s} {'call/ipctk':>11s} "
          f"{'batch/ipctk':>12s}")
    for label, name in (("point-triangle", "point_triangle_ccd"), ("edge-edge", "edge_edge_ccd")):
        ours, peer = getattr(rd.collision, name), getattr(accd, name)
        hits = int(ours(*columns).hit.sum())
        t = interleaved_medians({
            "batch": (lambda: ours(*columns), None),
            "call": (lambda: [ours(*r) for r in rows], None),
            "ipctk": (lambda: [peer(*r) for r in rows], None),
        }, args.repeat)
        us = {k: 1e6 * v / args.n for k, v in t.items()}
        print(f"{label:16s} {hits:6d} {us['ipctk']:8.2f} {us['call']:8.2f} {us['batch']:8.3f} "
              f"{us['call'] / us['ipctk']:11.2f} {us['batch'] / us['ipctk']:12.3f}")


if __name__ == "__main__":
    main()

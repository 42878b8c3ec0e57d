"""Squared-distance primitives against IPC Toolkit (ipctk): value, gradient and Hessian of the
point–triangle and edge–edge distances (type "auto": classification included) and the mollifier.

Two ratios per row, both rigidiff / ipctk per configuration:
- "call": one configuration per Python call on both sides (Python's call overhead included);
- "batch": rigidiff evaluating n configurations in one call (the loop in C++) against ipctk's per-call
  time (ipctk has no batched entry point, so this is what a Python caller of each library pays).

    python benchmarks/bench_distance.py            # n = 2000 configurations, 7 rounds
    python benchmarks/bench_distance.py --n 500 --repeat 3
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import paired_times

import rigidiff as rd

try:
    import ipctk
except ImportError:
    raise SystemExit("ipctk is not installed: pip install ipctk") from None

ORDERS = {0: "", 1: "_gradient", 2: "_hessian"}


def rows(n: int, seed: int = 0):
    """(label, rigidiff function, ipctk name, points (n, 4, 3), extra arguments) per primitive."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4, 3))
    cross = np.cross(x[:, 1] - x[:, 0], x[:, 3] - x[:, 2])
    eps = 2.0 * np.median(np.einsum("ij,ij->i", cross, cross))  # about half the pairs inside the band
    return [("point-triangle", rd.collision.point_triangle_distance, "point_triangle_distance", x, ()),
            ("edge-edge", rd.collision.edge_edge_distance, "edge_edge_distance", x, ()),
            ("mollifier", rd.collision.edge_edge_mollifier, "edge_edge_mollifier", x, (eps,))]


def time_row(fn, name: str, x: np.ndarray, extra: tuple, order: int, repeat: int) -> tuple[float, float, float]:
    """Per-configuration times in us: rigidiff per call, rigidiff batched, ipctk per call."""
    peer = getattr(ipctk, name + ORDERS[order])
    a, b = [np.ascontiguousarray(c) for c in x[0]], [np.ascontiguousarray(c) for c in x[1]]
    one, peer_one = paired_times((lambda *c: fn(*c, *extra, derivatives=order), a, b),
                                 (lambda *c: peer(*c, *extra), a, b), repeat)
    points = [np.ascontiguousarray(c) for c in x.transpose(1, 0, 2)]
    batch, _ = paired_times((lambda *c: fn(*c, *extra, derivatives=order), points, points),
                            (lambda *c: peer(*c, *extra), a, b), repeat, n_ours=4)
    return one, batch / len(x), peer_one


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="configurations per batch")
    parser.add_argument("--repeat", type=int, default=7, help="timing rounds (lower quartile kept)")
    args = parser.parse_args(argv)
    print(f"ipctk {ipctk.__version__ if hasattr(ipctk, '__version__') else ''}, rigidiff {rd.__version__}, "
          f"n = {args.n}; times in us per configuration, ratios rigidiff / ipctk")
    print(f"{'primitive':16s} {'derivatives':>11s} {'ipctk':>8s} {'call':>8s} {'batch':>8s} {'call/ipctk':>11s} "
          f"{'batch/ipctk':>12s}")
    for label, fn, name, x, extra in rows(args.n):
        for order in ORDERS:
            one, batch, peer = time_row(fn, name, x, extra, order, args.repeat)
            print(f"{label:16s} {order:>11d} {peer:8.2f} {one:8.2f} {batch:8.3f} {one / peer:11.2f} "
                  f"{batch / peer:12.3f}")


if __name__ == "__main__":
    main()

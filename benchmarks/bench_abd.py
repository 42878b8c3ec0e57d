"""Affine bodies on the barrier solver (World(solver="barrier")): a pile of 100 cubes falling into a box.

The scene: 100 cubes of 0.1 m (density 500, friction 0.5) in a 5 x 5 x 4 grid, each turned by a small random
rotation, dropped into a box (the ground and four walls, all static planes) at dt = 1e-2 with dhat = 1e-3.
Printed:

1. the per-step time of the run and its split, from the step's own clocks (`world.last_step["times"]`):
   broad phase (candidates), barrier and friction energy, gradient and Hessian, assembly of the sparse
   matrix, its LDL^T factorisation and solve, CCD; the Newton iterations, and the same split per Newton
   iteration; the smallest surface distance and the largest ||A A^T - I||_F over the run;
2. IPC Toolkit (ipctk, one thread) on the same surfaces (the cubes, and the planes as large quads): its
   collision set build and PSD-projected barrier Hessian on the pile at the end of the run, and its additive
   CCD on the busiest impact's move (doubled, so that the CCD bites) next to ours on the same move;
3. additive CCD on a perfectly aligned stack of 10 cubes closing their gaps (IPC Toolkit's Tight-Inclusion
   CCD stalls on such stacks, so it is not run): the step size and the time, ours and ipctk's;
4. rigidiff's own LCP world (rigid bodies, boxes as walls) on the same 100 cubes, same poses, dt and
   friction: the price of intersection-free contact;
5. 100 non-convex bodies (50 rings, 50 L-shaped prisms; tests/abd/nonconvex_drop.py) dropped in four layers
   into a box of static walls: ms per step and Newton iterations.

    python benchmarks/bench_abd.py                  # 2 s of simulated time (0.5 s of the non-convex drop)
    python benchmarks/bench_abd.py --seconds 10     # the whole settle
    python benchmarks/bench_abd.py --nonconvex-only --nonconvex-seconds 1
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

import rigidiff as rd

try:
    import ipctk
except ImportError:
    raise SystemExit("ipctk is not installed: pip install ipctk") from None

DT, DHAT, FRICTION, SIZE, DENSITY = 1e-2, 1e-3, 0.5, 0.1, 500.0
SIDE, LAYERS = 5, 4
WALL = 0.45  # the box's walls at x, y = +-WALL


def grid_poses(seed: int = 1) -> list[tuple[np.ndarray, np.ndarray]]:
    """(position, rotation matrix) of each cube of the grid: 1.6 sizes apart in x and y, 1.8 in z."""
    rng = np.random.default_rng(seed)
    poses = []
    for layer in range(LAYERS):
        for i in range(SIDE):
            for j in range(SIDE):
                R = Rotation.from_rotvec(rng.normal(scale=0.2, size=3)).as_matrix()
                centre = (SIDE - 1) / 2
                pos = np.array([(i - centre) * 1.6 * SIZE, (j - centre) * 1.6 * SIZE, 0.1 + layer * 1.8 * SIZE])
                poses.append((pos, R))
    return poses


PLANES = [((0.0, 0.0, 1.0), 0.0)] + [(tuple(s * np.eye(3)[k]), -WALL) for k in (0, 1) for s in (1.0, -1.0)]


def barrier_pile() -> rd.barrier_world.BarrierWorld:
    world = rd.World(dt=DT, solver="barrier", dhat=DHAT, friction=FRICTION)
    for normal, height in PLANES:
        world.add_ground(height=height, normal=normal)
    for k, (pos, R) in enumerate(grid_poses()):
        world.add_affine_body(rd.Box((SIZE,) * 3), density=DENSITY, pose=rd.Transform(pos, R), name=f"cube{k}")
    return world


def lcp_pile() -> tuple[rd.World, np.ndarray]:
    world = rd.World(dt=DT)
    ground = world.add_ground(friction=FRICTION)
    height = LAYERS * 2 * SIZE
    for k, (half, centre) in enumerate([((0.01, WALL, height), (s * (WALL + 0.01), 0.0, height)) for s in (-1, 1)]
                                       + [((WALL, 0.01, height), (0.0, s * (WALL + 0.01), height)) for s in (-1, 1)]):
        wall = ground.add_body(f"wall{k}")
        wall.add_shape(rd.Box(tuple(2 * h for h in half)), origin=rd.Transform(translation=centre), friction=FRICTION)
    world.rebuild()
    box = rd.Box((SIZE,) * 3)
    q0 = []
    for k, (pos, R) in enumerate(grid_poses()):
        sk = rd.Skeleton(f"cube{k}")
        body = sk.add_body(f"cube{k}", joint=rd.FreeJoint(f"cube{k}_free"),
                           inertia=rd.Inertia.from_shape(box, mass=DENSITY * SIZE ** 3))
        body.add_shape(box, friction=FRICTION)
        world.add_skeleton(sk)
        q0 += [*pos, *Rotation.from_matrix(R).as_quat()]  # xyz, quaternion xyzw
    return world, np.array(q0)


def ipc_mesh(world, q, planes=PLANES) -> tuple:
    """(ipctk.CollisionMesh, vertices) of every body's surface at q and each (axis-aligned) plane as a quad
    covering the inside of the box, 1 cm short of the other planes so that the quads do not cross."""
    V, F = world.surfaces(q)
    verts, faces, offset = [V], [F], len(V)
    lo, hi = np.array([-WALL + 0.01, -WALL + 0.01, 0.01]), np.array([WALL - 0.01, WALL - 0.01, 1.0])
    for normal, height in planes:
        k = int(np.argmax(np.abs(normal)))
        u, w = [j for j in range(3) if j != k]
        corners = np.zeros((4, 3))
        corners[:, k] = height * normal[k]
        corners[:, u] = [lo[u], hi[u], hi[u], lo[u]]
        corners[:, w] = [lo[w], lo[w], hi[w], hi[w]]
        verts.append(corners)
        faces.append(np.array([[0, 1, 2], [0, 2, 3]]) + offset)
        offset += 4
    V, F = np.vstack(verts), np.vstack(faces)
    return ipctk.CollisionMesh(V, ipctk.edges(F), F), V


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    """(median seconds of fn(), its last result)."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def orthogonality(world, q) -> float:
    worst = 0.0
    for name in world.body_names:
        A, _ = world.affine_map(q, name)
        worst = max(worst, float(np.linalg.norm(A @ A.T - np.eye(3))))
    return worst


def run_pile(world, steps: int) -> dict:
    q, v = world.q, world.v
    parts = ("candidates", "barrier", "assembly", "factorisation", "ccd", "total")
    sums = dict.fromkeys(parts, 0.0)
    walls, iterations, symbolic, min_d, ortho = [], [], 0, np.inf, 0.0
    busiest = (-1, None, None)
    for _ in range(steps):
        t0 = time.perf_counter()
        q1, v1 = world.step(q, v)
        walls.append(time.perf_counter() - t0)
        s = world.last_step
        for p in parts:  # (a build without the step's clocks reports its wall time as the total)
            sums[p] += s["times"][p] if "times" in s else (walls[-1] if p == "total" else 0.0)
        iterations.append(s["newton_iterations"])
        symbolic += s.get("symbolic_factorisations", 0)
        min_d = min(min_d, s["min_distance"])
        ortho = max(ortho, orthogonality(world, q1))
        if s["newton_iterations"] > busiest[0]:
            busiest = (s["newton_iterations"], q.copy(), q1 - q)
        q, v = q1, v1
    return {"q": q, "walls": np.array(walls), "sums": sums, "iterations": np.array(iterations), "symbolic": symbolic,
            "min_distance": min_d, "orthogonality": ortho, "busiest": busiest}


def aligned_stack(n: int = 10, gap: float = 0.5 * DHAT):
    """n aligned cubes stacked gap apart on the ground, and the move that closes 1.5 gaps between neighbours."""
    world = rd.World(dt=DT, solver="barrier", dhat=DHAT)
    world.add_ground()
    for i in range(n):
        world.add_affine_body(rd.Box((SIZE,) * 3), density=DENSITY,
                              pose=rd.Transform((0.0, 0.0, SIZE / 2 + gap + i * (SIZE + gap))), name=f"cube{i}")
    dq = np.zeros(world.nq)
    for i in range(n):
        dq[12 * i + 2] = -1.5 * gap * (i + 1)
    return world, world.q, dq


def nonconvex_drop(seconds: float) -> None:
    """Part 5: the drop of tests/abd/nonconvex_drop.py (5 x 5 bodies in each of 4 layers), timed per step."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "abd"))
    from nonconvex_drop import drop_scene

    world = drop_scene(side=5, layers=4)
    steps = int(round(seconds / world.dt))
    q, v = world.q, world.v
    walls, iterations, min_d = [], [], np.inf
    for _ in range(steps):
        t0 = time.perf_counter()
        q, v = world.step(q, v)
        walls.append(time.perf_counter() - t0)
        iterations.append(world.last_step["newton_iterations"])
        min_d = min(min_d, world.last_step["min_distance"])
    walls, iterations = np.array(walls), np.array(iterations)
    faces = sum(len(world.surface(q, name)[1]) for name in world.body_names)
    print(f"\n5. 100 rings and L-shapes ({faces} faces with the walls') dropped into a box of static walls, {steps} "
          f"steps of dt = {world.dt} (friction {world.friction})")
    print(f"   per step: mean {1e3 * walls.mean():.0f} ms, median {1e3 * np.median(walls):.0f} ms, max "
          f"{1e3 * walls.max():.0f} ms; Newton iterations per step: mean {iterations.mean():.1f}, max "
          f"{iterations.max()}; smallest surface distance {min_d:.3g} m")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated time of the pile")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the single-query timings (median)")
    parser.add_argument("--pile-only", action="store_true", help="only part 1 (e.g. to time an older build)")
    parser.add_argument("--nonconvex-seconds", type=float, default=0.5, help="simulated time of part 5")
    parser.add_argument("--nonconvex-only", action="store_true", help="only part 5")
    args = parser.parse_args(argv)
    ipctk.set_num_threads(1)
    steps = int(round(args.seconds / DT))
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print(f"rigidiff {rd.__version__}, ipctk {ipctk.__version__}; load average {' '.join(load)}")
    if args.nonconvex_only:
        nonconvex_drop(args.nonconvex_seconds)
        return

    world = barrier_pile()
    r = run_pile(world, steps)
    its = r["iterations"]
    n_it = max(int(its.sum()), 1)
    print(f"\n1. pile of {len(world.body_names)} cubes into a box, {steps} steps of dt = {DT} (dhat {DHAT}, "
          f"friction {FRICTION})")
    print(f"   per step: mean {1e3 * r['walls'].mean():.1f} ms, median {1e3 * np.median(r['walls']):.1f} ms, "
          f"max {1e3 * r['walls'].max():.0f} ms")
    fall = r["walls"][: int(round(1.5 / DT))]
    print(f"   first 1.5 s (the fall and the impacts): mean {1e3 * fall.mean():.1f} ms per step; last 50 steps (at "
          f"rest) mean {1e3 * r['walls'][-50:].mean():.1f} ms")
    print(f"   Newton iterations per step: mean {its.mean():.1f}, max {its.max()}; symbolic factorisations "
          f"{r['symbolic']} in {n_it} iterations")
    print(f"   {'part':14s} {'ms/step':>8s} {'ms/iteration':>13s}")
    for part, total in r["sums"].items():
        print(f"   {part:14s} {1e3 * total / steps:8.2f} {1e3 * total / n_it:13.3f}")
    contact = sum(r["sums"][p] for p in ("candidates", "barrier", "ccd"))
    print(f"   contact part (candidates + barrier + CCD): {1e3 * contact / n_it:.2f} ms per Newton iteration")
    print(f"   smallest surface distance {r['min_distance']:.3g} m, largest ||A A^T - I||_F {r['orthogonality']:.2g}")

    if args.pile_only:
        return
    q = r["q"]
    mesh, V = ipc_mesh(world, q)
    collisions = ipctk.NormalCollisions()
    t_build, _ = timed(lambda: collisions.build(mesh, V, DHAT), args.repeat)
    potential = ipctk.BarrierPotential(DHAT, 1.0)
    try:
        t_hess, _ = timed(lambda: potential.hessian(collisions, mesh, V, ipctk.PSDProjectionMethod.CLAMP), args.repeat)
        projection = "clamped to PSD"
    except RuntimeError:  # its eigen-solver gives up on some of the pile's blocks: time the absolute values
        t_hess, _ = timed(lambda: potential.hessian(collisions, mesh, V, ipctk.PSDProjectionMethod.ABS), args.repeat)
        projection = "PSD by absolute eigenvalues (clamping raised)"
    print(f"\n2. the pile at the end, {len(collisions)} ipctk collisions within dhat, "
          f"{world.last_step['active_pairs']} of ours")
    print(f"   ipctk collision set build {1e3 * t_build:.2f} ms, barrier Hessian ({projection}) "
          f"{1e3 * t_hess:.2f} ms")
    print(f"   ours per Newton iteration: candidates {1e3 * r['sums']['candidates'] / n_it:.2f} ms, barrier and "
          f"friction energy, gradient and Hessian {1e3 * r['sums']['barrier'] / n_it:.2f} ms")
    _, q0, dq = r["busiest"]
    move = 2.0 * dq
    V0 = ipc_mesh(world, q0)[1]
    V1 = ipc_mesh(world, q0 + move)[1]
    accd = ipctk.AdditiveCCD(conservative_rescaling=0.9)
    t_ipc, a_ipc = timed(lambda: ipctk.compute_collision_free_stepsize(mesh, V0, V1, 0.0, None, accd), args.repeat)
    t_rd, a_rd = timed(lambda: world._bw_collision_free_step(q0, move), args.repeat)
    print(f"   CCD of the busiest impact's move (doubled): ipctk additive {1e3 * t_ipc:.2f} ms (step {a_ipc:.3f}), "
          f"ours {1e3 * t_rd:.2f} ms (step {a_rd:.3f})")

    stack, qs, dqs = aligned_stack()
    smesh, S0 = ipc_mesh(stack, qs, [((0.0, 0.0, 1.0), 0.0)])
    S1 = ipc_mesh(stack, qs + dqs, [((0.0, 0.0, 1.0), 0.0)])[1]
    t_ipc, a_ipc = timed(lambda: ipctk.compute_collision_free_stepsize(smesh, S0, S1, 0.0, None, accd), args.repeat)
    t_rd, a_rd = timed(lambda: stack._bw_collision_free_step(qs, dqs), args.repeat)
    print(f"\n3. aligned stack of 10 cubes closing 1.5 gaps: ipctk additive {1e3 * t_ipc:.2f} ms (step {a_ipc:.3f}), "
          f"ours {1e3 * t_rd:.2f} ms (step {a_rd:.3f})")

    lcp, lq = lcp_pile()
    lv, tau = np.zeros(lcp.nv), np.zeros(lcp.nv)
    with warnings.catch_warnings(record=True) as caught:  # at dt = 1e-2 the LCP world's contacts go deep
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        for _ in range(steps):
            lq, lv = lcp.step(lq, lv, tau)
        t_lcp = (time.perf_counter() - t0) / steps
    print(f"\n4. rigidiff's LCP world on the same 100 cubes ({steps} steps, dt {DT}): {1e3 * t_lcp:.2f} ms per step; "
          f"the barrier world costs {r['walls'].mean() / t_lcp:.1f}x as much")
    for w in caught:
        print(f"   LCP world: {str(w.message).split(':')[0]}")
    nonconvex_drop(args.nonconvex_seconds)


if __name__ == "__main__":
    main()

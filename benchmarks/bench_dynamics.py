"""Per-call time of rigidiff's dynamics through Python, next to Pinocchio and MuJoCo in the same run.

    python benchmarks/bench_dynamics.py [--robots panda solo12 talos] [--quick]

Prints a table of medians (us) and the ratios rigidiff / peer (< 1: rigidiff is faster). Peers:
Pinocchio (rnea, aba, crba, aba + integrate as a step) and MuJoCo (mj_step with the Euler integrator,
meshes stripped, constraints and contacts disabled). Also compares a 1000-step rollout against 1000
single world.step calls, the RK4 and implicit steps (World(integrator="rk4" / "implicit")) and their
step_jacobians against the default semi-implicit ones, and the step (and on a free body its step_jacobians)
with the default implicit gyroscopic term against World(gyroscopic="explicit"), on each robot and on a free body (row "free": a box
spinning without gravity, the case the option changes). States alternate between two values so that no library can skip work.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from _common import ROBOTS, load_world, median_time, mujoco_model, random_states, robots_dir


def bench_robot(name: str, quick: bool) -> dict:
    rel, floating = ROBOTS[name]
    root = robots_dir()
    path = root / rel
    repeat = 15 if quick else 41
    world = load_world(path, floating, root)
    (qa, va, ta), (qb, vb, tb) = random_states(world)
    res = {"nv": world.nv}
    res["rd rnea"] = median_time(world.inverse_dynamics, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd aba"] = median_time(world.forward_dynamics, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd crba"] = median_time(world.mass_matrix, (qa,), (qb,), repeat)
    res["rd step"] = median_time(world.step, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd dRNEA"] = median_time(world.inverse_dynamics_derivatives, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd dABA"] = median_time(world.forward_dynamics_derivatives, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd step_jac"] = median_time(world.step_jacobians, (qa, va, ta), (qb, vb, tb), repeat)
    rk4 = world._copy()
    rk4.integrator = "rk4"
    res["rd rk4 step"] = median_time(rk4.step, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd rk4 step_jac"] = median_time(rk4.step_jacobians, (qa, va, ta), (qb, vb, tb), repeat)
    implicit = world._copy()
    implicit.integrator = "implicit"
    res["rd implicit step"] = median_time(implicit.step, (qa, va, ta), (qb, vb, tb), repeat)
    res["rd implicit step_jac"] = median_time(implicit.step_jacobians, (qa, va, ta), (qb, vb, tb), repeat)
    explicit = world._copy()
    explicit.gyroscopic = "explicit"
    res["rd explicit step"] = median_time(explicit.step, (qa, va, ta), (qb, vb, tb), repeat)
    # rollout of 1000 steps (small torques) against 1000 single calls
    taus = np.zeros((1000, world.nv))
    t0 = time.perf_counter()
    for _ in range(3 if quick else 10):
        world.rollout(qa, va, taus)
    res["rd rollout/step"] = 1e6 * (time.perf_counter() - t0) / (1000 * (3 if quick else 10))

    def loop():
        q, v = qa, va
        for k in range(1000):
            q, v = world.step(q, v, taus[k])

    t0 = time.perf_counter()
    for _ in range(3 if quick else 10):
        loop()
    res["rd loop/step"] = 1e6 * (time.perf_counter() - t0) / (1000 * (3 if quick else 10))

    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    if pin is not None:
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(
            str(path))
        pdata = pm.createData()
        if pm.nq == world.nq:
            res["pin rnea"] = median_time(lambda q, v, a: pin.rnea(pm, pdata, q, v, a), (qa, va, ta), (qb, vb, tb),
                                          repeat)
            res["pin aba"] = median_time(lambda q, v, t: pin.aba(pm, pdata, q, v, t), (qa, va, ta), (qb, vb, tb),
                                         repeat)
            res["pin crba"] = median_time(lambda q: pin.crba(pm, pdata, q), (qa,), (qb,), repeat)
            res["pin dRNEA"] = median_time(lambda q, v, a: pin.computeRNEADerivatives(pm, pdata, q, v, a),
                                           (qa, va, ta), (qb, vb, tb), repeat)
            res["pin dABA"] = median_time(lambda q, v, t: pin.computeABADerivatives(pm, pdata, q, v, t),
                                          (qa, va, ta), (qb, vb, tb), repeat)

            def pin_step(q, v, t):
                v2 = v + 1e-3 * pin.aba(pm, pdata, q, v, t)
                return pin.integrate(pm, q, 1e-3 * v2), v2

            res["pin aba+integrate"] = median_time(pin_step, (qa, va, ta), (qb, vb, tb), repeat)
    try:
        import mujoco
    except ImportError:
        mujoco = None
    if mujoco is not None:
        mm = mujoco_model(path, floating)
        md = mujoco.MjData(mm)
        # the state evolves from step to step, so no call repeats the previous one; reset between batches
        step = mujoco.mj_step

        def mj_batch():
            mujoco.mj_resetData(mm, md)
            for _ in range(200):
                step(mm, md)

        samples = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            mj_batch()
            samples.append((time.perf_counter() - t0) / 200)
        res["mj_step"] = 1e6 * float(np.percentile(samples, 25))
    return res


def bench_free_body(quick: bool) -> dict:
    """The step and step_jacobians of a spinning box on a free joint, with the implicit (default) and the
    explicit gyroscopic term."""
    import rigidiff as rd

    repeat = 15 if quick else 41
    rng = np.random.default_rng(0)
    res = {"nv": 6}
    for mode, tag in (("implicit", "rd"), ("explicit", "rd explicit")):
        world = rd.World(dt=1e-3, gravity=(0.0, 0.0, 0.0), gyroscopic=mode)
        sk = rd.Skeleton("box")
        sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box((0.3, 0.2, 0.1)), mass=1.0))
        world.add_skeleton(sk)
        states = [(world.random_configuration(rng), rng.normal(size=6) * 5.0, np.zeros(6)) for _ in range(2)]
        res[f"{tag} step"] = median_time(world.step, *states, repeat)
        res[f"{tag} step_jac"] = median_time(world.step_jacobians, *states, repeat)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["panda", "solo12", "talos"], choices=sorted(ROBOTS))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args(argv)
    pairs = [("rd rnea", "pin rnea"), ("rd aba", "pin aba"), ("rd crba", "pin crba"), ("rd dRNEA", "pin dRNEA"),
             ("rd dABA", "pin dABA"),
             ("rd step", "pin aba+integrate"), ("rd step", "mj_step"), ("rd rollout/step", "rd loop/step"),
             ("rd rk4 step", "rd step"), ("rd rk4 step_jac", "rd step_jac"), ("rd implicit step", "rd step"),
             ("rd implicit step_jac", "rd step_jac"), ("rd step", "rd explicit step"),
             ("rd step_jac", "rd explicit step_jac")]
    print(f"{'robot':<8} {'nv':>3}  {'rigidiff':<20} {'us':>7}   {'peer':<18} {'us':>7}   ratio")
    for name in [*args.robots, "free"]:
        res = bench_free_body(args.quick) if name == "free" else bench_robot(name, args.quick)
        for a, b in pairs:
            if a in res and b in res:
                print(f"{name:<8} {res['nv']:>3}  {a:<20} {res[a]:7.2f}   {b:<18} {res[b]:7.2f}   "
                      f"{res[a] / res[b]:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

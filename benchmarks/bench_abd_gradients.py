"""Gradients of barrier-world rollouts (affine bodies, World(solver="barrier")): the reverse pass of a recorded
rollout (``world.rollout(q0, v0, taus, record=True).backward(...)``) against the forward rollout's time.

Scenes:

1. three 0.2 m cubes with friction 0.3 (one sliding into a second that carries the third), dt = 1e-2,
   dhat = 5e-3, at Newton tolerances 1e-2 (the default) and 1e-10, 50 and 100 steps;
2. the pile of bench_abd.py: 100 cubes of 0.1 m (friction 0.5) falling into a box, 100 steps (1 s: the fall
   and the impacts), default tolerance;
3. a two-link arm (revolute joints about z, PD torque on the shoulder) pushing a 0.1 m cube across the ground
   with friction 0.3, dhat = 1e-3: a 50-step rollout and its reverse pass, and at the state where the arm
   presses on the cube, one step, its step_jacobians and the central differences of the step (6 nv steps) that
   they replace, with the largest difference between the two relative to the Jacobians' largest entry.

Printed per scene: the forward rollout (recorded) and its reverse pass with respect to the initial state, every
step's forces and every parameter (each body's density and stiffness, friction, dhat), in ms, and their
ratio (median of --repeat runs; the pile once).

    python benchmarks/bench_abd_gradients.py
    python benchmarks/bench_abd_gradients.py --skip-pile
    python benchmarks/bench_abd_gradients.py --only-arm
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import rigidiff as rd

BOX = rd.Box((0.2, 0.2, 0.2))


def three_cubes(tolerance: float):
    world = rd.World(dt=1e-2, solver="barrier", dhat=5e-3, friction=0.3, newton_tolerance=tolerance,
                     max_newton_iterations=500)
    world.add_ground()
    world.add_affine_body(BOX, density=400.0, pose=rd.Transform((0.0, 0.0, 0.103), rpy=(0.0, 0.0, 0.05)),
                          velocity=(1.6, 0.1, 0.0, 0.0, 0.0, 0.3), name="a")
    world.add_affine_body(BOX, density=500.0, pose=rd.Transform((0.3, 0.02, 0.103)), name="b")
    world.add_affine_body(BOX, density=600.0, pose=rd.Transform((0.32, 0.0, 0.306), rpy=(0.0, 0.0, 0.2)),
                          velocity=(0.0, 0.05, 0.0), name="c")
    return world


def forward_and_backward(world, steps: int, taus=None) -> tuple[float, float]:
    """Seconds of the recorded rollout (under taus, zero if None) and of its reverse pass (loss: the sum of the
    final coordinates)."""
    taus = np.zeros((steps, world.nv)) if taus is None else taus
    t0 = time.perf_counter()
    traj = world.rollout(world.q, world.v, taus, record=True)
    t1 = time.perf_counter()
    dL_dQ = np.zeros_like(traj.q)
    dL_dQ[-1] = 1.0
    traj.backward(dL_dQ, None, wrt="all")
    return t1 - t0, time.perf_counter() - t1


def arm_and_cube(tolerance: float):
    """A planar two-link arm (0.18 x 0.04 x 0.04 m links turning about z, 5 cm above the ground) beside a cube."""
    arm = rd.Skeleton("arm")
    link = rd.Box((0.18, 0.04, 0.04))
    inertia = rd.Inertia.from_shape(link, density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
    parent = None
    for name, origin, stiffness in (("shoulder", (0.0, 0.0, 0.05), 0.0), ("elbow", (0.2, 0.0, 0.0), 1.0)):
        parent = arm.add_body(f"{name}_link", rd.RevoluteJoint(name, axis=(0, 0, 1), damping=0.05, stiffness=stiffness),
                              parent=parent, joint_origin=rd.Transform(origin), inertia=inertia)
        parent.add_shape(link, rd.Transform((0.1, 0.0, 0.0)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=1e-3, friction=0.3, newton_tolerance=tolerance,
                     max_newton_iterations=2000)
    world.add_ground()
    world.add_skeleton(arm)
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=200.0, pose=rd.Transform((0.32, 0.12, 0.0505)),
                          name="cube")
    return world


def arm_torques(steps: int, nv: int) -> np.ndarray:
    taus = np.zeros((steps, nv))
    taus[:, 0] = np.linspace(2.0, 0.5, steps)  # the shoulder sweeps the arm into the cube
    taus[:, 1] = -0.3
    return taus


def arm_step_report(tolerance: float, repeat: int) -> None:
    """One step of the arm pressing on the cube: its time, step_jacobians' and central differences'."""
    world = arm_and_cube(tolerance)
    Q, V = world.rollout(world.q, world.v, arm_torques(14, world.nv))
    q, v, tau = Q[-1], V[-1], np.r_[0.7, -0.2, np.zeros(12)]

    def timed(f):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            out = f()
            times.append(time.perf_counter() - t0)
        return float(np.median(times)), out

    t_step, _ = timed(lambda: world.step(q, v, tau))
    iterations = world.last_step["newton_iterations"]
    t_jac, J = timed(lambda: world.step_jacobians(q, v, tau))

    def central():
        eps, n = (1e-8, 1e-6, 1e-5), world.nv
        out = np.zeros((2, n, 3 * n))
        for which in range(3):
            for j in range(n):
                args_p, args_m = [q.copy(), v.copy(), tau.copy()], [q.copy(), v.copy(), tau.copy()]
                args_p[which][j] += eps[which]
                args_m[which][j] -= eps[which]
                (qp, vp), (qm, vm) = world.step(*args_p), world.step(*args_m)
                out[0, :, which * n + j] = (qp - qm) / (2 * eps[which])
                out[1, :, which * n + j] = (vp - vm) / (2 * eps[which])
        return out

    t_fd, fd = timed(central)
    analytic = np.stack([np.hstack([J.dq_dq, J.dq_dv, J.dq_dtau]), np.hstack([J.dv_dq, J.dv_dv, J.dv_dtau])])
    err = max(np.abs(analytic[k] - fd[k]).max() / np.abs(analytic[k]).max() for k in range(2))
    print(f"arm pushing a cube (nv {world.nv}), tolerance {tolerance:g}: step {t_step * 1e3:.2f} ms ({iterations} "
          f"Newton iterations), step_jacobians {t_jac * 1e3:.2f} ms ({t_jac / t_step:.2f} steps), central "
          f"differences {t_fd * 1e3:.1f} ms ({t_fd / t_jac:.0f}x), largest relative difference {err:.1e}")


def report(label: str, runs: list) -> None:
    fwd, bwd = np.median([r[0] for r in runs]), np.median([r[1] for r in runs])
    print(f"{label:<44} forward {fwd * 1e3:8.1f} ms   backward {bwd * 1e3:8.1f} ms   ratio {bwd / fwd:5.2f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="runs of the three-cube rollouts (median)")
    parser.add_argument("--skip-pile", action="store_true", help="only the three cubes")
    parser.add_argument("--only-arm", action="store_true", help="only the arm pushing a cube")
    args = parser.parse_args(argv)
    for tolerance in (1e-2, 1e-12):
        arm_step_report(tolerance, args.repeat)
        runs = [forward_and_backward(arm_and_cube(tolerance), 50, arm_torques(50, 14)) for _ in range(args.repeat)]
        report(f"arm pushing a cube, 50 steps, tolerance {tolerance:g}", runs)
    if args.only_arm:
        return
    for tolerance in (1e-2, 1e-10):
        for steps in (50, 100):
            runs = [forward_and_backward(three_cubes(tolerance), steps) for _ in range(args.repeat)]
            report(f"3 cubes, {steps} steps, tolerance {tolerance:g}", runs)
    if not args.skip_pile:
        from bench_abd import barrier_pile

        report("100-cube pile, 100 steps, tolerance 1e-2", [forward_and_backward(barrier_pile(), 100)])


if __name__ == "__main__":
    main()

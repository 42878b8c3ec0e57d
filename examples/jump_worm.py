"""The jump worm: a four-segment worm lying on the ground learns to jump, by trajectory optimisation with
gradients through its contacts with the ground.

The worm moves in the x-z plane (z up): its first segment has a planar root (slides along x and z, turns
about y) and three hinges join the four segments. Each segment is a capsule 0.25 m long, 5 cm thick and
0.5 kg (2 kg in all). Only the hinges have motors, bounded by 2 N m, with a little viscous damping
(0.05 N m s/rad), and they bend at most 100 degrees either way (joint limits, solved as constraints).
The ground has friction 1; contacts are detected 2 cm ahead (``contact_options(margin=0.02)``), so that
a segment swinging down is stopped at the surface instead of sinking into it within one step of 10 ms.

The problem: T = 80 steps of 10 ms (0.8 s), and the cost

    -100 z_com(T) + 0.5e-3 sum |tau_t|^2

(``Problem.add_cost`` with its gradient, ``add_control_cost``), so the worm must throw its centre of mass
as high as it can by the end. Lying flat, it can only get off the ground by pushing on it: with no
external force but gravity and the ground's, only the contacts can raise the centre of mass.

The optimiser is projected Adam on the single-shooting gradient (``solve("adam")``): one rollout and one
reverse pass per iteration. The objective is piecewise smooth (every change of contact mode, a segment
lifting off or landing, a friction row starting to slide, a hinge reaching its limit, is a kink), and
L-BFGS-B stops at the first kink that spoils its line search (here at 0.18 m); Adam walks on and
keeps the best point. Torques too small to lift any segment do nothing at all, and their gradient is
zero: a flat region. ``explore_contact_modes`` does not get out of it either: the mode it explores lets
the contacts go, and in flight the hinge torques cannot move the centre of mass. So the first guess has
to move the worm: 2, 2 and 1.8 N m on the three hinges for 0.3 s, then the opposite.

Before optimising, the script checks the gradient of the objective at that first guess against central
differences along a few random directions of the 240 torques, and verifies that the perturbed rollouts
keep the contact mode of every step (the gradient is that of the mode it holds fixed). After optimising
it re-simulates the optimised torques with ``world.rollout`` and reports from that rollout: the height of
the centre of mass at T, the worm's lowest point (above the ground: it is in the air), the apex of the
flight (the torques switched off after T), the deepest penetration, and the same torques at dt/2 (each
held for two steps) as a check that the jump is not an artefact of the time step.

Run ``python examples/jump_worm.py [--fast] [--out DIR]``; it writes ``jump_worm.png`` (height, torques,
cost per iteration), ``jump_worm_frames.png`` (the jump frame by frame) and, without --fast,
``jump_worm.gif`` to DIR. Fast mode runs 150 Adam iterations instead of 600.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
DT = 0.01
STEPS = 80  # 0.8 s
SEGMENTS = 4
LENGTH = 0.25  # m, hinge to hinge
RADIUS = 0.025  # m, the capsules' (the worm is 5 cm thick)
MASS = 0.5  # kg per segment
TORQUE_LIMIT = 2.0  # N m, every hinge
DAMPING = 0.05  # N m s / rad, every hinge
BEND_LIMIT = np.radians(100.0)
FRICTION = 1.0
MARGIN = 0.02  # m, contact detection distance
HEIGHT_WEIGHT = 100.0
CONTROL_WEIGHT = 1e-3
SWITCH = 0.3  # s, when the first guess reverses its torques
GUESS = (2.0, 2.0, 1.8)  # N m on the hinges, then the opposite; not symmetric (see first_guess)
LEARNING_RATE = 0.1  # N m, Adam's step
GRADIENT_EPS = 1e-4  # N m, along a unit direction of the 240 torques
HINGES = [f"hinge{i}" for i in range(1, SEGMENTS)]


def build_world(dt: float = DT) -> rd.World:
    """The worm and the ground. The capsule of a segment ends at its two hinges: its end spheres' centres
    sit a radius inside the segment, so two segments never touch the ground at the same point (two
    contacts at one point of a hinge's axis would be the same constraint twice)."""
    world = rd.World(dt=dt)
    worm = rd.Skeleton("worm")
    worm.add_body("slide_x", joint=rd.PrismaticJoint("root_x", axis=(1.0, 0.0, 0.0)))
    worm.add_body("slide_z", joint=rd.PrismaticJoint("root_z", axis=(0.0, 0.0, 1.0)), parent="slide_x")
    capsule = rd.Capsule(RADIUS, LENGTH - 2 * RADIUS)
    along_x = rd.Transform((0.5 * LENGTH, 0.0, 0.0), rpy=(0.0, 0.5 * np.pi, 0.0))  # the capsule's axis on x
    parent, joint, origin = "slide_z", rd.RevoluteJoint("root_pitch", axis=(0.0, 1.0, 0.0)), rd.Transform()
    for i in range(SEGMENTS):
        body = worm.add_body(f"segment{i}", joint=joint, parent=parent, joint_origin=origin,
                             inertia=rd.Inertia.from_shape(capsule, mass=MASS, origin=along_x))
        body.add_shape(capsule, origin=along_x, friction=FRICTION)
        parent, origin = body, rd.Transform((LENGTH, 0.0, 0.0))
        joint = rd.RevoluteJoint(f"hinge{i + 1}", axis=(0.0, 1.0, 0.0), lower=-BEND_LIMIT, upper=BEND_LIMIT,
                                 damping=DAMPING)
    world.add_skeleton(worm)
    world.add_ground(friction=FRICTION)
    # warm_start=False: every step is a pure function of (q, v, tau), so replays are identical
    world.contact_options(margin=MARGIN, joint_limits=True, warm_start=False)
    return world


def lying_flat(world: rd.World) -> np.ndarray:
    q0 = np.zeros(world.nq)
    q0[world.joint("root_z").q_index] = RADIUS
    return q0


def com_height(world: rd.World, Q) -> np.ndarray:
    return np.array([world.center_of_mass(q)[2] for q in Q])


def lowest_point(world: rd.World, q) -> float:
    """Height of the worm's lowest point (negative: below the ground)."""
    poses = world.body_poses(q)
    ends = np.array([[RADIUS, 0.0, 0.0, 1.0], [LENGTH - RADIUS, 0.0, 0.0, 1.0]])  # capsule axis ends
    return min(float((poses[world.body_index(f"segment{i}")] @ ends.T)[2].min()) for i in range(SEGMENTS)) - RADIUS


def height_cost(world: rd.World):
    """-HEIGHT_WEIGHT z_com(T) and its gradient (every joint is 1-dof: q's coordinates are the tangent's)."""
    def cost(Q, V, TAU):
        dQ = np.zeros_like(Q)
        dQ[-1] = -HEIGHT_WEIGHT * world.center_of_mass_jacobian(Q[-1])[2]
        return -HEIGHT_WEIGHT * world.center_of_mass(Q[-1])[2], dQ, None, None
    return cost


def first_guess(world: rd.World) -> np.ndarray:
    """GUESS on the hinges until SWITCH, then -GUESS. Equal torques on all three hinges would keep the worm
    mirror-symmetric, and a symmetric worm resting on two mirror-image contacts can share its weight
    between them in more than one way: the contact solve then has several solutions, one picked at
    round-off level, and the rollout is not differentiable there."""
    tau = np.zeros((STEPS, world.nv))
    hinges = [world.joint(h).v_index for h in HINGES]
    k = int(round(SWITCH / world.dt))
    tau[:k, hinges] = GUESS
    tau[k:, hinges] = -np.array(GUESS)
    return tau


def jump_problem(world: rd.World) -> rd.trajopt.Problem:
    prob = rd.trajopt.Problem(world, STEPS, lying_flat(world))
    prob.add_cost(height_cost(world))
    prob.add_control_cost(CONTROL_WEIGHT)
    prob.set_control_bounds(-TORQUE_LIMIT, TORQUE_LIMIT)
    prob.set_actuated(HINGES)
    prob.set_initial_guess(first_guess(world))
    return prob


def objective(prob: rd.trajopt.Problem, tau, gradient: bool = False):
    """The problem's cost of the torques (T, nv) by one rollout; with ``gradient``, also its gradient with
    respect to the torques by the reverse pass (what the shooting methods compute)."""
    world = prob.world
    if not gradient:
        Q, V = world.rollout(prob.q0, prob.v0, tau)
        return prob.costs(Q, V, tau, derivatives=False).value
    traj = world.rollout(prob.q0, prob.v0, tau, record=True)
    acc = prob.costs(traj.q, traj.v, tau)
    g = traj.backward(dL_dQ=acc.gq, dL_dV=acc.gv)
    return acc.value, (g.tau + acc.gtau) @ prob.S @ prob.S.T


def contact_modes(world: rd.World, q0, v0, taus) -> list:
    """The kind and class of every constraint row (contacts and joint limits), step by step: the contact
    mode that the gradient holds fixed."""
    q, v, modes = q0, v0, []
    for tau in taus:
        q, v = world.step(q, v, tau)
        c = world.last_contacts()
        modes.append((tuple(c.row_kinds), tuple(c.row_classes)))
    return modes


def gradient_check(prob: rd.trajopt.Problem, tau, n_directions: int = 3, seed: int = 0):
    """Directional derivatives of the objective along random unit directions of the actuated torques:
    the reverse pass against central differences; rows (analytic, finite difference, mode kept)."""
    world = prob.world
    _, grad = objective(prob, tau, gradient=True)
    modes = contact_modes(world, prob.q0, prob.v0, tau)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_directions):
        d = np.zeros_like(tau)
        d[:, prob.actuated] = rng.standard_normal((len(tau), prob.nu))
        d /= np.linalg.norm(d)
        values, kept = [], True
        for sign in (1.0, -1.0):
            t = tau + sign * GRADIENT_EPS * d
            values.append(objective(prob, t))
            kept &= contact_modes(world, prob.q0, prob.v0, t) == modes
        rows.append((float(np.sum(grad * d)), (values[0] - values[1]) / (2 * GRADIENT_EPS), kept))
    return rows


def verify(world: rd.World, q0, tau, after: float = 0.5) -> dict:
    """Re-simulate ``tau`` with world.rollout, then ``after`` seconds more with the torques off."""
    extra = int(round(after / world.dt))
    taus = np.vstack([tau, np.zeros((extra, world.nv))])
    Q, _ = world.rollout(q0, np.zeros(world.nv), taus)
    z = com_height(world, Q)
    lows = np.array([lowest_point(world, q) for q in Q])
    T = len(tau)
    apex = T + int(np.argmax(z[T:]))
    return {"Q": Q, "com": z, "z_T": z[T], "low_T": lows[T], "apex": z[apex], "t_apex": apex * world.dt,
            "penetration": max(0.0, -lows.min())}


def plot(out: Path, world, guess: dict, best: dict, res, tau_guess) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(1, 3, figsize=(15, 4), constrained_layout=True)
    for name, run in (("first guess", guess), ("optimised", best)):
        t = np.arange(len(run["com"])) * world.dt
        ax[0].plot(t, run["com"], label=f"{name}: centre of mass")
    low = np.array([lowest_point(world, q) for q in best["Q"]])
    ax[0].plot(np.arange(len(low)) * world.dt, low, "--", label="optimised: lowest point")
    ax[0].axvline(STEPS * world.dt, color="gray", lw=0.8)
    ax[0].set(title="height (torques off after the grey line)", xlabel="time (s)", ylabel="m")
    ax[0].legend()
    t = np.arange(STEPS) * world.dt
    for name in HINGES:
        j = world.joint(name).v_index
        ax[1].step(t, res.tau[:, j], where="post", label=name)
    ax[1].step(t, tau_guess[:, world.joint(HINGES[0]).v_index], "k:", where="post", label="first guess")
    ax[1].set(title="optimised hinge torques", xlabel="time (s)", ylabel="N m")
    ax[1].legend()
    history = np.array(res.cost_history)
    ax[2].plot(history, lw=0.8, label="cost")
    ax[2].plot(np.minimum.accumulate(history), label="best so far")
    ax[2].set(title="Adam: cost per iteration", xlabel="iteration", ylabel="cost")
    ax[2].legend()
    paths = [out / "jump_worm.png"]
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)
    camera = rd.viz.Camera(elevation=5, azimuth=-90)
    stop = STEPS + int(round(0.3 / world.dt))  # the jump and the start of the fall
    paths.append(rd.viz.frame_strip(world, best["Q"][:stop + 1], out / "jump_worm_frames.png", n_frames=8,
                                    camera=camera))
    return paths


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    iterations = 150 if fast else 600
    world = build_world()
    prob = jump_problem(world)
    q0 = prob.q0
    rest = com_height(world, [q0])[0]
    tau_guess = first_guess(world)
    guess = verify(world, q0, tau_guess)
    print(f"worm: {SEGMENTS} capsules of {LENGTH:g} m and {MASS:g} kg, {len(HINGES)} hinges (|tau| <= "
          f"{TORQUE_LIMIT:g} N m); {STEPS} steps of {DT * 1e3:g} ms")
    print(f"resting centre of mass height: {rest:.4f} m")
    torques = ", ".join(f"{x:g}" for x in GUESS)
    print(f"first guess ({torques} N m on the hinges, reversed at {SWITCH:g} s): centre of mass at T = "
          f"{guess['z_T']:.4f} m")

    t0 = time.perf_counter()
    rows = gradient_check(prob, tau_guess)
    t_check = time.perf_counter() - t0
    print(f"{'direction':>9} {'reverse pass':>15} {'central FD':>15} {'rel. error':>10}  mode kept")
    worst = 0.0
    for k, (ana, fd, kept) in enumerate(rows):
        rel = abs(ana - fd) / max(abs(fd), 1e-12)
        worst = max(worst, rel)
        print(f"{k:>9} {ana:>+15.8e} {fd:>+15.8e} {rel:>10.1e}  {'yes' if kept else 'NO'}")
    modes = "every contact mode kept" if all(r[2] for r in rows) else "SOME CONTACT MODES CHANGED"
    print(f"gradient at the first guess vs central differences (eps = {GRADIENT_EPS:g}, {len(rows)} random "
          f"directions): max relative error {worst:.1e}; {modes} ({t_check:.2f} s)")

    t0 = time.perf_counter()
    res = prob.solve("adam", max_iters=iterations, verbose=False, learning_rate=LEARNING_RATE)
    elapsed = time.perf_counter() - t0
    print(f"adam: {res.iterations} iterations in {elapsed:.2f} s; cost {res.cost_history[0]:.4f} -> {res.cost:.4f}")

    best = verify(world, q0, res.tau)
    print(f"re-simulated with world.rollout: centre of mass at T = {best['z_T']:.4f} m, "
          f"{best['z_T'] / guess['z_T']:.2f} x the first guess (+{best['z_T'] - guess['z_T']:.4f} m), "
          f"{best['z_T'] - rest:.4f} m above rest")
    print(f"lowest point of the worm at T: {best['low_T']:.4f} m above the ground")
    print(f"apex of the flight (torques off after T): centre of mass at {best['apex']:.4f} m, t = "
          f"{best['t_apex']:.2f} s")
    print(f"deepest penetration into the ground: {best['penetration'] * 1e3:.2f} mm")
    half = build_world(DT / 2)
    Q_half, _ = half.rollout(q0, np.zeros(half.nv), np.repeat(res.tau, 2, axis=0))
    print(f"the same torques at dt/2: centre of mass at T = {com_height(half, Q_half[-1:])[0]:.4f} m")

    pngs = plot(Path(out), world, guess, best, res, tau_guess)
    if pngs and not fast:
        pngs.append(rd.viz.render_trajectory(world, best["Q"][:STEPS + 31], Path(out) / "jump_worm.gif", fps=25,
                                             stride=4, camera=rd.viz.Camera(elevation=5, azimuth=-90)))
    for p in pngs:
        print(f"wrote {p}")
    return {"result": res, "guess": guess, "best": best, "rows": rows}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="150 Adam iterations (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the pictures (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)

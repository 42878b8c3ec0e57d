"""A catapult throws a box onto a target: trajectory optimisation of the arm's torques, through the
contacts between the box and the cup that holds it.

The catapult stands in the x-z plane (z up): a post 1.1 m high welded to the ground, and on top of it an
arm of three links joined by hinges about y, each with a motor (shoulder, elbow and wrist: at most 30,
15 and 8 N m; the elbow and the wrist bend at most 1.6 rad either way, solved as joint limits). The last
link is a cup: a plate with a wall at each end. A 6 cm cube of 0.2 kg (a free body: 6 dofs and no motor)
rests in the cup, against its outer wall, and the arm points straight back (along -x).

The target is a point on the ground 2 m in front of the post. The problem: T = 240 steps of 5 ms
(1.2 s), the box's position at T on the target (``add_body_target("box", position, time=-1)``), a small
price on the torques' departure from those that would hold the loaded arm still, and the torque bounds.
Nothing says when the box should leave the cup: it flies off when the arm slows down, so the optimiser
chooses the release through the torques. Gradients cross every contact of the box: in the cup (pressed
against the plate and the outer wall, or sliding), in the air, and on the ground once it lands; each
with the contact mode of its step held fixed (docs/contact.md).

The first guess is a throw by hand: the shoulder turns by 90 degrees in 0.6 s (a minimum-jerk profile)
with the elbow and the wrist held straight, tracked by a PD controller on top of the arm's inverse
dynamics; its torques, replayed open loop, throw the box some 60 cm too far. iLQR (``solve("ilqr")``: a
quadratic model of the cost around the rollout from the step Jacobians, each with the contact mode of its
step held fixed, and a line search on the true cost) corrects them to within about 2 cm in a few
iterations. Single shooting with L-BFGS-B (``solve("shooting")``) is the cheaper iteration but fares worse
here: the cost is not smooth where contacts start and end, its line search stops at such a kink, and the
local minimum it stops in moves with round-off. Then the optimised torques are re-simulated with
``world.rollout``, and every number of the report comes from that rollout: the box's distance to the
target at T, when it left the cup and at what speed, where it first touched the ground (it lands a few
cm short and slides onto the target), and the deepest overlap of any two shapes. Once the box is gone
the torques no longer matter to the cost: nothing holds the arm up any more, and it falls back.

Contact settings: a whirling cup pushes the box along a circle, and a step's velocity constraint only
keeps the box from moving into the wall in a straight line, so the box creeps into the wall by about
``a dt^2`` per step (a: its centripetal acceleration). ``erp=0.2`` pushes such overlaps back out (a fifth
per step), which holds the overlap near ``a dt^2 / erp`` (some 3 mm at the release speed), and
``margin=0.03`` sees a contact coming 3 cm ahead, so the box neither sinks into the cup nor passes through
a wall or the ground.

Run ``python examples/catapult.py [--fast] [--out DIR]``; it writes ``catapult.png`` (the box's path,
the torques, the cost per iteration), ``catapult_frames.png`` and, without --fast, ``catapult.gif`` to
DIR. Fast mode allows 6 iLQR iterations instead of 30 (the first iterations cross contact kinks, where the
path they take moves with round-off and with the contact solve's answer on hard steps; by the sixth it has
come within a few cm).
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
DT = 0.005
STEPS = 240  # 1.2 s
POST_HEIGHT = 1.1  # m, the shoulder's height
LINKS = (0.35, 0.3, 0.2)  # m: upper arm, forearm, cup
LINK_MASSES = (0.6, 0.4, 0.3)  # kg
LINK_THICKNESS = 0.04  # m
CUP_WIDTH = 0.1  # m, across the plane of motion
WALL = (0.02, 0.04)  # m, thickness and height of the cup's walls
BOX_SIZE = 0.06  # m
BOX_MASS = 0.2  # kg
CUP_PLAY = 0.02  # m, how much longer than the box the inside of the cup is
TORQUE_LIMITS = (30.0, 15.0, 8.0)  # N m: shoulder, elbow, wrist
BEND_LIMIT = 1.6  # rad, elbow and wrist
FRICTION = 0.8  # every shape; the world combines coefficients by their geometric mean
TARGET = np.array([2.0, 0.0, 0.5 * BOX_SIZE])  # the box's centre resting on the ground at x = 2 m
TARGET_WEIGHT = 100.0
CONTROL_WEIGHT = 3e-5
SWING = (np.pi / 2, 0.6)  # the first guess: the shoulder turns by 90 degrees in 0.6 s
KP, KD = 400.0, 40.0  # 1/s^2, 1/s: the PD controller that makes the first guess
JOINTS = ("shoulder", "elbow", "wrist")


def build_world(dt: float = DT) -> rd.World:
    world = rd.World(dt=dt)
    catapult = rd.Skeleton("catapult")
    post = catapult.add_body("post", joint=rd.FixedJoint("post_weld"))
    height = POST_HEIGHT - 0.03  # the top of the post is 3 cm below the shoulder's hinge
    post.add_shape(rd.Box((0.08, 0.08, height)), origin=rd.Transform((0.0, 0.0, 0.5 * height)), friction=FRICTION)
    parent, origin = post, rd.Transform((0.0, 0.0, POST_HEIGHT))
    for i, (name, length, mass) in enumerate(zip(JOINTS, LINKS, LINK_MASSES)):
        # each link points along -x from its hinge at q = 0: the arm starts straight back
        cup = i == len(LINKS) - 1
        shape = rd.Box((length, CUP_WIDTH if cup else 0.03, LINK_THICKNESS))
        middle = rd.Transform((-0.5 * length, 0.0, 0.0))
        limits = {} if i == 0 else {"lower": -BEND_LIMIT, "upper": BEND_LIMIT}
        body = catapult.add_body(f"link{i + 1}", joint=rd.RevoluteJoint(name, axis=(0.0, 1.0, 0.0), **limits),
                                 parent=parent, joint_origin=origin,
                                 inertia=rd.Inertia.from_shape(shape, mass=mass, origin=middle))
        body.add_shape(shape, origin=middle, friction=FRICTION)
        parent, origin = body, rd.Transform((-length, 0.0, 0.0))
    wall = rd.Box((WALL[0], CUP_WIDTH, WALL[1]))
    z = 0.5 * (LINK_THICKNESS + WALL[1])
    outer = -LINKS[-1] + 0.5 * WALL[0]
    inner = outer + WALL[0] + BOX_SIZE + CUP_PLAY
    body.add_shape(wall, origin=rd.Transform((outer, 0.0, z)), friction=FRICTION, name="outer_wall")
    body.add_shape(wall, origin=rd.Transform((inner, 0.0, z)), friction=FRICTION, name="inner_wall")
    world.add_skeleton(catapult)
    box_skeleton = rd.Skeleton("box")
    cube = rd.Box((BOX_SIZE, BOX_SIZE, BOX_SIZE))
    box = box_skeleton.add_body("box", joint=rd.FreeJoint("box_free"),
                                inertia=rd.Inertia.from_shape(cube, mass=BOX_MASS))
    box.add_shape(cube, friction=FRICTION)
    world.add_skeleton(box_skeleton)
    world.add_ground(friction=FRICTION)
    # warm_start=False: every step is a pure function of (q, v, tau), so replays are identical
    world.contact_options(margin=0.03, erp=0.2, joint_limits=True, warm_start=False)
    return world


def loaded(world: rd.World) -> np.ndarray:
    """The arm straight back, the box on the cup's plate against its outer wall (1 mm apart)."""
    q = np.zeros(world.nq)
    j = world.joint("box_free").q_index
    x = -sum(LINKS) + WALL[0] + 0.5 * BOX_SIZE + 0.001
    q[j:j + 7] = [x, 0.0, POST_HEIGHT + 0.5 * LINK_THICKNESS + 0.5 * BOX_SIZE, 0.0, 0.0, 0.0, 1.0]
    return q


def holding_torques(world: rd.World, q) -> np.ndarray:
    """The arm's gravity torques plus those that carry the box's weight at its centre (the box's own dofs
    get none)."""
    tau = world.gravity_forces(q).copy()
    box = world.joint("box_free")
    tau[box.v_index:box.v_index + box.nv] = 0.0
    p = q[box.q_index:box.q_index + 3]
    J = world.body_jacobian(q, "link3")
    arm = p - world.body_pose(q, "link3")[:3, 3]
    skew = np.array([[0.0, -arm[2], arm[1]], [arm[2], 0.0, -arm[0]], [-arm[1], arm[0], 0.0]])
    J_point = J[:3] - skew @ J[3:]  # velocity of the box's centre as a point of the cup
    return tau + J_point.T @ np.array([0.0, 0.0, BOX_MASS * 9.81])


def first_guess(world: rd.World, q0) -> np.ndarray:
    """A throw by hand: the shoulder follows a minimum-jerk turn of SWING[0] in SWING[1] s, the elbow and
    the wrist stay straight, tracked by a PD controller on top of the arm's inverse dynamics (the box is
    not in that model: the feedback carries it). Its torques, replayed open loop, are the first guess."""
    arm = [world.joint(name).v_index for name in JOINTS]
    limits = np.array(TORQUE_LIMITS)
    angle, duration = SWING
    q, v = q0.copy(), np.zeros(world.nv)
    taus = np.zeros((STEPS, world.nv))
    for k in range(STEPS):
        s = min(k * world.dt / duration, 1.0)
        q_ref = np.array([angle * (10 * s**3 - 15 * s**4 + 6 * s**5), 0.0, 0.0])
        v_ref = np.array([angle * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration, 0.0, 0.0])
        a_ref = np.array([angle * (60 * s - 180 * s**2 + 120 * s**3) / duration**2, 0.0, 0.0])
        a = np.zeros(world.nv)
        a[arm] = a_ref + KP * (q_ref - q[arm]) + KD * (v_ref - v[arm])
        taus[k, arm] = np.clip(world.inverse_dynamics(q, v, a)[arm], -limits, limits)
        q, v = world.step(q, v, taus[k])
    return taus


def throw_problem(world: rd.World) -> rd.trajopt.Problem:
    q0 = loaded(world)
    hold = holding_torques(world, q0)
    prob = rd.trajopt.Problem(world, STEPS, q0)
    prob.add_body_target("box", position=TARGET, weight=TARGET_WEIGHT, time=-1)
    prob.add_control_cost(CONTROL_WEIGHT, tau_target=hold)
    limits = np.zeros(world.nv)
    for name, limit in zip(JOINTS, TORQUE_LIMITS):
        limits[world.joint(name).v_index] = limit
    prob.set_control_bounds(-limits, limits)
    prob.set_actuated(list(JOINTS))
    prob.set_initial_guess(first_guess(world, q0))
    return prob


def box_position(world: rd.World, Q) -> np.ndarray:
    j = world.joint("box_free").q_index
    return np.asarray(Q)[:, j:j + 3]


def verify(world: rd.World, q0, tau) -> dict:
    """Re-simulate ``tau`` with world.rollout; the box's path, its contacts and the deepest overlap."""
    Q, V = world.rollout(q0, np.zeros(world.nv), tau)
    in_cup, on_ground, deepest = [], [], 0.0
    for q in Q:
        c = world.collide(q)
        touching = c.distances <= 1e-4  # the contact set also lists the gaps within the margin
        pairs = {frozenset((a, b)) for a, b, t in zip(c.body_a, c.body_b, touching) if t}
        in_cup.append(any("box" in pair and pair & {"link1", "link2", "link3"} for pair in pairs))
        on_ground.append(frozenset(("box", "ground")) in pairs)
        if len(c.distances):
            deepest = min(deepest, float(c.distances.min()))
    in_cup, on_ground = np.array(in_cup), np.array(on_ground)
    P = box_position(world, Q)
    released = int(np.flatnonzero(in_cup)[-1]) + 1 if in_cup.any() else 0
    landed = int(np.flatnonzero(on_ground)[0]) if on_ground.any() else None
    v_box = world.joint("box_free").v_index  # the free joint's v starts with its linear velocity
    speed = float(np.linalg.norm(V[min(released, len(V) - 1), v_box:v_box + 3]))
    return {"Q": Q, "V": V, "box": P, "miss": float(np.linalg.norm(P[-1] - TARGET)), "released": released,
            "landed": landed, "penetration": -deepest, "speed": speed}


def plot(out: Path, world, guess: dict, best: dict, res) -> list[Path]:
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
        ax[0].plot(run["box"][:, 0], run["box"][:, 2], label=name)
    ax[0].plot(*TARGET[[0, 2]], "rx", ms=10, mew=2, label="target")
    ax[0].axhline(0.0, color="gray", lw=0.8)
    ax[0].set(title="the box's path", xlabel="x (m)", ylabel="z (m)", aspect="equal")
    ax[0].legend()
    t = np.arange(STEPS) * world.dt
    for name in JOINTS:
        ax[1].step(t, res.tau[:, world.joint(name).v_index], where="post", label=name)
    ax[1].axvline(best["released"] * world.dt, color="gray", lw=0.8)
    ax[1].set(title="optimised torques (grey: the box leaves the cup)", xlabel="time (s)", ylabel="N m")
    ax[1].legend()
    ax[2].semilogy(res.cost_history)
    ax[2].set(title="iLQR: cost per iteration", xlabel="iteration", ylabel="cost")
    paths = [out / "catapult.png"]
    fig.savefig(paths[0], dpi=100)
    plt.close(fig)
    camera = rd.viz.Camera(elevation=5, azimuth=-90)
    paths.append(rd.viz.frame_strip(world, best["Q"], out / "catapult_frames.png", n_frames=8, camera=camera))
    return paths


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    iterations = 6 if fast else 30
    world = build_world()
    prob = throw_problem(world)
    q0 = prob.q0
    guess = verify(world, q0, first_guess(world, q0))
    print(f"catapult: 3 links ({', '.join(f'{x:g}' for x in LINKS)} m), a {BOX_SIZE:g} m box of {BOX_MASS:g} kg "
          f"in its cup; {STEPS} steps of {DT * 1e3:g} ms; target on the ground at x = {TARGET[0]:g} m")
    print(f"first guess: the box ends at ({guess['box'][-1, 0]:.3f}, {guess['box'][-1, 2]:.3f}) m; "
          f"initial miss {guess['miss']:.4f} m")

    t0 = time.perf_counter()
    res = prob.solve("ilqr", max_iters=iterations, tol=1e-12, verbose=False)
    elapsed = time.perf_counter() - t0
    print(f"iLQR: {res.iterations} iterations in {elapsed:.2f} s; cost {res.cost_history[0]:.4f} -> "
          f"{res.cost:.6f} ({res.message})")

    best = verify(world, q0, res.tau)
    end = best["box"][-1]
    print(f"re-simulated with world.rollout: the box ends at ({end[0]:.4f}, {end[1]:.4f}, {end[2]:.4f}) m; "
          f"distance to the target {best['miss']:.4f} m")
    print(f"the box leaves the cup at t = {best['released'] * DT:.3f} s at {best['speed']:.2f} m/s")
    if best["landed"] is not None:
        first = best["box"][best["landed"]]
        print(f"it first touches the ground at t = {best['landed'] * DT:.3f} s, x = {first[0]:.3f} m")
    else:
        print("it does not touch the ground before T")
    print(f"deepest overlap of two shapes: {best['penetration'] * 1e3:.2f} mm")
    print("peak |torque| / limit: " + ", ".join(
        f"{name} {np.abs(res.tau[:, world.joint(name).v_index]).max() / lim:.2f}"
        for name, lim in zip(JOINTS, TORQUE_LIMITS)))

    pngs = plot(Path(out), world, guess, best, res)
    if pngs and not fast:
        pngs.append(rd.viz.render_trajectory(world, best["Q"], Path(out) / "catapult.gif", fps=25, stride=8,
                                             camera=rd.viz.Camera(elevation=5, azimuth=-90)))
    for p in pngs:
        print(f"wrote {p}")
    return {"result": res, "guess": guess, "best": best}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="6 iLQR iterations (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the pictures (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)

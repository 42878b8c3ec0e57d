"""Per-step cost of rigidiff's constrained step (contacts) next to MuJoCo's mj_step on the same scenes.

    python benchmarks/bench_contact.py [--scenes box_stack quadruped ball_drop] [--quick]
        [--islands box_stack pyramid spheres64 bin10 bin25] [--bin-sizes 10 25 50 100]
        [--jacobians box_stack pyramid bin10 bin25]

Scenes, built identically in both engines (dt 1e-3, gravity -9.81 z, the same masses, inertias and
friction coefficients):

- box_stack: five 1 kg, 0.2 m cubes stacked on the ground (friction 0.6), starting at rest, just touching;
- quadruped: rigidiff's `quadruped` model (a URDF with box links and sphere feet) on a free base over the
  ground (friction 0.8), held by a joint PD tau = 20 (q_ref - q) - 0.3 v (q_ref: neutral, straight legs),
  the base starting at z = 0.36 so that the feet land from 2 cm;
- ball_drop: ten 1 kg spheres (radius 0.1 m, friction 0.6) dropped from 0.2-0.65 m (restitution 0 in
  rigidiff; MuJoCo has no restitution coefficient).

Each engine first runs 2 s of its own closed loop (untimed), recording the torques it applied. The timed
runs replay those torques open loop over two windows of 1000 steps: "landing" (the first second, from the
initial state: fall, impact, settling) and "resting" (the second second, from the state after 1 s).
rigidiff: `world.step` in a Python loop and `world.rollout` (one call per window); MuJoCo (Euler integrator,
pyramidal friction cone, condim 3): `mj_step` in a Python loop (torques through qfrc_applied) and
`mujoco.rollout.rollout`, plus `mj_step` with the elliptic cone. All variants are timed in turn in each
round (medians over the rounds, one warm-up round). Ratios are rigidiff / MuJoCo (< 1: rigidiff is faster).
A table times the step of n spheres resting apart on the ground (n contacts) in both engines. The island
table times a chain of steps at rest after 0.3 s of large islands: the 5-box stack, a pyramid of 15 cubes
(each upper cube straddling two), 64 spheres apart (64 islands) and bins of N bodies (cubes and spheres in a
3-D checkerboard dropped layer by layer into a walled bin, one island; --bin-sizes gives a scaling series).

An untimed comparison follows: after 1 s, the bodies' heights, the total normal force on the ground over
the total weight, the contacts each engine reports, the deepest penetration, the largest speed, and which
LCP solver stage answered rigidiff's steps during that second.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from dataclasses import dataclass, replace

import numpy as np
from _common import interleaved_medians, stripped_urdf

import rigidiff as rd

G = 9.81
DT = 1e-3
WINDOW = 1000  # steps per timed window: the first second (landing) and the second one (resting)
KP, KD = 20.0, 0.3
TARGET = 2.0  # rigidiff's step <= 2x mj_step


@dataclass
class Free:
    """A free body of the box and ball scenes: shape ("box" half-size or "sphere" radius), mass, position."""

    name: str
    kind: str
    size: float
    mass: float
    pos: tuple


def box_stack() -> tuple[list[Free], float]:
    return [Free(f"box{i}", "box", 0.1, 1.0, (0.0, 0.0, 0.1 + 0.2 * i)) for i in range(5)], 0.6


def ball_drop() -> tuple[list[Free], float]:
    return [Free(f"ball{i}", "sphere", 0.1, 1.0, (0.4 * (i % 5), 0.4 * (i // 5), 0.3 + 0.05 * i))
            for i in range(10)], 0.6


def pyramid() -> tuple[list[Free], float]:
    """15 cubes (0.2 m) in rows of 5, 4, 3, 2, 1, 2 cm apart: each upper cube straddles two lower ones."""
    bodies, k = [], 0
    for level, n in enumerate(range(5, 0, -1)):
        for i in range(n):
            x = 0.22 * (i - (n - 1) / 2)
            bodies.append(Free(f"box{k}", "box", 0.1, 1.0, (x, 0.0, 0.1 + 0.2 * level)))
            k += 1
    return bodies, 0.6


BIN_CELL = 0.1  # lattice spacing of the bin; cubes 0.1 m, spheres 0.05 m radius


def bin_cols(n: int) -> int:
    """Columns per side of the bin of n bodies: about four layers."""
    return max(2, int(np.ceil(np.sqrt(n / 4))))


def bin_pile(n: int) -> tuple[list[Free], float]:
    """n bodies, cubes and spheres in a 3-D checkerboard, in a walled bin of bin_cols(n)^2 columns; each
    layer is dropped from 2 mm above the one below, and neighbours in a layer overlap by 20 um, so that
    once landed every body touches its neighbours and the pile is one island."""
    k, bodies = bin_cols(n), []
    step = BIN_CELL - 2e-5
    for i in range(n):
        layer, cell = divmod(i, k * k)
        a, b = divmod(cell, k)
        pos = (step * (a - (k - 1) / 2), step * (b - (k - 1) / 2), BIN_CELL * (0.5 + layer) + 2e-3 * layer)
        kind = "box" if (a + b + layer) % 2 == 0 else "sphere"
        bodies.append(Free(f"b{i}", kind, BIN_CELL / 2, 0.5 if kind == "box" else 0.3, pos))
    return bodies, 0.6


def bin_walls(n: int) -> list[tuple[tuple, tuple]]:
    """The bin's four walls as (half-sizes, centre): 2 cm thick, as high as the pile, touching its sides."""
    k = bin_cols(n)
    inner = (BIN_CELL - 2e-5) * (k - 1) / 2 + BIN_CELL / 2
    h = BIN_CELL * (n // (k * k) + 1)
    t = 0.01
    return [((t, inner + 2 * t, h), (s * (inner + t), 0.0, h)) for s in (-1, 1)] + \
           [((inner + 2 * t, t, h), (0.0, s * (inner + t), h)) for s in (-1, 1)]


# ---------------------------------------------------------------------------------------------- rigidiff


def rd_free_world(bodies: list[Free], friction: float, walls=()):
    world = rd.World(dt=DT)
    ground = world.add_ground(friction=friction)
    for i, (half, centre) in enumerate(walls):
        wall = ground.add_body(f"wall{i}")
        wall.add_shape(rd.Box(tuple(2 * h for h in half)), origin=rd.Transform(translation=centre), friction=friction)
    if walls:
        world.rebuild()
    q0 = []
    for b in bodies:
        shape = rd.Box((2 * b.size,) * 3) if b.kind == "box" else rd.Sphere(b.size)
        sk = rd.Skeleton(b.name)
        body = sk.add_body(b.name, joint=rd.FreeJoint(f"{b.name}_free"),
                           inertia=rd.Inertia.from_shape(shape, mass=b.mass))
        body.add_shape(shape, friction=friction)
        world.add_skeleton(sk)
        q0 += [*b.pos, 0.0, 0.0, 0.0, 1.0]  # xyz, quaternion xyzw
    return world, np.array(q0), [b.name for b in bodies]


def rd_quadruped():
    sk = rd.load_urdf(rd.models.path("quadruped"), floating_base=True)
    for body in sk.bodies:  # the ground's 0.8 on every shape, whatever the combination rule
        body.shapes[:] = [replace(s, friction=0.8) for s in body.shapes]
    world = rd.World(dt=DT)
    world.add_ground(friction=0.8)
    world.add_skeleton(sk)
    q0 = world.neutral_configuration()
    q0[2] = 0.36
    return world, q0, ["base"]


def pd(q, v, q_ref) -> np.ndarray:
    """Joint PD on the leg joints; the free joint (7 coordinates, 6 dofs) first in both engines."""
    tau = np.zeros(len(v))
    tau[6:] = KP * (q_ref[7:] - q[7:]) - KD * v[6:]
    return tau


def ground_rows(contacts) -> np.ndarray:
    return np.array(["ground" in (a, b) for a, b in zip(contacts.body_a, contacts.body_b)], dtype=bool)


def rd_record(world, q0, bodies, controlled: bool):
    """2 s of the closed loop: torques, the window starts, and the check after 1 s."""
    nv = world.nv
    q_ref = world.neutral_configuration()
    q, v = q0.copy(), np.zeros(nv)
    taus = np.zeros((2 * WINDOW, nv))
    starts, solvers, check = [], collections.Counter(), None
    for k in range(2 * WINDOW):
        if k % WINDOW == 0:
            starts.append((q.copy(), v.copy()))
        if controlled:
            taus[k] = pd(q, v, q_ref)
        q, v = world.step(q, v, taus[k])
        if k < WINDOW:
            c = world.last_contacts()
            solvers[c.solver + (" (friction dropped)" if c.friction_dropped else "")] += 1
        if k + 1 == WINDOW:
            c = world.last_contacts()
            ground = ground_rows(c)
            check = {
                "heights": [world.body_pose(q, b)[2, 3] for b in bodies],
                "force": c.normal_impulses[ground].sum() / (world.total_mass * G * DT),
                "ncon": f"{len(c)} ({int(ground.sum())} ground)",
                "depth": -min(c.distances.min(), 0.0) if len(c) else 0.0,
                "speed": np.abs(v).max(),
                "finite": bool(np.isfinite(q).all() and np.isfinite(v).all()),
                "solvers": solvers,
                "mass": world.total_mass,
            }
    return taus, starts, check


def rd_timers(world, taus, starts, controlled: bool) -> dict:
    step, rollout, nv = world.step, world.rollout, world.nv
    zero = np.zeros(nv)
    fns = {}
    for w, (q0, v0) in enumerate(starts):
        tw = taus[w * WINDOW:(w + 1) * WINDOW]

        def loop(q0=q0, v0=v0, tw=tw):
            q, v = q0, v0
            if controlled:
                for tau in tw:
                    q, v = step(q, v, tau)
            else:
                for _ in range(WINDOW):
                    q, v = step(q, v, zero)

        fns[w, "rd step"] = (loop, None)
        fns[w, "rd rollout"] = ((lambda q0=q0, v0=v0, tw=tw: rollout(q0, v0, tw)), None)
    return fns


# ------------------------------------------------------------------------------------------------ MuJoCo


def mj_spec_options(spec, cone: str) -> None:
    import mujoco

    spec.option.timestep = DT
    spec.option.gravity = [0.0, 0.0, -G]
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.cone = mujoco.mjtCone.mjCONE_PYRAMIDAL if cone == "pyramidal" else mujoco.mjtCone.mjCONE_ELLIPTIC
    # rigidiff leaves joint limits off by default (and the quadruped's knees rest on theirs at q = 0)
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)


def mj_ground(spec, friction: float, contype: int = 1, conaffinity: int = 1) -> None:
    import mujoco

    spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 1.0],
                            friction=[friction, 0.0, 0.0], condim=3, contype=contype, conaffinity=conaffinity)


def mj_free_model(bodies: list[Free], friction: float, cone: str, walls=()):
    import mujoco

    spec = mujoco.MjSpec()
    mj_spec_options(spec, cone)
    mj_ground(spec, friction)
    for half, centre in walls:
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(half), pos=list(centre),
                                friction=[friction, 0.0, 0.0], condim=3)
    for b in bodies:
        body = spec.worldbody.add_body(name=b.name, pos=list(b.pos))
        body.add_freejoint()
        gtype = mujoco.mjtGeom.mjGEOM_BOX if b.kind == "box" else mujoco.mjtGeom.mjGEOM_SPHERE
        body.add_geom(type=gtype, size=[b.size] * 3, mass=b.mass, friction=[friction, 0.0, 0.0], condim=3)
    m = spec.compile()
    return m, m.qpos0.copy(), [b.name for b in bodies]


def mj_quadruped(cone: str):
    """The same URDF (visuals stripped) through MuJoCo's importer, with a free joint on the base; only the
    robot-ground pairs collide (contype 2 / conaffinity 1 on the robot), as in rigidiff without
    self-collision."""
    import mujoco

    text = stripped_urdf(rd.models.path("quadruped"), collision=True)
    spec = mujoco.MjSpec.from_string(text.replace('<collision name="foot">', "<collision>"))  # unique names
    spec.worldbody.first_body().add_freejoint()
    for g in spec.geoms:
        g.friction = [0.8, 0.0, 0.0]
        g.condim, g.contype, g.conaffinity = 3, 2, 1
    mj_spec_options(spec, cone)
    mj_ground(spec, 0.8, contype=1, conaffinity=2)
    m = spec.compile()
    qpos = m.qpos0.copy()
    qpos[2] = 0.36
    return m, qpos, ["base"]


def mj_record(m, qpos, bodies, controlled: bool):
    import mujoco

    d = mujoco.MjData(m)
    d.qpos[:] = qpos
    mujoco.mj_forward(m, d)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    size = mujoco.mj_stateSize(m, spec)
    forces = np.zeros((2 * WINDOW, m.nv))
    starts, check = [], None
    ground = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ground")
    for k in range(2 * WINDOW):
        if k % WINDOW == 0:
            state = np.empty(size)
            mujoco.mj_getState(m, d, state, spec)
            starts.append(state)
        if controlled:
            d.qfrc_applied[:] = forces[k] = pd(d.qpos, d.qvel, m.qpos0)
        mujoco.mj_step(m, d)
        if k + 1 == WINDOW:
            f6, fn, on_ground = np.zeros(6), 0.0, 0
            for i in range(d.ncon):
                if ground in (d.contact.geom1[i], d.contact.geom2[i]):
                    mujoco.mj_contactForce(m, d, i, f6)
                    fn += f6[0]
                    on_ground += 1
            check = {
                "heights": [d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b)][2] for b in bodies],
                "force": fn / (m.body_mass.sum() * G),
                "ncon": f"{d.ncon} ({on_ground} ground)",
                "depth": -min(d.contact.dist.min(), 0.0) if d.ncon else 0.0,
                "speed": np.abs(d.qvel).max(),
                "finite": bool(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()),
                "solvers": None,
                "mass": m.body_mass.sum(),
            }
    return d, forces, starts, check


def mj_timers(m, d, forces, starts, controlled: bool, label: str, with_rollout: bool) -> dict:
    import mujoco
    from mujoco import rollout

    step = mujoco.mj_step
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    full = int(mujoco.mjtState.mjSTATE_FULLPHYSICS)
    fns = {}
    for w, state in enumerate(starts):
        fw = forces[w * WINDOW:(w + 1) * WINDOW]

        def setup(state=state):
            mujoco.mj_setState(m, d, state, spec)

        def loop(fw=fw):
            if controlled:
                for f in fw:
                    d.qfrc_applied[:] = f
                    step(m, d)
            else:
                for _ in range(WINDOW):
                    step(m, d)

        fns[w, f"mj_step {label}"] = (loop, setup)
        if with_rollout:
            setup()
            init = np.empty((1, mujoco.mj_stateSize(m, full)))
            mujoco.mj_getState(m, d, init[0], full)
            warm = d.qacc_warmstart.copy()[None]
            out = np.empty((1, WINDOW, init.shape[1]))
            kwargs = dict(control=fw[None], control_spec=int(mujoco.mjtState.mjSTATE_QFRC_APPLIED)) if controlled \
                else {}

            def roll(init=init, warm=warm, out=out, kwargs=kwargs):
                rollout.rollout(m, d, init, nstep=WINDOW, initial_warmstart=warm, state=out, **kwargs)

            fns[w, "mj rollout"] = (roll, None)
    return fns


# -------------------------------------------------------------------------------------------------- main

SCENES = {
    "box_stack": (lambda: rd_free_world(*box_stack()), lambda cone: mj_free_model(*box_stack(), cone), False),
    "quadruped": (rd_quadruped, mj_quadruped, True),
    "ball_drop": (lambda: rd_free_world(*ball_drop()), lambda cone: mj_free_model(*ball_drop(), cone), False),
}
WINDOWS = ("landing", "resting")


def mujoco_version():
    try:
        import mujoco
    except ImportError:
        return None
    return mujoco.__version__


def bench_scene(name: str, repeat: int):
    rd_build, mj_build, controlled = SCENES[name]
    world, q0, bodies = rd_build()
    taus, starts, checks = rd_record(world, q0, bodies, controlled)
    checks = {"rigidiff": checks}
    fns = rd_timers(world, taus, starts, controlled)
    if mujoco_version() is not None:
        for cone in ("pyramidal", "elliptic"):
            m, qpos, mj_bodies = mj_build(cone)
            d, forces, mj_starts, checks[f"mujoco {cone}"] = mj_record(m, qpos, mj_bodies, controlled)
            fns.update(mj_timers(m, d, forces, mj_starts, controlled, cone[:3], cone == "pyramidal"))
    times = interleaved_medians(fns, repeat)
    return {k: 1e6 * t / WINDOW for k, t in times.items()}, checks


def contact_scaling(counts, repeat: int) -> None:
    """Step cost against the number of contacts: n spheres resting apart on the ground (one contact each)."""
    import mujoco

    print(f"{'spheres':>7}  {'rd step':>7} {'mj_step':>7} {'ratio':>5}")
    n_steps = 200
    for n in counts:
        bodies = [Free(f"ball{i}", "sphere", 0.1, 1.0, (0.4 * i, 0.0, 0.1)) for i in range(n)]
        world, q, _ = rd_free_world(bodies, 0.6)
        v, zero = np.zeros(world.nv), np.zeros(world.nv)
        m, qpos, _ = mj_free_model(bodies, 0.6, "pyramidal")
        d = mujoco.MjData(m)
        d.qpos[:] = qpos
        for _ in range(100):  # settle into contact
            q, v = world.step(q, v, zero)
            mujoco.mj_step(m, d)

        chain = [q, v]  # each round continues the simulation, as mj_step's does: every step is warm-started

        def rd_loop(chain=chain, world=world, zero=zero):
            q, v = chain
            for _ in range(n_steps):
                q, v = world.step(q, v, zero)
            chain[:] = q, v

        def mj_loop(m=m, d=d):
            for _ in range(n_steps):
                mujoco.mj_step(m, d)

        us = {k: 1e6 * t / n_steps for k, t in interleaved_medians({"rd": (rd_loop, None),
                                                                   "mj": (mj_loop, None)}, repeat).items()}
        print(f"{n:>7}  {us['rd']:7.1f} {us['mj']:7.1f} {us['rd'] / us['mj']:5.2f}", flush=True)


ISLANDS = {
    "box_stack": lambda: (box_stack(), ()),
    "pyramid": lambda: (pyramid(), ()),
    "spheres64": lambda: (([Free(f"ball{i}", "sphere", 0.1, 1.0, (0.4 * (i % 8), 0.4 * (i // 8), 0.1))
                            for i in range(64)], 0.6), ()),
}


def island_scene(name: str):
    if name.startswith("bin"):
        n = int(name[3:])
        return bin_pile(n), bin_walls(n)
    return ISLANDS[name]()


def island_table(names, repeat: int, settle: int = 300) -> list:
    """Step cost of scenes at rest after `settle` steps (one island each but the spheres): rows, clamping
    rows and the rank of the island's clamping system (rigidiff), contacts of both engines, us per step."""
    import mujoco

    print(f"{'scene':<10} {'bodies':>6} {'rows':>5} {'clamp':>5} {'rd con':>6} {'mj con':>6}  {'rd step':>9} "
          f"{'mj_step':>7} {'ratio':>6}")
    rows = []
    for name in names:
        (bodies, friction), walls = island_scene(name)
        world, q, _ = rd_free_world(bodies, friction, walls)
        v, zero = np.zeros(world.nv), np.zeros(world.nv)
        m, qpos, _ = mj_free_model(bodies, friction, "pyramidal", walls)
        d = mujoco.MjData(m)
        d.qpos[:] = qpos
        for _ in range(settle):
            q, v = world.step(q, v, zero)
            mujoco.mj_step(m, d)
        c = world.last_contacts()
        classes = np.asarray(c.row_classes)
        clamping = int(np.sum(classes == "clamping")) if classes.dtype.kind in "US" else int(np.sum(classes == 1))
        per_call = max(1, min(200, int(2e4 / max(1, len(classes)))))  # fewer steps per round for large piles

        chain = [q, v]

        def rd_loop(chain=chain, world=world, zero=zero, n=per_call):
            q, v = chain  # each round continues the simulation, so every step is warm-started
            for _ in range(n):
                q, v = world.step(q, v, zero)
            chain[:] = q, v

        def mj_loop(m=m, d=d, n=per_call):
            for _ in range(n):
                mujoco.mj_step(m, d)

        us = {k: 1e6 * t / per_call for k, t in interleaved_medians({"rd": (rd_loop, None),
                                                                    "mj": (mj_loop, None)}, repeat).items()}
        print(f"{name:<10} {len(bodies):>6} {len(classes):>5} {clamping:>5} {len(c):>6} {d.ncon:>6}  "
              f"{us['rd']:9.1f} {us['mj']:7.1f} {us['rd'] / us['mj']:6.2f}", flush=True)
        rows.append((name, len(classes), us["rd"], us["mj"]))
    return rows


def island_jacobians(names) -> None:
    """step_jacobians at rest (after 0.3 s) against central differences of the step (6 nv steps, each a cold
    solve: a perturbed state does not continue the chain), one call each."""
    import rigidiff.testing as rdt

    print(f"{'scene':<10} {'nv':>4}  {'step_jacobians ms':>17} {'central differences s':>21} {'speed-up':>8}")
    for name in names:
        (bodies, friction), walls = island_scene(name)
        world, q, _ = rd_free_world(bodies, friction, walls)
        v, zero = np.zeros(world.nv), np.zeros(world.nv)
        for _ in range(300):
            q, v = world.step(q, v, zero)
        start = time.perf_counter()
        world.step_jacobians(q, v, zero)
        analytic = time.perf_counter() - start
        start = time.perf_counter()
        rdt.finite_difference_jacobians(world, q, v, zero, method="central")
        fd = time.perf_counter() - start
        print(f"{name:<10} {world.nv:>4}  {1e3 * analytic:17.1f} {fd:21.2f} {fd / analytic:7.0f}x", flush=True)


def plot_island_scaling(rows, path: str) -> None:
    """Step time against the island's rows for the bins of the island table (log-log), with MuJoCo's step
    and a rows^1.5 line through the smallest bin for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = sorted((r for r in rows if r[0].startswith("bin")), key=lambda r: r[1])
    if len(bins) < 2:
        print(f"--plot: needs at least two bins in the island table, got {[r[0] for r in bins]}")
        return
    m = np.array([r[1] for r in bins], dtype=float)
    rd_us, mj_us = np.array([r[2] for r in bins]), np.array([r[3] for r in bins])
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.loglog(m, rd_us, "o-", label="rigidiff step")
    ax.loglog(m, mj_us, "s-", label="mj_step")
    ax.loglog(m, rd_us[0] * (m / m[0]) ** 1.5, "k:", label="rows$^{1.5}$")
    for (name, rows_, t, _) in bins:
        ax.annotate(name, (rows_, t), textcoords="offset points", xytext=(4, -10), fontsize=8)
    ax.set_xlabel("constraint rows of the island")
    ax.set_ylabel("us per step at rest")
    ax.set_title("a bin of cubes and spheres, one island")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def print_timings(name: str, us: dict) -> None:
    for w, window in enumerate(WINDOWS):
        row = f"{name:<10} {window:<8}"
        for ours, peer in (("rd step", "mj_step pyr"), ("rd rollout", "mj rollout"), ("rd step", "mj_step ell")):
            if (w, peer) in us:
                row += f"  {us[w, ours]:7.1f} {us[w, peer]:7.1f} {us[w, ours] / us[w, peer]:5.2f}"
            else:
                row += f"  {us[w, ours]:7.1f} {'-':>7} {'-':>5}"
        print(row, flush=True)


def print_checks(name: str, checks: dict) -> None:
    print(f"{name}: total mass " + ", ".join(f"{e} {c['mass']:.4f} kg" for e, c in checks.items()))
    print(f"  {'engine':<18} {'contacts':<16} {'F_n/weight':>10} {'depth mm':>9} {'max|v|':>9}  heights after 1 s (m)")
    for engine, c in checks.items():
        finite = "" if c["finite"] else "  NON-FINITE STATE"
        heights = " ".join(f"{h:.4f}" for h in c["heights"])
        print(f"  {engine:<18} {c['ncon']:<16} {c['force']:10.4f} {1e3 * c['depth']:9.3f} {c['speed']:9.2e}  "
              f"{heights}{finite}")
    solvers = checks["rigidiff"]["solvers"]
    stages = ", ".join(f"{s} {n}" for s, n in sorted(solvers.items(), key=lambda kv: -kv[1]))
    contact_steps = sum(n for s, n in solvers.items() if s != "none")
    fallbacks = sum(n for s, n in solvers.items() if s not in ("none", "warm_start"))
    print(f"  rigidiff LCP over the first second: {stages}; {fallbacks} of {contact_steps} steps with constraint "
          "rows fell back from the warm start")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(SCENES))
    ap.add_argument("--quick", action="store_true", help="fewer timing rounds")
    # bin50 and bin100 are not in the default: the cold steps of their settling (pivoting a 1755- or
    # 3705-row island from scratch) take seconds each, so they settle in minutes; ask with --bin-sizes
    ap.add_argument("--islands", nargs="*", default=["box_stack", "pyramid", "spheres64", "bin10", "bin25"],
                    help="scenes of the island table (box_stack, pyramid, spheres64, bin<N>); none: skip it")
    ap.add_argument("--bin-sizes", nargs="*", type=int, default=[],
                    help="bodies of a scaling series of bins (e.g. 10 25 50 100), added to the island table")
    ap.add_argument("--plot", metavar="PNG", help="plot the island table's bins: step time against rows")
    ap.add_argument("--jacobians", nargs="*", default=[], metavar="SCENE",
                    help="island scenes whose step_jacobians to time against central differences of the step")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else 9
    peer = "mujoco: not installed" if mujoco_version() is None else f"mujoco {mujoco_version()}"
    print(f"rigidiff {rd.__version__}, {peer}; dt {DT}, per step in us (medians of {repeat} rounds of "
          f"{WINDOW} steps); ratio = rigidiff / MuJoCo, target for the step: <= {TARGET:g}")
    print(f"{'scene':<10} {'window':<8}  {'rd step':>7} {'mj_step':>7} {'ratio':>5}  {'rd roll':>7} {'mj roll':>7} "
          f"{'ratio':>5}  {'rd step':>7} {'mj ell.':>7} {'ratio':>5}")
    results = {}
    for name in args.scenes:
        us, checks = bench_scene(name, repeat)
        print_timings(name, us)
        results[name] = checks
    if mujoco_version() is not None:
        print("\nstep against the number of contacts (n spheres resting apart on the ground, us per step)")
        contact_scaling((1, 2, 4, 8, 16, 64) if not args.quick else (1, 4, 16, 64), repeat)
        islands = list(args.islands) + [f"bin{n}" for n in args.bin_sizes]
        if islands:
            print("\nsteps at rest after 0.3 s (islands of touching bodies; a chain of steps, us per step)")
            table = island_table(islands, repeat)
            if args.plot:
                plot_island_scaling(table, args.plot)
    if args.jacobians:
        print("\nstep Jacobians at rest against central differences of the step")
        island_jacobians(args.jacobians)
    print()
    print("untimed check after 1 s (closed loop; F_n/weight: total normal force on the ground / total weight)")
    for name, checks in results.items():
        print_checks(name, checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())

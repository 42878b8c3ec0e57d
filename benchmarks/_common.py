"""Helpers shared by the benchmark scripts: robots, timing, and the peers' models of the same URDF."""

from __future__ import annotations

import re
import time
import warnings
from pathlib import Path

import numpy as np

import rigidiff as rd

# name: (URDF path under example-robot-data's robots folder, floating base)
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
}


def robots_dir() -> Path:
    found = rd.models.example_robot_data_dir()
    if found is None:
        raise SystemExit("example-robot-data is not installed: pip install example-robot-data")
    return found


def _batch(fn, args_a, args_b, n: int) -> float:
    """Seconds per call of n calls (at least 2), alternating two argument sets."""
    half = max(n // 2, 1)
    t0 = time.perf_counter()
    for _ in range(half):
        fn(*args_a)
        fn(*args_b)
    return (time.perf_counter() - t0) / (2 * half)


def median_time(fn, args_a, args_b, repeat: int, n: int = 400) -> float:
    """Per-call time in us: the lower quartile over `repeat` batches of `n` calls (robust to a busy
    machine), alternating two argument sets."""
    return 1e6 * float(np.percentile([_batch(fn, args_a, args_b, n) for _ in range(repeat)], 25))


def paired_times(ours, peer, repeat: int, n_ours: int = 400, n_peer: int = 400) -> tuple[float, float]:
    """Per-call times in us (lower quartiles) of two functions timed in alternating batches, so that both
    see the same load on a shared machine. `ours` and `peer` are (fn, args_a, args_b)."""
    a, b = [], []
    for _ in range(repeat):
        a.append(_batch(*ours, n_ours))
        b.append(_batch(*peer, n_peer))
    return 1e6 * float(np.percentile(a, 25)), 1e6 * float(np.percentile(b, 25))


def interleaved_medians(fns: dict, repeat: int, warmup: int = 1) -> dict:
    """Median seconds of each zero-argument function of `fns` (name: (fn, setup or None)), over `repeat`
    rounds that call every function once in turn, so that all see the same load on a shared machine.
    `setup` runs untimed before each call; `warmup` rounds are discarded."""
    samples = {name: [] for name in fns}
    for r in range(warmup + repeat):
        for name, (fn, setup) in fns.items():
            if setup is not None:
                setup()
            t0 = time.perf_counter()
            fn()
            dt = time.perf_counter() - t0
            if r >= warmup:
                samples[name].append(dt)
    return {name: float(np.median(s)) for name, s in samples.items()}


def stripped_urdf(urdf_path: Path, dynamics: bool = False, collision: bool = False) -> str:
    """The URDF's text without <visual>, <collision> and <mimic> (and without <dynamics> damping and
    friction when `dynamics` is True; keeping <collision> when `collision` is True), so that every library
    loads the same rigid bodies."""
    text = Path(urdf_path).read_text()
    text = re.sub(r"<visual.*?</visual>", "", text, flags=re.S)
    if not collision:
        text = re.sub(r"<collision.*?</collision>", "", text, flags=re.S)
    text = re.sub(r"<mimic[^>]*/>", "", text)
    if dynamics:
        text = re.sub(r"<dynamics[^>]*/>", "", text)
    return text


def load_world(urdf, floating: bool, root: Path) -> rd.World:
    """A rigidiff World (dt 1e-3) holding one robot, from a URDF path or text, without geometry."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = rd.load_urdf(urdf, floating_base=floating, package_dirs=[root], load_geometry=False)
    world = rd.World(dt=1e-3)
    world.add_skeleton(sk)
    return world


def random_states(world: rd.World, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Two states (q within the limits, small v and tau) to alternate between, so no library skips work."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(2):
        q = world.random_configuration(rng)
        states.append((q, 0.1 * rng.normal(size=world.nv), 0.1 * rng.normal(size=world.nv)))
    return states


def mujoco_model(urdf_path: Path, floating: bool, motors: bool = False):
    """MuJoCo model of a URDF with meshes stripped, Euler integrator, constraints off; with `motors`, one
    motor (gear 1, unlimited) per hinge or slide joint, in joint order."""
    import mujoco

    spec = mujoco.MjSpec.from_string(stripped_urdf(urdf_path))
    if motors:
        for j in spec.joints:
            if j.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                spec.add_actuator(name=j.name, target=j.name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
    if floating:
        spec.worldbody.first_body().add_freejoint()
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_EULER
    spec.option.timestep = 1e-3
    spec.option.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT) | int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    model = spec.compile()
    model.dof_damping[:] = 0.0
    model.dof_frictionloss[:] = 0.0
    model.dof_armature[:] = 0.0
    return model

"""rigidiff against Pinocchio on a robot of example-robot-data: same numbers, and the time each takes.

Both libraries load the same URDF (Franka Emika Panda by default). rigidiff lays out q and v exactly as
Pinocchio does, except that a URDF ``continuous`` joint has one coordinate in rigidiff (the angle)
and two in Pinocchio (cos, sin); this script converts between the two by joint name, so it also runs
on robots that have such joints. At random states it compares

- inverse dynamics (RNEA), with and without external wrenches on the bodies,
- forward dynamics (ABA), the mass matrix (CRBA) and its inverse, bias and gravity forces,
- body poses, body Jacobians in world-aligned and local axes, the centre of mass and its Jacobian,
- kinetic and potential energy,

and prints the largest relative error of each, max |rigidiff - pinocchio| / max |pinocchio|, next
to the median time of one call of each library (both called from Python, each through its own
bindings). Pinocchio is the reference implementation of these algorithms; the errors should be at
round-off level (below 1e-9).

Two conventions differ and the script accounts for them: Pinocchio ignores the joint damping of the
URDF in its dynamics and so does rigidiff outside of ``World.step`` (the step applies damping
implicitly), so nothing needs zeroing; and Pinocchio leaves the mass of the links welded to the world
out of the centre of mass and the potential energy, which rigidiff includes (``World.total_mass``
counts every body), so that mass is added to Pinocchio's values before comparing.

Run ``python examples/compare_with_pinocchio.py [--fast] [--robot NAME] [--out DIR]``; it writes
``pinocchio_timings.png`` to DIR. Needs ``pin`` and ``example-robot-data`` (pip install pin
example-robot-data); without them it says so and exits with status 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"

# name -> (URDF path under example-robot-data's robots/ folder, floating base)
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "kinova": ("kinova_description/robots/kinova.urdf", False),  # has continuous joints
    "pr2": ("pr2_description/urdf/pr2.urdf", True),  # continuous joints, floating base
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
}




class Pair:
    """The same robot in rigidiff and Pinocchio, with the maps between their coordinates."""

    def __init__(self, pin, urdf: Path, robots_dir: Path, floating: bool):
        self.pin = pin
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mimic joints, placeholder inertias
            skeleton = rd.load_urdf(urdf, floating_base=floating, package_dirs=[robots_dir], load_geometry=False)
        self.world = rd.World()
        self.world.add_skeleton(skeleton)
        if floating:
            self.model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromUrdf(str(urdf))
        self.data = self.model.createData()
        w, m = self.world, self.model
        # joint by joint: rigidiff (q, v) slices and Pinocchio (q, v) slices
        self.joints = []
        for name in w.joint_names:
            info = w.joint(name)
            jid = m.getJointId(name)
            if jid >= m.njoints:
                raise RuntimeError(f"Pinocchio has no joint named {name!r}")
            pj = m.joints[jid]
            if pj.nv != info.nv:
                raise RuntimeError(f"joint {name!r}: nv {info.nv} in rigidiff, {pj.nv} in Pinocchio")
            self.joints.append((info, pj.idx_q, pj.nq, pj.idx_v))
        self.v_perm = np.concatenate([np.arange(pv, pv + info.nv) for info, _, _, pv in self.joints])
        self.same_v_layout = w.nv == m.nv and np.array_equal(self.v_perm, np.arange(w.nv))
        self.n_continuous = sum(1 for info, _, pnq, _ in self.joints if info.nq == 1 and pnq == 2)
        # q matches too when, continuous joints aside, every joint starts where Pinocchio's does
        self.same_q_layout = self.n_continuous == 0 and all(info.q_index == pq for info, pq, _, _ in self.joints)
        # bodies: rigidiff body i <-> Pinocchio BODY frame of the same link name
        self.frame_ids = []
        for name in w.body_names:
            fid = m.getFrameId(name, pin.FrameType.BODY)
            if fid >= m.nframes:
                raise RuntimeError(f"Pinocchio has no body frame named {name!r}")
            self.frame_ids.append(fid)

    def q_pin(self, q: np.ndarray) -> np.ndarray:
        """Pinocchio's configuration for rigidiff's q (a continuous joint's angle becomes (cos, sin))."""
        out = self.pin.neutral(self.model)
        for info, pq, pnq, _ in self.joints:
            x = q[info.q_index:info.q_index + info.nq]
            out[pq:pq + pnq] = (np.cos(x[0]), np.sin(x[0])) if pnq == 2 and info.nq == 1 else x
        return out

    def v_pin(self, v: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.v_perm] = v
        return out

    def from_pin(self, x: np.ndarray) -> np.ndarray:
        """A Pinocchio vector (nv,) or matrix (..., nv) re-indexed in rigidiff's v order."""
        return x[..., self.v_perm]

    def fext_pin(self, qp: np.ndarray, F: np.ndarray):
        """Pinocchio's per-joint local forces for rigidiff wrenches F (nbodies, 6): world axes, body origins."""
        pin, m, d = self.pin, self.model, self.data
        pin.framesForwardKinematics(m, d, qp)
        fext = pin.StdVec_Force()
        for _ in range(m.njoints):
            fext.append(pin.Force.Zero())
        for i, fid in enumerate(self.frame_ids):
            j = m.frames[fid].parentJoint
            if j == 0:
                continue  # a wrench on a body welded to the world does nothing
            oMi, p_body = d.oMi[j], d.oMf[fid].translation
            force, torque = F[i, :3], F[i, 3:]
            # move the torque from the body origin to the joint origin, then rotate into joint axes
            torque_at_joint = torque + np.cross(p_body - oMi.translation, force)
            fext[j] = fext[j] + pin.Force(oMi.rotation.T @ force, oMi.rotation.T @ torque_at_joint)
        return fext


def rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def median_call_time(fn, calls: int, blocks: int = 15) -> float:
    """Median over ``blocks`` of the mean time of one call within a block of ``calls // blocks`` calls."""
    per_block = max(1, calls // blocks)
    fn()  # warm up
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(per_block):
            fn()
        times.append((time.perf_counter() - t0) / per_block)
    return float(np.median(times))


def compare(pair: Pair, n_states: int, rng) -> dict[str, float]:
    """Largest relative error of each quantity over n_states random states."""
    pin, w, m, d = pair.pin, pair.world, pair.model, pair.data
    sym = lambda M: np.triu(M) + np.triu(M, 1).T  # noqa: E731  (Pinocchio fills the upper triangle)
    errors: dict[str, float] = {}

    def record(key, a, b):
        errors[key] = max(errors.get(key, 0.0), rel_err(a, b))

    for _ in range(n_states):
        q = w.random_configuration(rng)
        v, a, tau = rng.normal(size=(3, w.nv))
        F = rng.normal(size=(w.nbodies, 6))
        qp, vp, ap, taup = pair.q_pin(q), pair.v_pin(v), pair.v_pin(a), pair.v_pin(tau)

        record("inverse dynamics", w.inverse_dynamics(q, v, a), pair.from_pin(pin.rnea(m, d, qp, vp, ap)))
        record("inverse dynamics + f_ext", w.inverse_dynamics(q, v, a, f_ext=F),
               pair.from_pin(pin.rnea(m, d, qp, vp, ap, pair.fext_pin(qp, F))))
        record("forward dynamics", w.forward_dynamics(q, v, tau), pair.from_pin(pin.aba(m, d, qp, vp, taup)))
        record("forward dynamics + f_ext", w.forward_dynamics(q, v, tau, f_ext=F),
               pair.from_pin(pin.aba(m, d, qp, vp, taup, pair.fext_pin(qp, F))))
        Mp = sym(pin.crba(m, d, qp))
        record("mass matrix", w.mass_matrix(q), pair.from_pin(pair.from_pin(Mp).T))
        Mi = sym(pin.computeMinverse(m, d, qp))
        record("mass matrix inverse", w.mass_matrix_inverse(q), pair.from_pin(pair.from_pin(Mi).T))
        record("bias forces", w.bias_forces(q, v), pair.from_pin(pin.nonLinearEffects(m, d, qp, vp)))
        record("gravity forces", w.gravity_forces(q), pair.from_pin(pin.computeGeneralizedGravity(m, d, qp)))

        pin.framesForwardKinematics(m, d, qp)
        poses = w.body_poses(q)
        for i, fid in enumerate(pair.frame_ids):
            record("body poses", poses[i], d.oMf[fid].homogeneous)
        pin.computeJointJacobians(m, d, qp)
        for i, fid in enumerate(pair.frame_ids):
            for frame, ref in (("world", pin.LOCAL_WORLD_ALIGNED), ("local", pin.LOCAL)):
                Jp = pin.getFrameJacobian(m, d, fid, ref)
                if np.any(Jp):
                    record(f"body Jacobians ({frame})", w.body_jacobian(q, i, frame=frame), pair.from_pin(Jp))
        # Pinocchio leaves the bodies welded to the world (its "universe" inertia) out of the centre of
        # mass and the potential energy; rigidiff counts every body. Add them to Pinocchio's numbers.
        Jc = pin.jacobianCenterOfMass(m, d, qp)
        m_moving, m_welded, c_welded = d.mass[0], m.inertias[0].mass, m.inertias[0].lever
        m_all = m_moving + m_welded
        record("centre of mass", w.center_of_mass(q), (m_moving * d.com[0] + m_welded * c_welded) / m_all)
        record("centre of mass Jacobian", w.center_of_mass_jacobian(q), pair.from_pin(Jc) * m_moving / m_all)
        record("kinetic energy", w.kinetic_energy(q, v), pin.computeKineticEnergy(m, d, qp, vp))
        record("potential energy", w.potential_energy(q),
               pin.computePotentialEnergy(m, d, qp) - m_welded * m.gravity.linear @ c_welded)
    return errors


def timings(pair: Pair, calls: int, rng) -> dict[str, tuple[float, float]]:
    """Median seconds per call, (rigidiff, pinocchio), at one random state."""
    pin, w, m, d = pair.pin, pair.world, pair.model, pair.data
    q = w.random_configuration(rng)
    v, a, tau = rng.normal(size=(3, w.nv))
    qp, vp, ap, taup = pair.q_pin(q), pair.v_pin(v), pair.v_pin(a), pair.v_pin(tau)
    ee = w.nbodies - 1
    fid = pair.frame_ids[ee]
    lwa = pin.LOCAL_WORLD_ALIGNED
    cases = {
        "inverse dynamics": (lambda: w.inverse_dynamics(q, v, a), lambda: pin.rnea(m, d, qp, vp, ap)),
        "forward dynamics": (lambda: w.forward_dynamics(q, v, tau), lambda: pin.aba(m, d, qp, vp, taup)),
        "mass matrix": (lambda: w.mass_matrix(q), lambda: pin.crba(m, d, qp)),
        "mass matrix inverse": (lambda: w.mass_matrix_inverse(q), lambda: pin.computeMinverse(m, d, qp)),
        "bias forces": (lambda: w.bias_forces(q, v), lambda: pin.nonLinearEffects(m, d, qp, vp)),
        "body Jacobians (world)": (lambda: w.body_jacobian(q, ee, frame="world"),
                                   lambda: pin.computeFrameJacobian(m, d, qp, fid, lwa)),
    }
    return {k: (median_call_time(f_rd, calls), median_call_time(f_pin, calls)) for k, (f_rd, f_pin) in cases.items()}


def plot(out: Path, robot: str, times: dict) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    names = list(times)
    y = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(8, 4), constrained_layout=True)
    ax.barh(y - 0.2, [times[n][0] * 1e6 for n in names], height=0.4, label="rigidiff")
    ax.barh(y + 0.2, [times[n][1] * 1e6 for n in names], height=0.4, label="pinocchio")
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set(xlabel="median time per call from Python (us)", title=f"{robot}: rigidiff vs Pinocchio")
    ax.legend()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "pinocchio_timings.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT, robot: str = "panda") -> dict:
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed (pip install pin): nothing to compare against; skipping.")
        return {"skipped": "pinocchio"}
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {"skipped": "example-robot-data"}
    if robot not in ROBOTS:
        raise ValueError(f"unknown robot {robot!r}; choose one of {sorted(ROBOTS)}")
    rel, floating = ROBOTS[robot]
    urdf = robots_dir / rel
    pair = Pair(pin, urdf, robots_dir, floating)
    w = pair.world
    print(f"robot: {robot} ({urdf.name}), rigidiff {rd.__version__}, pinocchio {pin.__version__}")
    print(f"rigidiff nq = {w.nq}, nv = {w.nv}; pinocchio nq = {pair.model.nq}, nv = {pair.model.nv}; "
          f"{pair.n_continuous} continuous joint(s)")
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    print(f"v layout identical to Pinocchio: {yes(pair.same_v_layout)}")
    q_note = "" if pair.n_continuous == 0 else " (continuous joints: the angle here, (cos, sin) in Pinocchio)"
    print(f"q layout identical to Pinocchio: {yes(pair.same_q_layout)}{q_note}")

    rng = np.random.default_rng(0)
    n_states, calls = (20, 3000) if fast else (200, 30000)
    errors = compare(pair, n_states, rng)
    times = timings(pair, calls, rng)

    print()
    print(f"{n_states} random states; error = max |rigidiff - pinocchio| / max |pinocchio|; "
          f"time = median per call from Python")
    print(f"{'quantity':<28} {'max rel. error':>14} {'rigidiff (us)':>14} {'pinocchio (us)':>15} {'rd/pin':>7}")
    for key, err in errors.items():
        if key in times:
            t_rd, t_pin = times[key]
            tail = f"{t_rd * 1e6:>14.2f} {t_pin * 1e6:>15.2f} {t_rd / t_pin:>7.2f}"
        else:
            tail = f"{'-':>14} {'-':>15} {'-':>7}"
        print(f"{key:<28} {err:>14.2e} {tail}")
    worst = max(errors.values())
    print(f"largest relative error: {worst:.2e}")
    pngs = plot(Path(out), robot, times)
    for p in pngs:
        print(f"wrote {p}")
    return {"errors": errors, "times": times, "worst": worst, "same_v_layout": pair.same_v_layout,
            "same_q_layout": pair.same_q_layout, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="fewer states and calls (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNG (default: examples/out)")
    parser.add_argument("--robot", default="panda", choices=sorted(ROBOTS), help="robot of example-robot-data")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out, robot=args.robot)
    sys.exit(0)

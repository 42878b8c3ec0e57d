"""A Franka Panda pushes a box across the ground, and gradients flow through the contact.

The robot is example-robot-data's Panda, loaded with its collision geometry, its base fixed on the
ground. A 0.1 m cube of 0.5 kg rests on the ground in front of it (box-ground friction 0.5). The hand
points down with its fingers closed, and the rubber pad of a fingertip pushes the box 10 cm (15 cm
without --fast) along x.

Collision geometry: the URDF's own. The links and the hand are STL meshes that are not convex (they
collide face by face with the box and through their convex hulls with the ground), the finger pads are
URDF boxes; every shape can touch every other, and the report lists every pair of bodies that touched.
The pusher is the pad of a fingertip. Self-collision stays off (the skeleton's default). Choices that
keep the pad-box contact simple:

- the fingers are welded to the hand, closed (see load_panda);
- the hand is pitched forward by 40 degrees, so that the pads lead and the rest of the fingers and the
  hand lean back, clear of the box (the rest of the fingers stay 9 mm or more from it, the hand 2 cm);
- it is turned by 5 degrees about the vertical, so that a single corner of one pad leads: one contact
  point, on the box's centre line so that the box does not turn. With the pads' bottom edges parallel
  to the box's face, four nearly aligned contact points would share the push;
- the pads' rubber has friction 1 (the world combines coefficients with "max"), so that the pad grips
  the box's face instead of sliding down it;
- contacts are detected 1 mm ahead (``contact_options(margin=1e-3)``). With the default margin of 0 a
  contact exists only while the shapes overlap, and a sustained push whose overlap shrinks to zero drops
  out for single steps, each followed by a double impulse.

The controller is computed in the script. The TCP follows a Cartesian path of minimum-jerk segments;
inverse kinematics with the world's body Jacobians turns it into a joint trajectory q_ref(t), and
computed-torque control tracks it:

    tau = ID(q, v, qdd_ref + Kp (q_ref - q) + Kd (qd_ref - v))

with ID the world's inverse dynamics (gravity, Coriolis and inertia of the arm). The box's dofs get no
torque. The feedback runs in a Python step loop that reads ``world.last_contacts()`` every step.

The report: the box's displacement, how level it stayed, the contacts (which bodies, how many steps,
the deepest penetration), and two closed forms on the sliding box: Coulomb's law (the ground's friction
impulse is mu times its normal impulse) and the vertical balance (the ground carries the weight plus
the pad's downward force). Then the torques, from just before the pad touches the box to the end, are
replayed with ``world.rollout(..., record=True)``, and one ``traj.backward`` gives the gradient of the
box's final x with respect to every one of them. Central finite differences of a few entries check it;
their step is small enough to keep the contact mode of every step (the class of every LCP row, which
the gradient holds fixed), and the script verifies that it does.

Run ``python examples/panda_pushes_a_box.py [--fast] [--out DIR]``; it writes ``panda_push.png`` to DIR.
In fast mode the arm starts at rest with its pad 1 cm behind the box. Needs ``example-robot-data``
(pip install example-robot-data); without it the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

import rigidiff as rd

DEFAULT_OUT = Path(__file__).resolve().parent / "out"
URDF = "panda_description/urdf/panda.urdf"

DT = 1e-3
BOX_SIZE = 0.1
BOX_MASS = 0.5
FRICTION = 0.5  # the ground's and the box's
PAD_FRICTION = 1.0  # the fingers' rubber pads; the world combines coefficients with "max"
BOX_START = np.array([0.7, 0.0, BOX_SIZE / 2])
PUSHER = ("panda_leftfinger", "panda_rightfinger")
TCP = "panda_hand_tcp"  # between the pads
Q_HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # the "ready" pose (IK starts there)
TILT = np.radians(40.0)
YAW = np.radians(5.0)
CONTACT_HEIGHT = 0.06  # where the pad presses: a push higher than 0.1 m would tip the box (mu = 0.5)
GAP = 0.01  # between the pad and the box when the push starts
MARGIN = 1e-3  # contact detection distance, m
KP, KD = 900.0, 60.0  # per unit of joint acceleration: critically damped at 30 rad/s
GRADIENT_EPS = 1e-3  # N m, on one torque of one step: small enough to keep every contact mode (checked)


def hand_orientation(tilt: float, yaw: float) -> np.ndarray:
    """Rotation of the hand: pointing down (its z axis along -z, its x along x), pitched by `tilt` about y
    (fingertips forward), then turned by `yaw` about z."""
    c, s, cy, sy = np.cos(tilt), np.sin(tilt), np.cos(yaw), np.sin(yaw)
    Ry = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ np.diag([1.0, -1.0, -1.0])


R_HAND = hand_orientation(TILT, YAW)




# ------------------------------------------------------------------------------------------ the world


def load_panda(robots_dir: Path) -> rd.Skeleton:
    """The Panda with its collision shapes, its gripper closed and welded, its pads' friction PAD_FRICTION.

    The URDF's second finger mimics the first, a constraint rigidiff does not model: loaded as two
    independent 15 g prismatic joints, the fingers would be pushed apart or together by the friction of
    the box. They are welded to the hand instead (fixed joints, closed), as a gripper holding its fingers
    shut behaves."""
    root = ET.parse(robots_dir / URDF).getroot()
    for joint in root.iter("joint"):
        if joint.get("name", "").startswith("panda_finger_joint"):
            joint.set("type", "fixed")
            for tag in ("axis", "limit", "mimic", "dynamics"):
                for element in joint.findall(tag):
                    joint.remove(element)
    panda = rd.load_urdf(ET.tostring(root, encoding="unicode"), package_dirs=[robots_dir], load_geometry=True)
    for name in PUSHER:
        body = panda.body(name)
        body.shapes[:] = [dataclasses.replace(s, friction=PAD_FRICTION) if s.collide else s for s in body.shapes]
    return panda


def build_world(robots_dir: Path) -> rd.World:
    """Ground, Panda (fixed base at the origin) and a free box resting at BOX_START."""
    world = rd.World(dt=DT)
    world.add_ground(friction=FRICTION)
    world.add_skeleton(load_panda(robots_dir))
    box = rd.Skeleton("box")
    shape = rd.Box((BOX_SIZE, BOX_SIZE, BOX_SIZE))
    body = box.add_body("box", joint=rd.FreeJoint("box_free"), inertia=rd.Inertia.from_shape(shape, mass=BOX_MASS))
    body.add_shape(shape, friction=FRICTION)
    world.add_skeleton(box)
    # box-ground: 0.5, pad-box: the rubber's 1.0; contacts seen MARGIN ahead (see the module docstring)
    world.contact_options(friction_combine="max", margin=MARGIN)
    return world


def box_index(world: rd.World) -> int:
    """Index of the box's x in q (y, z and the quaternion follow)."""
    return world.joint("box_free").q_index


def arm_dofs(world: rd.World) -> slice:
    """v indices of the Panda's 7 joints: everything before the box."""
    return slice(0, world.joint("box_free").v_index)


# ------------------------------------------------------------------------------------------ reference


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Rotation vector of a rotation matrix (angle below pi)."""
    angle = np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return 0.5 * w if angle < 1e-8 else angle / (2.0 * np.sin(angle)) * w


def inverse_kinematics(world: rd.World, q: np.ndarray, position, tol: float = 1e-10, iters: int = 200) -> np.ndarray:
    """q with the TCP at `position` and the hand at R_HAND: damped least squares on the arm joints from q,
    with a pull toward Q_HOME in the null space of the task while far from the target (near it the steps
    are minimum-norm, so that a warm-started path of targets gives a smooth joint path)."""
    q = q.copy()
    arm = arm_dofs(world)
    lower = np.array([world.joint(f"panda_joint{i}").lower[0] for i in range(1, 8)])
    upper = np.array([world.joint(f"panda_joint{i}").upper[0] for i in range(1, 8)])
    for _ in range(iters):
        T = world.body_pose(q, TCP)
        err = np.concatenate([position - T[:3, 3], rotation_log(R_HAND @ T[:3, :3].T)])
        if np.linalg.norm(err) < tol:
            return q
        J = world.body_jacobian(q, TCP)[:, arm]  # (linear, angular) in world axes
        J_pinv = J.T @ np.linalg.inv(J @ J.T + 1e-9 * np.eye(6))
        dq = J_pinv @ err
        if np.linalg.norm(err) > 1e-4:
            dq += 0.1 * (np.eye(7) - J_pinv @ J) @ (Q_HOME - q[arm])
        dq *= min(1.0, 0.2 / np.abs(dq).max())
        q[arm] = np.clip(q[arm] + dq, lower, upper)
    raise RuntimeError(f"inverse kinematics did not reach {position} (error {np.linalg.norm(err):.2e})")


def tcp_path(waypoints: list, steps: int) -> np.ndarray:
    """(steps + 1, 3) TCP positions: minimum-jerk segments between the (time, position) waypoints."""
    t = np.arange(steps + 1) * DT
    P = np.empty((steps + 1, 3))
    P[:] = waypoints[0][1]
    for (t0, p0), (t1, p1) in zip(waypoints[:-1], waypoints[1:]):
        s = np.clip((t[t >= t0] - t0) / (t1 - t0), 0.0, 1.0)
        P[t >= t0] = p0 + (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None] * (np.asarray(p1) - p0)
    return P


def joint_reference(world: rd.World, q_start: np.ndarray, P: np.ndarray):
    """q_ref (T+1, nq) by IK along the TCP path (warm-started), with its velocity and acceleration."""
    Q = np.empty((len(P), world.nq))
    q = q_start
    for k, p in enumerate(P):
        q = inverse_kinematics(world, q, p)
        Q[k] = q
    V = np.gradient(Q, DT, axis=0)
    return Q, V, np.gradient(V, DT, axis=0)


def pad_lead(world: rd.World) -> np.ndarray:
    """(3,) offset, in world axes, from the TCP to the foremost (largest x) corner of the fingers' collision
    boxes with the hand at R_HAND (a constant: the fingers are welded)."""
    q = world.neutral_configuration()
    tcp_inverse = np.linalg.inv(world.body_pose(q, TCP))
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    points = []
    for name in PUSHER:
        finger = tcp_inverse @ world.body_pose(q, name)  # the finger in the TCP frame
        for inst in world.body(name).shapes:
            if inst.collide and isinstance(inst.shape, rd.Box):
                local = inst.origin.translation + (corners * inst.shape.half_extents) @ inst.origin.rotation.T
                points.append((local @ finger[:3, :3].T + finger[:3, 3]) @ R_HAND.T)
    points = np.concatenate(points)
    return points[np.argmax(points[:, 0])]


def scenario(world: rd.World, fast: bool):
    """Initial state, TCP waypoints [(time, position)], and the times the push starts and ends."""
    q = world.neutral_configuration()
    q[box_index(world):box_index(world) + 3] = BOX_START
    contact = np.array([BOX_START[0] - BOX_SIZE / 2, BOX_START[1], CONTACT_HEIGHT])  # on the box's back face
    behind = contact - pad_lead(world) - [GAP, 0.0, 0.0]  # the TCP with the pad GAP behind the box
    if fast:  # at rest behind the box, then 11 cm along x: a 10 cm push
        q = inverse_kinematics(world, np.concatenate([Q_HOME, q[7:]]), behind)
        end = behind + [GAP + 0.10, 0.0, 0.0]
        return q, [(0.0, behind), (0.1, behind), (0.8, end), (0.9, end)], 0.1, 0.8
    # at rest 20 cm above, down behind the box, then 16 cm along x: a 15 cm push
    above = behind + [0.0, 0.0, 0.2]
    q = inverse_kinematics(world, np.concatenate([Q_HOME, q[7:]]), above)
    end = behind + [GAP + 0.15, 0.0, 0.0]
    return q, [(0.0, above), (0.2, above), (0.8, behind), (1.0, behind), (2.2, end), (2.5, end)], 1.0, 2.2


# ------------------------------------------------------------------------------------------ simulation


@dataclasses.dataclass
class Run:
    Q: np.ndarray  # (T+1, nq)
    V: np.ndarray  # (T+1, nv)
    taus: np.ndarray  # (T, nv)
    P_ref: np.ndarray  # (T+1, 3) TCP reference
    pad_contacts: np.ndarray  # (T,) number of pad-box contacts of each step
    pad_force: np.ndarray  # (T, 3) force of the pads on the box (impulse / dt), N
    ground_normal: np.ndarray  # (T,) normal impulse of the ground on the box, N s
    ground_friction: np.ndarray  # (T, 3) friction impulse of the ground on the box, N s
    max_penetration: float  # deepest contact of the run, m
    pairs: set  # the pairs of bodies that touched


def simulate(world: rd.World, q0: np.ndarray, waypoints: list, steps: int) -> Run:
    """The closed loop: computed-torque control along the IK reference, one world.step at a time."""
    P = tcp_path(waypoints, steps)
    Q_ref, V_ref, A_ref = joint_reference(world, q0, P)
    arm = arm_dofs(world)
    q, v = q0.copy(), np.zeros(world.nv)
    Q, V, taus = [q], [v], []
    n_pad, pad_force = np.zeros(steps, dtype=int), np.zeros((steps, 3))
    ground_n, ground_f = np.zeros(steps), np.zeros((steps, 3))
    deepest, pairs = 0.0, set()
    for k in range(steps):
        a = np.zeros(world.nv)
        a[arm] = A_ref[k, arm] + KP * (Q_ref[k, arm] - q[arm]) + KD * (V_ref[k, arm] - v[arm])
        tau = np.zeros(world.nv)
        tau[arm] = world.inverse_dynamics(q, v, a)[arm]  # the box's dofs are not actuated
        q, v = world.step(q, v, tau)
        Q.append(q)
        V.append(v)
        taus.append(tau)
        c = world.last_contacts()
        for i in range(len(c)):
            a_name, b_name = c.body_a[i], c.body_b[i]
            pairs.add(tuple(sorted((a_name, b_name))))
            impulse_on_a = c.normal_impulses[i] * c.normals[i] + c.friction_impulses[i]
            if a_name in PUSHER and b_name == "box":
                n_pad[k] += 1
                pad_force[k] -= impulse_on_a / world.dt
            elif a_name == "box" and b_name == "ground":
                ground_n[k] += c.normal_impulses[i]
                ground_f[k] += c.friction_impulses[i]
        if len(c):
            deepest = max(deepest, float(-c.distances.min()))
    return Run(np.array(Q), np.array(V), np.array(taus), P, n_pad, pad_force, ground_n, ground_f, deepest, pairs)


def box_tilt(q_box: np.ndarray) -> float:
    """Angle (rad) between the box's z axis and the world's."""
    R = rd.Transform(rotation=q_box[3:7]).rotation
    return float(np.arccos(np.clip(R[2, 2], -1.0, 1.0)))


# ------------------------------------------------------------------------------------------ gradients


def forget_contacts(world: rd.World, q0) -> None:
    """One step of the box lifted 1 m, out of contact. The contact solve starts from the classes of the
    world's previous step (a warm start); where the LCP has several solutions, like the self-balancing
    frictions of a box at rest on four corners, that history picks one. After a step without contacts
    every replay starts alike."""
    q = q0.copy()
    q[box_index(world) + 2] += 1.0
    world.step(q, np.zeros(world.nv), np.zeros(world.nv))


def replay(world: rd.World, q0, v0, taus, record: bool = False):
    """world.rollout, from a world that remembers no contact."""
    forget_contacts(world, q0)
    return world.rollout(q0, v0, taus, record=record)


def contact_modes(world: rd.World, q0, v0, taus) -> list:
    """The kind and class of every constraint row, step by step: the contact mode the gradient holds fixed."""
    forget_contacts(world, q0)
    q, v, modes = q0, v0, []
    for tau in taus:
        q, v = world.step(q, v, tau)
        c = world.last_contacts()
        modes.append((tuple(c.row_kinds), tuple(c.row_classes)))
    return modes


def gradient_check(world: rd.World, q0, v0, taus, entries, eps: float):
    """Gradient of the box's final x w.r.t. every torque (one reverse pass), and central differences of the
    `entries` (step, joint name). Returns the recorded trajectory, the gradient, the time of the reverse
    pass and rows (step, joint, analytic, finite difference, contact mode kept)."""
    ix = box_index(world)
    traj = replay(world, q0, v0, taus, record=True)
    dL_dQ = np.zeros((len(taus) + 1, world.nq))
    dL_dQ[-1, ix] = 1.0
    t0 = time.perf_counter()
    grad = traj.backward(dL_dQ=dL_dQ, coordinates=True)
    t_backward = time.perf_counter() - t0
    modes = contact_modes(world, q0, v0, taus)
    rows = []
    for k, name in entries:
        j = world.joint(name).v_index
        x, kept = [], True
        for sign in (1.0, -1.0):
            T = taus.copy()
            T[k, j] += sign * eps
            x.append(replay(world, q0, v0, T)[0][-1, ix])
            kept &= contact_modes(world, q0, v0, T) == modes
        rows.append((k, name, grad.tau[k, j], (x[0] - x[1]) / (2 * eps), kept))
    return traj, grad, t_backward, rows


# ------------------------------------------------------------------------------------------ report


def plot(out: Path, run: Run, ix: int, push: tuple) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    t = np.arange(len(run.Q)) * DT
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    axes[0].plot(t, run.Q[:, ix] - run.Q[0, ix], label="box")
    axes[0].plot(t, run.P_ref[:, 0] - run.P_ref[0, 0], "--", label="TCP reference")
    for x in push:
        axes[0].axvline(x, color="gray", lw=0.8)
    axes[0].set(xlabel="time (s)", ylabel="x displacement (m)", title="the pad pushes the box")
    axes[0].legend()
    touching = run.pad_contacts > 0
    axes[1].plot(t[1:][touching], run.pad_force[touching, 0], ".", ms=2, label="pad on box, x")
    axes[1].plot(t[1:][touching], run.pad_force[touching, 2], ".", ms=2, label="pad on box, z")
    axes[1].plot(t[1:], -run.ground_friction[:, 0] / DT, label="ground friction on box, -x")
    axes[1].set(xlabel="time (s)", ylabel="force (N)", ylim=(-10, 10), title="contact forces on the box")
    axes[1].legend()
    path = out / "panda_push.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return [path]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    world = build_world(robots_dir)
    ix, iv = box_index(world), world.joint("box_free").v_index
    q0, waypoints, push_start, push_end = scenario(world, fast)
    steps = int(round(waypoints[-1][0] / DT))
    t0 = time.perf_counter()
    run = simulate(world, q0, waypoints, steps)
    elapsed = time.perf_counter() - t0
    print(f"Panda ({world.joint('box_free').v_index} joints, fingers welded) pushes a {BOX_SIZE:g} m, "
          f"{BOX_MASS:g} kg box; {steps * DT:g} s in {steps} steps of {DT * 1e3:g} ms ({elapsed:.2f} s)")

    box0, box1 = run.Q[0, ix:ix + 7], run.Q[-1, ix:ix + 7]
    z_dev = np.abs(run.Q[:, ix + 2] - BOX_SIZE / 2).max()
    tilt = max(box_tilt(q[ix:ix + 7]) for q in run.Q)
    tcp_err = max(np.linalg.norm(world.body_pose(q, TCP)[:3, 3] - p) for q, p in zip(run.Q[::10], run.P_ref[::10]))
    touching = np.flatnonzero(run.pad_contacts)
    sliding = touching[np.abs(run.V[touching + 1, iv]) > 1e-3]
    coulomb = np.abs(run.ground_friction[sliding, 0]).sum() / run.ground_normal[sliding].sum()
    weight = BOX_MASS * 9.81
    vertical = run.ground_normal[sliding].sum() / ((weight - run.pad_force[sliding, 2]).sum() * DT)
    print(f"box displacement along x: {box1[0] - box0[0]:.4f} m (sideways {box1[1] - box0[1]:+.1e} m)")
    print(f"box height: max deviation from resting {z_dev:.1e} m; max tilt {np.degrees(tilt):.1e} deg")
    print(f"pad-box contacts during {len(touching)} steps (t = {(touching[0] + 1) * DT:.3f} to "
          f"{(touching[-1] + 1) * DT:.3f} s), at most {run.pad_contacts.max()} per step")
    print("bodies in contact: " + ", ".join("-".join(p) for p in sorted(run.pairs)))
    print(f"max penetration: {run.max_penetration:.1e} m")
    print(f"max TCP tracking error: {tcp_err * 1e3:.2f} mm")
    print(f"box sliding ({len(sliding)} steps): median force of the pad (x, z) = "
          f"({np.median(run.pad_force[sliding, 0]):.2f}, {np.median(run.pad_force[sliding, 2]):.2f}) N")
    print(f"Coulomb: ground friction / normal impulse while sliding: {coulomb:.6f} (mu = {FRICTION:g})")
    print(f"vertical balance: ground normal impulse / ((m g - pad force z) dt): {vertical:.6f}")

    # gradients: replay from 20 steps before the pad touches the box to the end (the box at rest), open
    # loop; one reverse pass gives the gradient for every torque
    k0 = max(int(touching[0]) - 20, 0)
    window = run.taus[k0:]
    n, m = len(window), int(round(push_end / DT)) - k0  # steps replayed, of them before the TCP stops
    entries = [(10, "panda_joint2"), (m // 4, "panda_joint2"), (m // 2, "panda_joint4"), (m // 2, "panda_joint1"),
               (3 * m // 4, "panda_joint6"), (m - 40, "panda_joint7")]
    traj, grad, t_back, rows = gradient_check(world, run.Q[k0], run.V[k0], window, entries, GRADIENT_EPS)
    replay = np.abs(traj.q - run.Q[k0:]).max()
    print(f"recorded rollout of the push: {n} steps, {len(traj.constrained_steps)} with constraints; "
          f"replay vs step loop: max difference {replay:.1e}")
    print(f"gradient of the box's final x w.r.t. {grad.tau.size} torques by traj.backward in {t_back:.3f} s")
    print(f"{'step':>6} {'joint':>13} {'analytic':>14} {'central FD':>14} {'rel. error':>10}  mode kept")
    worst = 0.0
    for k, name, ana, fd, kept in rows:
        rel = abs(ana - fd) / max(abs(fd), 1e-12)
        worst = max(worst, rel)
        print(f"{k:>6} {name:>13} {ana:>+14.7e} {fd:>+14.7e} {rel:>10.1e}  {'yes' if kept else 'NO'}")
    modes = "every contact mode kept" if all(r[4] for r in rows) else "SOME CONTACT MODES CHANGED"
    print(f"gradient vs central differences (eps = {GRADIENT_EPS:g} N m): max relative error {worst:.1e}; {modes}")

    pngs = plot(Path(out), run, ix, (push_start, push_end))
    for p in pngs:
        print(f"wrote {p}")
    return {"run": run, "world": world, "rows": rows, "pngs": pngs}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the PNG (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)

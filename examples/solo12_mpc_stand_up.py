"""Solo12 stands up under MPC: iLQR on the exact step Jacobians, through the contacts of its feet.

The robot is example-robot-data's Solo12 (a floating base and 4 legs of 3 joints, 2.5 kg), with its
collision meshes, on the ground (friction 1). It starts crouched: legs folded (hip 1.2 rad, knee
-2.4 rad), base 13 cm high, resting on its four feet. A model-predictive controller drives the base
up to its standing height (hip 0.8 rad, knee -1.6 rad: 24 cm) and holds it there:

- every 5 ms step, ``rd.mpc.MPC`` solves a fresh ``rd.trajopt.Problem`` over the next 40 steps
  (0.2 s) with 2 iLQR iterations, warm-started from the previous plan (20 iterations for the first
  plan);
- torques act on the 12 leg joints only (``set_actuated`` with their names), bounded by the URDF's
  effort limits capped at the 2.7 N m of Solo's motors (the file says 1000 N m);
- the cost tracks a reference that rises from the crouch to the standing posture in RISE seconds
  (a minimum-jerk blend of base height and joint angles, upright, at rest), with a price on the
  torques' distance from the support torques: the joint torques that hold the current posture with
  the weight shared by the four feet (a contact-consistent gravity compensation). The same support
  torques are the first guess of every plan.
- the plant is a second world, built alike, stepped with the controller's torques; at t = 0.8 s a
  sideways push of 10 N for 0.1 s hits the base while it stands.

The iLQR linearises each step with the contact mode held fixed (docs/contact.md), so these choices
matter:

1. Feet. The URDF's feet are meshes, rounded polyhedra. Resting, a foot stands on its lowest vertex
   (speculative contacts stop it 5e-5 m deep, docs/contact.md), but as it rolls or presses harder
   its neighbouring vertices touch too, up to 4; held fixed, 4 contacts weld a foot to the ground,
   and the legs, closed chains from the base to welded feet, cannot move at all in the linear model
   (d v'/d tau drops to rank 1). Which vertices touch changes from step to step. A sphere of the
   foot's radius (16 mm) in place of each foot's collision mesh always touches at one point, a
   pinned but free to roll foot, and d v'/d tau keeps its full rank 6: the base's 6 dofs that the
   legs can move (the report measures both at the crouch). The other collision meshes stay.
2. A rising reference, rather than the standing target from the first step: asked to stand at once,
   iLQR pushes the torques to their bounds, the feet slip and lift in the trial rollouts while the
   linear model keeps them pinned, the line search accepts only short steps (1/16 of the full one),
   and single replans took up to 12 s. With the reference every replan takes tens of ms.
3. The support torques as first guess and torque target: from zero torques the first plan starts
   from a robot collapsing onto the ground, with many mesh contacts, and makes little progress.
4. The step: 5 ms. With 10 ms (and a horizon of 20 steps) the feet slip by up to 9 mm, lift off
   for a step, and some replans take more than a second; with 20 ms the rollout of the first guess
   diverges.
5. The horizon: 40 steps. The full run compares 20, 40 and 60: 20 does as well and replans twice as
   fast; with 60 the plans of the rise ask for torques that make the feet slip and lift, and single
   replans take seconds.

The report: the rank of the linear model with either kind of foot, the base height at the start and
at the end against the target, the time to come within 1 cm of it for good, the base's tilt and
height error after the push, the plant's contacts (which bodies touched the ground, the steps with a
foot at its friction limit, how far the soles slid), the peak torque, and the time of the replans
(mean, max) for the horizon used.

Run ``python examples/solo12_mpc_stand_up.py [--fast] [--out DIR]``; it writes
``solo12_stand_up.png`` (heights, tilt, torques, replan times) and ``solo12_stand_up_frames.png`` to
DIR. Fast mode runs 1.2 s of control (0.3 s past the push); the full run 3 s, then 1.5 s with each horizon of the
table.
Needs ``example-robot-data`` (pip install example-robot-data); without it the script says so and
exits 0.
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
URDF = "solo_description/robots/solo12.urdf"

DT = 5e-3
FRICTION = 1.0  # ground and feet
FOOT_RADIUS = 0.016  # the foot mesh's half-width in its sagittal plane
MOTOR_LIMIT = 2.7  # N m: Solo's actuators (the URDF's effort limits say 1000 N m)
PEN = 2e-4  # initial depth of the feet in the ground, m
CROUCH = (1.2, -2.4)  # hip (HFE) and knee (KFE) angles of the front legs; the hind legs mirror them
STAND = (0.8, -1.6)
RISE = 0.5  # s: duration of the reference's rise
HORIZON = 40  # steps (0.2 s) planned ahead at every replan
ITERATIONS, FIRST_ITERATIONS = 2, 20  # iLQR iterations per replan, and for the first plan
TOLERANCE = 0.01  # m: "reached" means the base height within 1 cm of the target
LEGS = ("FL", "FR", "HL", "HR")
FEET = tuple(f"{leg}_FOOT" for leg in LEGS)
LEG_JOINTS = tuple(f"{leg}_{j}" for leg in LEGS for j in ("HAA", "HFE", "KFE"))
# state cost weights on the tangent space: base position (x, y, z), base rotation, the 12 joints
Q_WEIGHT = np.r_[500.0, 500.0, 5000.0, [1000.0] * 3, [1.0] * 12]
V_WEIGHT = np.r_[[1.0] * 6, [0.1] * 12]
TORQUE_WEIGHT = 1e-2
PUSH = (0.8, 0.1, 10.0)  # a sideways push on the base (along y): start (s), duration (s), force (N)




# ------------------------------------------------------------------------------------------ the robot


def load_solo(robots_dir: Path, sphere_feet: bool = True) -> rd.Skeleton:
    """Solo12 with a floating base and its collision meshes; with ``sphere_feet`` each foot's collision
    mesh is replaced by a sphere of FOOT_RADIUS (the visual mesh stays)."""
    solo = rd.load_urdf(robots_dir / URDF, floating_base=True, package_dirs=[robots_dir])
    for name in FEET:
        body = solo.body(name)
        if sphere_feet:
            body.shapes[:] = [s for s in body.shapes if not s.collide]
            body.add_shape(rd.Sphere(FOOT_RADIUS), friction=FRICTION, visual=False, name=f"{name}/sole")
    return solo


def build_world(robots_dir: Path, sphere_feet: bool = True) -> rd.World:
    world = rd.World(dt=DT)
    world.add_ground(friction=FRICTION)
    world.add_skeleton(load_solo(robots_dir, sphere_feet))
    return world


def posture(world: rd.World, hip: float, knee: float) -> np.ndarray:
    """q with the legs at (0, hip, knee) (the hind legs mirrored), the base level and the soles PEN deep."""
    legs = np.tile([0.0, hip, knee], 4) * np.repeat([1.0, 1.0, -1.0, -1.0], 3)
    q = np.concatenate([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], legs])
    q[2] = FOOT_RADIUS - PEN - min(world.body_pose(q, f)[2, 3] for f in FEET)
    return q


def support_torques(world: rd.World, q: np.ndarray) -> np.ndarray:
    """(nv,) joint torques that hold q at rest on the four feet: the base's 6 equations of balance
    J_base^T f = g_base solved for the 12 foot forces f (the least-norm solution), then tau = g - J^T f
    on the joints (zero on the base)."""
    g = world.gravity_forces(q)
    J = np.vstack([world.body_jacobian(q, f)[:3] for f in FEET])  # (12, nv): the feet's velocities
    forces = np.linalg.lstsq(J[:, :6].T, g[:6], rcond=None)[0]
    tau = g - J.T @ forces
    tau[:6] = 0.0
    return tau


def held_mode_rank(world: rd.World, q: np.ndarray) -> int:
    """Numerical rank of d v' / d tau (leg torques) at q, contact mode held fixed."""
    J = world.step_jacobians(q, np.zeros(world.nv), support_torques(world, q))
    s = np.linalg.svd(J.dv_dtau[:, 6:], compute_uv=False)
    return int(np.sum(s > 1e-8 * s[0]))


def foot_slip(world: rd.World, Q: np.ndarray, V: np.ndarray) -> np.ndarray:
    """(4,) distance each foot's sole slid on the ground: the horizontal speed of the sole's lowest point
    (not of the rolling sphere's centre) times dt, summed over the trajectory."""
    slid = np.zeros(len(FEET))
    for q, v in zip(Q[:-1], V[1:]):  # the contact rows constrain v' at the start of its step
        for i, name in enumerate(FEET):
            J = world.body_jacobian(q, name)  # velocity of the sole's centre and angular velocity, world axes
            lin, ang = J[:3] @ v, J[3:] @ v
            slid[i] += np.linalg.norm((lin + np.cross(ang, [0.0, 0.0, -FOOT_RADIUS]))[:2]) * world.dt
    return slid


def time_to_reach(res: dict) -> float:
    """The time from which the base height stays within TOLERANCE of the target (nan if it ends outside)."""
    err = np.abs(res["Q"][:, 2] - res["q_stand"][2])
    outside = np.flatnonzero(err > TOLERANCE)
    if err[-1] > TOLERANCE:
        return float("nan")
    return float(outside[-1] + 1) * DT if len(outside) else 0.0


def tilt_deg(q: np.ndarray) -> float:
    """Angle between the base's z axis and the vertical, degrees."""
    R = rd.Transform(rotation=q[3:7]).rotation
    return float(np.degrees(np.arccos(np.clip(R[2, 2], -1.0, 1.0))))


# ------------------------------------------------------------------------------------------ the MPC


def minimum_jerk(s):
    s = np.clip(s, 0.0, 1.0)
    return s**3 * (10.0 - 15.0 * s + 6.0 * s**2)


def torque_bounds(world: rd.World) -> np.ndarray:
    """(nv,) torque bound per dof: the URDF's effort limit capped at MOTOR_LIMIT on the legs, 0 on the base."""
    bound = np.zeros(world.nv)
    for name in LEG_JOINTS:
        j = world.joint(name)
        bound[j.v_index] = min(float(j.effort_limit[0]), MOTOR_LIMIT)
    return bound


def make_controller(world: rd.World, q_start: np.ndarray, q_stand: np.ndarray, horizon: int) -> rd.mpc.MPC:
    """The MPC: track the rise from q_start to q_stand, torques near the support torques, legs only."""
    bound = torque_bounds(world)

    def reference(t: float) -> np.ndarray:
        s = minimum_jerk(t / RISE)
        q = q_start + s * (q_stand - q_start)
        q[3:7] = q_stand[3:7]  # upright
        return q

    def setup(prob: rd.trajopt.Problem) -> None:
        ref = np.array([reference(mpc.time + k * world.dt) for k in range(prob.T + 1)])
        support = support_torques(world, prob.q0)
        prob.add_state_cost(q_target=ref, v_target=np.zeros(world.nv), q_weight=Q_WEIGHT, v_weight=V_WEIGHT)
        prob.add_control_cost(TORQUE_WEIGHT, tau_target=support)
        prob.set_control_bounds(-bound, bound)
        prob.set_actuated(list(LEG_JOINTS))
        prob.set_initial_guess(support)

    mpc = rd.mpc.MPC(world, horizon, setup, method="ilqr", iterations=ITERATIONS, first_iterations=FIRST_ITERATIONS)
    return mpc  # setup reads mpc.time: the seconds since the first call


def settle(world: rd.World, q: np.ndarray, steps: int = 40):
    """Let the crouched robot come to rest on its feet, its posture held by PD on the support torques."""
    v = np.zeros(world.nv)
    target = q[7:].copy()
    for _ in range(steps):
        tau = support_torques(world, q)
        tau[6:] += 5.0 * (target - q[7:]) - 0.2 * v[6:]
        q, v = world.step(q, v, tau)
    return q, v


def run(model: rd.World, plant: rd.World, horizon: int, duration: float) -> dict:
    """The closed loop: the MPC plans on ``model``, the plant steps with its torques and the push."""
    q, v = settle(plant, posture(plant, *CROUCH))
    q_stand = posture(plant, *STAND)
    mpc = make_controller(model, q, q_stand, horizon)
    steps = int(round(duration / DT))
    Q, V, taus = [q], [v], []
    touched, at_friction_limit, feet_down = set(), 0, []
    base = plant.body_index("base_link")
    t0 = time.perf_counter()
    for k in range(steps):
        tau = mpc(q, v)
        f_ext = np.zeros((plant.nbodies, 6))
        if PUSH[0] <= k * DT < PUSH[0] + PUSH[1]:
            f_ext[base, 1] = PUSH[2]
        q, v = plant.step(q, v, tau, f_ext=f_ext)
        Q.append(q)
        V.append(v)
        taus.append(tau)
        c = plant.last_contacts()
        # contacts that pushed (speculative ones near the ground that did not close carry no impulse)
        pushing = c.normal_impulses > 0.0
        touched.update(b for b, p in zip(c.body_a, pushing) if p)
        feet_down.append(len({b for b, p in zip(c.body_a, pushing) if p} & set(FEET)))
        contact = -1
        for kind, cls in zip(c.row_kinds, c.row_classes):  # per contact: its normal row, then its friction rows
            contact += kind == "normal"
            if kind == "friction" and pushing[contact] and cls != "clamping":
                at_friction_limit += 1
                break
    wall = time.perf_counter() - t0
    return {"Q": np.array(Q), "V": np.array(V), "tau": np.array(taus), "q_stand": q_stand,
            "replan": np.array(mpc.replan_times), "touched": touched, "at_friction_limit": at_friction_limit,
            "feet_down": np.array(feet_down), "wall": wall, "limit": torque_bounds(model), "model": model}


# ------------------------------------------------------------------------------------------ report


def plot(out: Path, res: dict, horizon: int) -> list[Path]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plots written")
        return []
    out.mkdir(parents=True, exist_ok=True)
    Q, tau = res["Q"], res["tau"]
    t = np.arange(len(Q)) * DT
    q0, qs = Q[0], res["q_stand"]
    ref = q0[2] + minimum_jerk(t / RISE) * (qs[2] - q0[2])
    fig, ax = plt.subplots(2, 2, figsize=(12, 7), constrained_layout=True)
    ax[0, 0].plot(t, Q[:, 2], label="base height")
    ax[0, 0].plot(t, ref, "--", label="reference")
    ax[0, 0].axhspan(qs[2] - TOLERANCE, qs[2] + TOLERANCE, color="green", alpha=0.15, label="target +- 1 cm")
    ax[0, 0].set(title="base height", xlabel="time (s)", ylabel="m")
    ax[0, 0].legend()
    ax[0, 1].plot(t, [tilt_deg(q) for q in Q])
    ax[0, 1].axvspan(PUSH[0], PUSH[0] + PUSH[1], color="red", alpha=0.2, label="push")
    ax[0, 1].set(title="base tilt", xlabel="time (s)", ylabel="deg")
    ax[0, 1].legend()
    for k, name in enumerate(LEG_JOINTS[:3]):
        ax[1, 0].plot(t[1:], tau[:, 6 + k], label=f"FL {name[3:]}")
    ax[1, 0].axhline(MOTOR_LIMIT, color="gray", lw=0.8)
    ax[1, 0].axhline(-MOTOR_LIMIT, color="gray", lw=0.8)
    ax[1, 0].set(title="front-left leg torques (bounds in gray)", xlabel="time (s)", ylabel="N m")
    ax[1, 0].legend()
    ax[1, 1].plot(t[:len(res["replan"])], res["replan"] * 1e3, ".", ms=3)
    ax[1, 1].set(title=f"replan time (horizon {horizon} steps, {ITERATIONS} iLQR iterations)", xlabel="time (s)",
                 ylabel="ms", ylim=(0, None))
    path = out / "solo12_stand_up.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    frames = rd.viz.frame_strip(res["model"], Q[: int(round(1.0 / DT)) + 1], out / "solo12_stand_up_frames.png",
                                n_frames=5, camera=rd.viz.Camera(elevation=10, azimuth=-90))
    return [path, frames]


def main(fast: bool = False, out=DEFAULT_OUT) -> dict:
    robots_dir = rd.models.example_robot_data_dir()
    if robots_dir is None:
        print("example-robot-data is not installed (pip install example-robot-data): no robot to load; skipping.")
        return {}
    duration = 1.2 if fast else 3.0

    model, plant = build_world(robots_dir), build_world(robots_dir)
    # why sphere feet: the rank of the linear model at the crouch, contact mode held fixed
    ranks = {}
    for sphere_feet, w in ((False, build_world(robots_dir, sphere_feet=False)), (True, model)):
        ranks[sphere_feet] = held_mode_rank(w, settle(w, posture(w, *CROUCH))[0])
    print(f"rank of d v'/d tau (12 leg torques) at the crouch, contact mode held: URDF foot meshes "
          f"{ranks[False]}, sphere feet {ranks[True]} (the base's 6 dofs)")

    res = run(model, plant, HORIZON, duration)
    Q, qs, replan = res["Q"], res["q_stand"], res["replan"]
    world = res["model"]
    t = np.arange(len(Q)) * DT
    err = np.abs(Q[:, 2] - qs[2])
    print(f"Solo12: {world.nv} dofs (6 base + 12 legs), {world.total_mass:.2f} kg, feet: spheres of "
          f"{FOOT_RADIUS * 1e3:g} mm; dt = {DT * 1e3:g} ms, {len(Q) - 1} steps ({duration:g} s) in {res['wall']:.1f} s")
    print(f"torque bounds: {res['limit'][6]:g} N m on the 12 leg joints (URDF effort limits "
          f"{world.joint(LEG_JOINTS[0]).effort_limit[0]:g} N m, capped at the motors' {MOTOR_LIMIT:g})")
    print(f"base height: start {Q[0, 2]:.4f} m, end {Q[-1, 2]:.4f} m, target {qs[2]:.4f} m "
          f"(final error {abs(Q[-1, 2] - qs[2]) * 1e3:.2f} mm)")
    print(f"time to within {TOLERANCE * 100:g} cm of the target height (for good): {time_to_reach(res):.3f} s "
          f"(the reference rises in {RISE:g} s)")
    pushed = t >= PUSH[0]
    tilt = np.array([tilt_deg(q) for q in Q])
    print(f"push: {PUSH[2]:g} N sideways on the base for {PUSH[1] * 1e3:g} ms at t = {PUSH[0]:g} s; after it: max "
          f"tilt {tilt[pushed].max():.2f} deg, max height error {err[pushed].max() * 1e3:.2f} mm, base moved "
          f"{(Q[-1, 1] - Q[0, 1]) * 1e3:+.1f} mm along y")
    print(f"base tilt: final {tilt[-1]:.3f} deg")
    touched = sorted(res["touched"])
    print("bodies that touched the ground: " + ", ".join(touched)
          + f"; only the feet: {'yes' if set(touched) <= set(FEET) else 'no'}")
    print(f"feet on the ground: at least {res['feet_down'].min()} in every step; steps with a foot at its friction "
          f"limit: {res['at_friction_limit']} of {len(Q) - 1}; largest sliding distance of a foot "
          f"{foot_slip(world, Q, res['V']).max() * 1e3:.2f} mm")
    peak = np.abs(res["tau"][:, 6:]).max()
    print(f"peak |tau| {peak:.3f} N m (bound {res['limit'][6]:g} N m)")
    print(f"MPC replans: {len(replan)}, horizon {HORIZON} steps ({HORIZON * DT:g} s), {ITERATIONS} iLQR iterations "
          f"each ({FIRST_ITERATIONS} for the first): mean {replan[1:].mean() * 1e3:.1f} ms, max "
          f"{replan[1:].max() * 1e3:.1f} ms, first {replan[0] * 1e3:.1f} ms (control period {DT * 1e3:g} ms)")
    pngs = plot(Path(out), res, HORIZON)
    for p in pngs:
        print(f"wrote {p}")

    sweep = {}
    if not fast:  # other horizons, on the first 1.5 s
        print("horizon   reached (s)   final error (mm)   fewest feet down   slid (mm)   replan mean / max (ms)")
        for horizon in (20, 40, 60):
            r = sweep[horizon] = run(model, plant, horizon, 1.5)
            print(f"{horizon:>7} {time_to_reach(r):>13.3f} {abs(r['Q'][-1, 2] - qs[2]) * 1e3:>18.2f} "
                  f"{r['feet_down'].min():>18} {foot_slip(world, r['Q'], r['V']).max() * 1e3:>11.2f} "
                  f"{r['replan'][1:].mean() * 1e3:>13.1f} / {r['replan'][1:].max() * 1e3:.1f}")
    return {"res": res, "ranks": ranks, "pngs": pngs, "sweep": sweep}


def _fast_from_env() -> bool:
    return os.environ.get("RIGIDIFF_FAST", "").strip().lower() not in ("", "0", "false", "no")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="short run (also: RIGIDIFF_FAST=1)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="folder for the pictures (default: examples/out)")
    args = parser.parse_args()
    main(fast=args.fast or _fast_from_env(), out=args.out)
    sys.exit(0)

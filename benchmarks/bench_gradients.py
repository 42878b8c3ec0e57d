"""Per-call time of rigidiff's step Jacobians through Python, next to finite differences, Pinocchio,
MuJoCo and Nimble in the same run.

    python benchmarks/bench_gradients.py [--robots panda solo12 talos] [--quick] [--nimble-python PATH]

One call of `world.step_jacobians(q, v, tau)` computes a semi-implicit Euler step (dt = 1e-3) and all
of A = d(q_next, v_next)/d(q, v) and B = d(q_next, v_next)/d tau. It is timed against:

- central finite differences of rigidiff's own step (`rigidiff.testing.finite_difference_jacobians`);
- Pinocchio: `computeABADerivatives` + `integrate` (the derivatives of the acceleration only), and the
  fair equivalent of a step Jacobian: the same + `dIntegrate` (both arguments), which the q_next blocks
  need, + the products that form the six blocks;
- MuJoCo: `mjd_transitionFD` centred (Euler integrator, meshes stripped, constraints and contacts off,
  one motor per joint), A (2nv, 2nv) and B (2nv, nu);
- Nimble: a forward step with its state and action Jacobians, run by `_nimble_timer.py` in the
  interpreter given by --nimble-python (default: $RIGIDIFF_NIMBLE_PYTHON; Nimble needs numpy < 2);
- and a recorded 1000-step `world.rollout` against its reverse pass `traj.backward`.

Every library loads the same URDF without meshes, mimic tags and joint damping or friction, and gets the
same two states (alternated, so that nothing is cached), mapped by joint name. rigidiff is timed in
batches alternating with each peer's (before and after Nimble's subprocess), so that both see the same
load. Prints per-call times in us (lower quartiles over the batches) for reference and the ratios, with
the targets. An untimed check compares rigidiff's A and B with finite differences, with Pinocchio's
(same conventions) and, on fixed-base robots, with MuJoCo's and Nimble's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import (
    ROBOTS,
    load_world,
    median_time,
    mujoco_model,
    paired_times,
    random_states,
    robots_dir,
    stripped_urdf,
)

from rigidiff.testing import finite_difference_jacobians

DT = 1e-3
GRAVITY = [0.0, 0.0, -9.81]
NIMBLE_TIMER = Path(__file__).with_name("_nimble_timer.py")


def quat_matrix(xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = xyzw / np.linalg.norm(xyzw)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def quat_rotvec(xyzw: np.ndarray) -> np.ndarray:
    xyzw = xyzw / np.linalg.norm(xyzw)
    if xyzw[3] < 0:
        xyzw = -xyzw
    s = np.linalg.norm(xyzw[:3])
    return xyzw[:3] * (2 * np.arctan2(s, xyzw[3]) / s if s > 1e-12 else 2.0)


def joint_layout(world):
    """(name, type, q index, v index) of every moving joint of the world."""
    return [(j.name, j.type, j.q_index, j.v_index) for j in (world.joint(n) for n in world.joint_names)]


def angle(jtype: str, q: np.ndarray, qi: int) -> float:
    """A one-dof joint's coordinate (continuous joints hold (cos, sin), as in Pinocchio)."""
    return float(np.arctan2(q[qi + 1], q[qi])) if jtype == "continuous" else float(q[qi])


def max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-300))


# ------------------------------------------------------------------------------------------ Pinocchio


def bench_pinocchio(text: str, floating: bool, world, states, ours, repeat: int, res: dict, checks: dict):
    import pinocchio as pin

    pm = pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(text)
    if pm.nq != world.nq or pm.nv != world.nv:
        checks["pinocchio"] = f"skipped: nq/nv {pm.nq}/{pm.nv} differ from rigidiff's {world.nq}/{world.nv}"
        return
    pdata = pm.createData()
    nv = pm.nv
    eye = np.eye(nv)

    def aba_derivatives_step(q, v, tau):
        pin.computeABADerivatives(pm, pdata, q, v, tau)
        v2 = v + DT * pdata.ddq
        return pin.integrate(pm, q, DT * v2), v2

    def step_jacobians(q, v, tau):
        ddq_dq, ddq_dv, minv = pin.computeABADerivatives(pm, pdata, q, v, tau)
        v2 = v + DT * pdata.ddq
        dv = DT * v2
        q2 = pin.integrate(pm, q, dv)
        jq, jv = pin.dIntegrate(pm, q, dv)  # d integrate(q, dv) / dq and / d dv
        dv_dq, dv_dv, dv_dtau = DT * ddq_dq, eye + DT * ddq_dv, DT * minv
        jvdt = DT * jv
        return q2, v2, jq + jvdt @ dv_dq, jvdt @ dv_dv, jvdt @ dv_dtau, dv_dq, dv_dv, dv_dtau

    def step_jacobians_free_base(q, v, tau):
        """The six blocks of rigidiff's step from Pinocchio's derivatives, for the check: the base (dofs 0:6)
        moves on R^3 x SO(3) (docs/conventions.md): v~ = v + dt a + dt (w x u, 0), q' moves with dt v~,
        and v' holds u~ in the base's new frame, u' = E^T u~ with E = exp(dt w~)."""
        ddq_dq, ddq_dv, minv = pin.computeABADerivatives(pm, pdata, q, v, tau)
        u, w = v[:3], v[3:6]
        S = np.zeros((nv, nv))
        S[:3, :3], S[:3, 3:6] = DT * pin.skew(w), -DT * pin.skew(u)
        vs = v + DT * pdata.ddq
        vs[:3] += DT * np.cross(w, u)
        dvs = (DT * ddq_dq, eye + DT * ddq_dv + S, DT * minv)
        E = pin.exp3(DT * vs[3:6])
        A0, A1, T = eye.copy(), eye.copy(), eye.copy()
        jq, jv = pin.dIntegrate(pm, q, DT * vs)  # the other joints' blocks
        A0[6:, 6:], A1[6:, 6:] = jq[6:, 6:], jv[6:, 6:]
        A0[:3, :3], A0[:3, 3:6], A0[3:6, 3:6] = E.T, -E.T @ pin.skew(DT * vs[:3]), E.T
        A1[:3, :3], A1[3:6, 3:6] = E.T, pin.Jexp3(DT * vs[3:6])
        T[:3, :3], T[:3, 3:6] = E.T, DT * pin.skew(E.T @ vs[:3]) @ pin.Jexp3(DT * vs[3:6])
        dq = (A0 + DT * A1 @ dvs[0], DT * A1 @ dvs[1], DT * A1 @ dvs[2])
        return (None, None, *dq, *(T @ d for d in dvs))

    (qa, va, ta), (qb, vb, tb) = states
    # untimed: the six blocks against ours (a half-filled Minv or a wrong formula would show here)
    blocks = (step_jacobians_free_base if floating else step_jacobians)(qa, va, ta)
    jac = world.step_jacobians(qa, va, ta)
    names = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")
    checks["pinocchio"] = max(max_rel_diff(getattr(jac, k), b) for k, b in zip(names, blocks[2:]))
    ab = ((qa, va, ta), (qb, vb, tb))
    res["pin dABA+integrate"] = paired_times(ours, (aba_derivatives_step, *ab), repeat)[::-1]
    res["pin step jacobians"] = paired_times(ours, (step_jacobians, *ab), repeat)[::-1]
    res["pin version"] = pin.__version__


# ------------------------------------------------------------------------------------------ MuJoCo


def mujoco_free_joint(model, q7, v6, tau6, qpos, qvel, qfrc, perm6) -> None:
    """Writes the model's free joint from rigidiff's (x, y, z, quaternion xyzw), body-frame velocity and
    wrench into MuJoCo's qpos (quaternion wxyz), qvel and qfrc (linear parts in the world frame), and its
    dof indices into perm6."""
    import mujoco

    j = next(k for k in range(model.njnt) if model.jnt_type[k] == mujoco.mjtJoint.mjJNT_FREE)
    qa, da = model.jnt_qposadr[j], model.jnt_dofadr[j]
    R = quat_matrix(q7[3:7])
    qpos[qa:qa + 3] = q7[:3]
    qpos[qa + 3:qa + 7] = np.roll(q7[3:7], 1)
    qvel[da:da + 3], qvel[da + 3:da + 6] = R @ v6[:3], v6[3:]
    qfrc[da:da + 3], qfrc[da + 3:da + 6] = R @ tau6[:3], tau6[3:]
    perm6[:] = np.arange(da, da + 6)


def mujoco_state(model, layout, q, v, tau):
    """MuJoCo's qpos, qvel, ctrl and qfrc_applied for rigidiff's (q, v, tau), mapped by joint name.
    The free joint: quaternion wxyz (ours xyzw), linear velocity and force in the world frame (ours in
    the body frame)."""
    qpos, qvel = np.zeros(model.nq), np.zeros(model.nv)
    ctrl, qfrc = np.zeros(model.nu), np.zeros(model.nv)
    perm = np.zeros(len(v), dtype=int)  # rigidiff v index -> MuJoCo dof index
    for name, jtype, qi, vi in layout:
        if jtype == "free":
            mujoco_free_joint(model, q[qi:qi + 7], v[vi:vi + 6], tau[vi:vi + 6], qpos, qvel, qfrc, perm[vi:vi + 6])
        else:
            j = model.joint(name)
            qpos[j.qposadr[0]] = angle(jtype, q, qi)
            qvel[j.dofadr[0]] = v[vi]
            ctrl[model.actuator(name).id] = tau[vi]
            perm[vi] = j.dofadr[0]
    return qpos, qvel, ctrl, qfrc, perm


def bench_mujoco(path: Path, floating: bool, world, states, ours, repeat: int, n: int, res: dict, checks: dict):
    import mujoco

    try:
        mm = mujoco_model(path, floating, motors=True)
    except ValueError as e:  # its compiler refuses some URDF inertias
        checks["mujoco"] = f"failed to load: {str(e).splitlines()[0]}"
        return
    md = mujoco.MjData(mm)
    if mm.nv != world.nv:
        checks["mujoco"] = f"skipped: nv {mm.nv} differs from rigidiff's {world.nv}"
        return
    layout = joint_layout(world)
    mj_states = [mujoco_state(mm, layout, *s) for s in states]
    ns = 2 * mm.nv + mm.na
    A, B = np.zeros((ns, ns)), np.zeros((ns, mm.nu))
    eps = 1e-6

    def transition_fd(qpos, qvel, ctrl, qfrc, perm):
        md.qpos[:] = qpos
        md.qvel[:] = qvel
        md.ctrl[:] = ctrl
        md.qfrc_applied[:] = qfrc
        mujoco.mjd_transitionFD(mm, md, eps, 1, A, B, None, None)

    transition_fd(*mj_states[0])
    if floating:
        checks["mujoco"] = "n/a (free joint: MuJoCo's tangent space is world-frame linear, ours body-frame)"
    else:
        perm = mj_states[0][4]
        p2 = np.concatenate([perm, perm + mm.nv])
        jac = world.step_jacobians(*states[0])
        act = [mm.actuator(name).id for name, _, _, _ in joint_layout(world)]
        checks["mujoco"] = max(max_rel_diff(jac.A, A[np.ix_(p2, p2)]), max_rel_diff(jac.B, B[p2][:, act]))
    res["mjd_transitionFD"] = paired_times(ours, (transition_fd, *mj_states), repeat, n_peer=n)[::-1]
    res["mujoco version"] = mujoco.__version__


# ------------------------------------------------------------------------------------------ Nimble


def nimble_state(layout, q, v, tau) -> dict:
    """Per-joint state for _nimble_timer.py; the free root joint as rotation vector and translation with
    body-frame (angular, linear) velocity and (torque, force), Nimble's FreeJoint order."""
    state = {"joints": {}, "root": None}
    for name, jtype, qi, vi in layout:
        if jtype == "free":
            state["root"] = {"rotvec": list(quat_rotvec(q[qi + 3:qi + 7])), "pos": list(q[qi:qi + 3]),
                             "omega": list(v[vi + 3:vi + 6]), "vel": list(v[vi:vi + 3]),
                             "torque": list(tau[vi + 3:vi + 6]), "force": list(tau[vi:vi + 3])}
        else:
            state["joints"][name] = [angle(jtype, q, qi), float(v[vi]), float(tau[vi])]
    return state


def bench_nimble(python: str, text: str, floating: bool, world, states, ours, repeat: int, n: int, res: dict,
                 checks: dict):
    """Nimble runs in another process: ours is timed right before and right after it (the mean)."""
    req = {"urdf": text, "floating": floating, "dt": DT, "gravity": GRAVITY, "repeat": repeat, "n": n,
           "states": [nimble_state(joint_layout(world), *s) for s in states]}
    before = median_time(*ours, repeat)
    try:
        proc = subprocess.run([python, str(NIMBLE_TIMER)], input=json.dumps(req), capture_output=True, text=True,
                              timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        checks["nimble"] = f"could not run {python}: {e}"
        return
    marker = proc.stdout.rfind("@@JSON@@")
    if marker < 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        checks["nimble"] = f"timer failed (exit {proc.returncode}): {' | '.join(tail)}"
        return
    out = json.loads(proc.stdout[marker + len("@@JSON@@"):])
    if "error" in out:
        checks["nimble"] = f"failed: {out['error']}"
        return
    ours_us = 0.5 * (before + median_time(*ours, repeat))
    res["nimble step+jacobians"] = (out["step+jacobians"], ours_us)
    res["nimble version"] = out["version"]
    A, B = np.array(out["A"]), np.array(out["B"])
    info = f"nv {out['nv']}, {out['bodies']} bodies, forward step {out['step']:.1f} us"
    if out["nv"] != world.nv:
        checks["nimble"] = f"nv differs from rigidiff's {world.nv}, timed anyway; {info}"
    elif floating:
        checks["nimble"] = f"n/a (free joint: Nimble's is a rotation vector); {info}"
    else:
        perm = np.array([out["dofs"].index(name) for name, _, _, _ in joint_layout(world)])
        p2 = np.concatenate([perm, perm + world.nv])
        jac = world.step_jacobians(*states[0])
        diff = max(max_rel_diff(jac.A, A[np.ix_(p2, p2)]), max_rel_diff(jac.B, B[p2][:, perm]))
        checks["nimble"] = f"{diff:.1e} ({info})"


# ------------------------------------------------------------------------------------------ rigidiff


def bench_rollout(world, q0, v0, quick: bool, res: dict):
    """A recorded 1000-step rollout and its reverse pass (a loss on every recorded state), alternated."""
    T = 1000
    rng = np.random.default_rng(1)
    taus = np.zeros((T, world.nv))
    dQ, dV = rng.normal(size=(T + 1, world.nv)), rng.normal(size=(T + 1, world.nv))
    traj = world.rollout(q0, v0, taus, record=True)
    if not (np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.v))):
        raise RuntimeError("the rollout diverged")
    fwd, bwd = [], []
    for _ in range(9 if quick else 41):
        t0 = time.perf_counter()
        traj = world.rollout(q0, v0, taus, record=True)
        t1 = time.perf_counter()
        traj.backward(dQ, dV)
        t2 = time.perf_counter()
        fwd.append(t1 - t0)
        bwd.append(t2 - t1)
    # the fastest pass: a pass lasts milliseconds, long enough to be preempted on a shared machine
    res["rollout forward"] = 1e6 * min(fwd)
    res["rollout backward"] = 1e6 * min(bwd)


def bench_robot(name: str, quick: bool, nimble_python: str | None) -> tuple[dict, dict]:
    rel, floating = ROBOTS[name]
    root = robots_dir()
    path = root / rel
    text = stripped_urdf(path, dynamics=True)
    repeat = 9 if quick else 25
    world = load_world(text, floating, root)
    world.gravity = GRAVITY
    states = random_states(world)
    (qa, va, ta), (qb, vb, tb) = states
    res, checks = {"nv": world.nv}, {}
    ours = (world.step_jacobians, (qa, va, ta), (qb, vb, tb))
    # finite differences cost 6 nv steps and their Python loop: few calls
    fd = finite_difference_jacobians(world, qa, va, ta)
    checks["finite differences"] = max_rel_diff(world.step_jacobians(qa, va, ta).A, fd.A)
    fd = (lambda q, v, t: finite_difference_jacobians(world, q, v, t), (qa, va, ta), (qb, vb, tb))
    res["rd central FD"] = paired_times(ours, fd, 3 if quick else 7, n_peer=4 if quick else 10)[::-1]
    bench_rollout(world, qa, va, quick, res)
    n_slow = 10 if quick else 40
    try:
        bench_pinocchio(text, floating, world, states, ours, repeat, res, checks)
    except ImportError:
        checks["pinocchio"] = "not installed"
    try:
        bench_mujoco(path, floating, world, states, ours, repeat, n_slow, res, checks)
    except ImportError:
        checks["mujoco"] = "not installed"
    if nimble_python:
        bench_nimble(nimble_python, text, floating, world, states, ours, repeat, n_slow, res,
                     checks)
    else:
        checks["nimble"] = "not installed"
    return res, checks


# ------------------------------------------------------------------------------------------ report

# (row label, peer key, how the ratio reads, target, robots the target applies to (None: all))
ROWS = [
    ("central FD of rigidiff's step", "rd central FD", "faster", 50.0, {"talos"}),
    ("pin computeABADerivatives + integrate", "pin dABA+integrate", "ratio", 1.2, None),
    ("pin dABA + integrate + dIntegrate + blocks", "pin step jacobians", "ratio", 1.2, None),
    ("mujoco mjd_transitionFD (centred)", "mjd_transitionFD", "faster", 10.0, None),
    ("nimble step + state/action Jacobians", "nimble step+jacobians", "faster", 10.0, None),
]


def print_table(results: dict) -> None:
    print(f"{'robot':<7} {'nv':>3}  {'peer (per call)':<44} {'peer us':>9} {'ours us':>8}  "
          f"{'ours vs peer':<15} {'target':<18} met")
    for name, (res, _) in results.items():
        nv = res["nv"]
        for label, key, kind, target, where in ROWS:
            if key not in res:
                print(f"{name:<7} {nv:>3}  {label:<44} {'-':>9} {'-':>8}  {'not measured':<15}")
                continue
            peer, ours = res[key]
            applies = where is None or name in where
            if kind == "faster":
                value, shown = peer / ours, f"{peer / ours:6.1f}x faster"
                tgt = f">= {target:g}x faster" + ("" if where is None else f" ({', '.join(sorted(where))})")
                met = value >= target
            else:
                value, shown = ours / peer, f"{ours / peer:6.2f}x time"
                tgt, met = f"<= {target:g}x time", ours / peer <= target
            print(f"{name:<7} {nv:>3}  {label:<44} {peer:9.1f} {ours:8.1f}  {shown:<15} {tgt:<18} "
                  f"{('yes' if met else 'NO') if applies else '-'}")
        fwd, bwd = res["rollout forward"], res["rollout backward"]
        ratio = bwd / fwd
        print(f"{name:<7} {nv:>3}  {'rollout 1000 steps: backward / forward':<44} {fwd:9.0f} {bwd:8.0f}  "
              f"{ratio:6.2f}x time   {'<= 3x time':<18} {'yes' if ratio <= 3 else 'NO'}")
    print("(ours us: world.step_jacobians, timed in batches alternating with the peer's; on the rollout rows, the\n"
          " forward pass (record=True) and the backward pass (traj.backward) of 1000 steps)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", default=["panda", "solo12", "talos"], choices=sorted(ROBOTS))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--nimble-python", default=os.environ.get("RIGIDIFF_NIMBLE_PYTHON"),
                    help="Python interpreter with nimblephysics installed (default: $RIGIDIFF_NIMBLE_PYTHON)")
    args = ap.parse_args(argv)
    if not args.nimble_python:
        print("nimble: not installed (pass --nimble-python or set RIGIDIFF_NIMBLE_PYTHON); timing the others")
    results = {}
    for name in args.robots:
        results[name] = bench_robot(name, args.quick, args.nimble_python)
    print_table(results)
    print()
    versions = {k: v for res, _ in results.values() for k, v in res.items() if k.endswith("version")}
    print("peers: " + (", ".join(f"{k.split()[0]} {v}" for k, v in sorted(versions.items())) or "none"))
    print("checks (untimed; max |ours - theirs| / max |ours| over the step Jacobians):")
    for name, (_, checks) in results.items():
        for peer in ("finite differences", "pinocchio", "mujoco", "nimble"):
            c = checks.get(peer)
            if c is not None:
                print(f"  {name:<7} {peer:<19} {c:.1e}" if isinstance(c, float) else f"  {name:<7} {peer:<19} {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

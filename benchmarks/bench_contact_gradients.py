"""Step Jacobians through contact: rigidiff's analytic `step_jacobians` against central finite differences
of its own step, against Nimble's forward pass + Jacobians, and its plain step against MuJoCo's `mj_step`,
on two scenes in contact.

    python benchmarks/bench_contact_gradients.py [--scenes jump_worm talos] [--quick] [--nimble-python PATH]

Scenes (dt 1e-3, the same masses, inertias, friction and state in every engine):

- jump_worm: the jump worm of the DiffDART paper (Table 2) as Nimble's Jacobian benchmark builds it: a
  0.1 m root box on a planar translation (x, y) and three 0.05 x 0.25 x 0.05 m tail boxes on revolute
  z joints, hinged end to end, at joint angles (90, 90, 45) degrees (3.1415 / 180 per degree, as there);
  every body 1 kg with unit moments of inertia (DART's default inertia, which that benchmark keeps);
  gravity -9.81 along y; a welded 2.5 x 0.25 x 0.5 m floor box centred at y = -0.56, friction 0, so
  that the tail's last box enters the floor by 9.5 mm at two corners; the root falling at 0.1 m/s;
- talos: example-robot-data's talos (talos_reduced.urdf, nv 38) with its collision meshes (a mesh
  touches the ground plane at its deepest vertices, at most four), friction 0.8, on the ground plane
  z = 0 at its SRDF "half_sitting" configuration, lowered until the deeper foot enters the ground by
  0.1 mm, then settled for 0.8 s under a joint PD around that configuration (stiffness 1e4 N m/rad,
  damping 1e3 N m s/rad, as implicit joint springs: an explicit PD that stiff is unstable at dt 1e-3 on
  talos' light arm joints). The springs are then replaced by the torques they apply, tau = K (q_ref - q)
  - D v, so that it stands still on both feet; the timed states are the next two steps of that chain.

Each scene is timed at two states, alternated call after call (DART skips the work of setting an
unchanged state): the state above and the one a step later. Per call, in us:

- rd step: `world.step(q, v, tau)`; each state follows a step at the other one, so its contacts are solved
  cold (a step uses the warm start only when it starts bitwise where the last step ended);
- rd warm step (talos): `world.set_warm_start(ws)` with the warm start of the step that ended at that state,
  then `world.step(q, v, tau)`, as mj_step gets its own warm start; the time of `set_warm_start` alone
  (timed in the same rounds) subtracted;
- rd step_jacobians: `world.step_jacobians(q, v, tau)`, the step and its six (nv, nv) blocks through
  contact (the contact mode of the step held fixed); the time of `world.last_contacts()`, which
  step_jacobians builds for its `.contacts`, is printed apart;
- rd central FD: `rigidiff.testing.finite_difference_jacobians` with eps 1e-7: 2 x 3nv steps of rigidiff
  (q perturbed through `world.integrate`, q_next measured with `world.difference`), and its floor,
  6 nv times the step;
- mj_step: MuJoCo (Euler integrator, pyramidal cone, condim 3 (1 where friction is 0), joint limits
  off, the robot colliding with the ground only, torques through qfrc_applied), the state set by
  `mj_setState` before each call (with its warm start from a step at that state), the time of
  `mj_setState` alone (timed in the same rounds) subtracted;
- Nimble: a forward step, and `forwardPass(world, idempotent=True)` with the snapshot's state and action
  Jacobians, run by `_nimble_contact_timer.py` in the interpreter given by --nimble-python (default:
  $RIGIDIFF_NIMBLE_PYTHON; Nimble needs numpy < 2). Nimble's ground for talos is a welded box with its
  top face at z = 0.

rigidiff and MuJoCo are timed in interleaved rounds (every variant once per round, a batch of calls
each). Nimble's process times its batches round by round on request, and rigidiff's step and
step_jacobians are timed right after each of its rounds, so that both see the same load on a shared
machine. The table gives the median per call over the rounds and each ratio's median, taken round by
round, with its quartiles over the rounds.
The targets: FD / step_jacobians >= 100x on talos, Nimble's forward pass + Jacobians / step_jacobians
>= 5x, step / mj_step <= 2x. Untimed checks follow: the analytic Jacobians against rigidiff's own
finite differences, the timed ones and mode-preserving ones (per column, eps from 1e-6 down to 1e-9 until
both perturbed steps keep the contact mode: on talos' flat feet some mesh vertices are within 1e-7 m of
the ground, and a plain FD switches them on or off), and Nimble's velocity Jacobians against ours (each
engine finds and solves its own contacts: they may legitimately differ).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from _common import interleaved_medians, robots_dir, stripped_urdf
from bench_contact import mj_ground, mj_spec_options
from bench_gradients import joint_layout, mujoco_free_joint, nimble_state

import rigidiff as rd
from rigidiff.testing import finite_difference_jacobians

DT = 1e-3
G = 9.81
FD_EPS = 1e-7
NIMBLE_TIMER = Path(__file__).with_name("_nimble_contact_timer.py")
TARGETS = {"fd": 100.0, "nimble": 5.0, "mj": 2.0}  # FD on talos >= 100x, Nimble >= 5x, step <= 2x mj_step

# jump worm (Nimble's benchmark)
WORM_DEG = 3.1415 / 180.0
WORM_ANGLES = (90.0, 90.0, 45.0)
WORM_ROOT_BOX, WORM_TAIL_BOX = (0.1, 0.1, 0.1), (0.05, 0.25, 0.05)
WORM_FLOOR_BOX, WORM_FLOOR_Y = (2.5, 0.25, 0.5), -0.56

# talos standing
TALOS_URDF = "talos_data/robots/talos_reduced.urdf"
TALOS_SRDF = "talos_data/srdf/talos.srdf"
TALOS_FRICTION = 0.8
KP, KD = 1e4, 1e3
PENETRATION = 1e-4
SETTLE_STEPS = 800


@dataclass
class Scene:
    """A scene built in rigidiff, with what the peers need to build the same one."""

    name: str
    world: rd.World
    states: list  # two (q, v, tau), alternated when timing
    gravity: tuple
    friction: float
    mj_model: object = None  # a callable building the MuJoCo model
    warm_starts: list = None  # per state, the warm start of the step that ended there (rd warm step)
    nimble_request: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


# ---------------------------------------------------------------------------------------------- jump worm


def rd_jump_worm() -> Scene:
    world = rd.World(dt=DT, gravity=(0.0, -G, 0.0))
    unit = np.eye(3)
    sk = rd.Skeleton("jumpworm")
    # the planar translation of the root: x on a massless body, then y
    sk.add_body("root_x", joint=rd.PrismaticJoint("root_x", axis=(1.0, 0.0, 0.0)))
    body = sk.add_body("root", joint=rd.PrismaticJoint("root_y", axis=(0.0, 1.0, 0.0)), parent="root_x",
                       inertia=rd.Inertia(1.0, rotational_inertia=unit))
    body.add_shape(rd.Box(WORM_ROOT_BOX), friction=0.0)
    parent, origin = body, rd.Transform()
    for i in range(3):
        # the body frame sits at the hinge (rigidiff's body frame is the joint frame); box and centre of
        # mass 0.125 m further along y, the next hinge at the far end
        body = sk.add_body(f"tail{i + 1}", joint=rd.RevoluteJoint(f"tail{i + 1}_joint", axis=(0.0, 0.0, 1.0)),
                           parent=parent, joint_origin=origin,
                           inertia=rd.Inertia(1.0, com=(0.0, 0.125, 0.0), rotational_inertia=unit))
        body.add_shape(rd.Box(WORM_TAIL_BOX), origin=rd.Transform((0.0, 0.125, 0.0)), friction=0.0)
        parent, origin = body, rd.Transform((0.0, 0.25, 0.0))
    world.add_skeleton(sk)
    floor = rd.Skeleton("floor")
    fb = floor.add_body("floor", joint=rd.FixedJoint("floor_weld"), joint_origin=rd.Transform((0.0, WORM_FLOOR_Y, 0.0)))
    fb.add_shape(rd.Box(WORM_FLOOR_BOX), friction=0.0)
    world.add_skeleton(floor)
    q = np.array([0.0, 0.0, *WORM_ANGLES]) * WORM_DEG
    v = np.array([0.0, -0.1, 0.0, 0.0, 0.0])
    tau = np.zeros(5)
    qb, vb = world.step(q, v, tau)
    states = [(q, v, tau), (qb, vb, tau)]
    req = {"scene": "jump_worm", "states": [[list(map(float, x)) for x in s] for s in states]}
    return Scene("jump_worm", world, states, (0.0, -G, 0.0), 0.0, mj_jump_worm, nimble_request=req)


def mj_jump_worm():
    """The worm in MuJoCo: slide x, slide y and a box on the root, a hinge and a box per tail segment."""
    import mujoco

    spec = mujoco.MjSpec()
    mj_spec_options(spec, "pyramidal")
    spec.option.gravity = [0.0, -G, 0.0]
    half = [0.5 * s for s in WORM_FLOOR_BOX]
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=half, pos=[0.0, WORM_FLOOR_Y, 0.0],
                            friction=[0.0, 0.0, 0.0], condim=1, contype=1, conaffinity=2)

    def inertial(body, com):
        body.explicitinertial = True
        body.mass, body.ipos, body.inertia = 1.0, com, [1.0, 1.0, 1.0]

    root = spec.worldbody.add_body(name="root")
    for name, axis in (("root_x", [1.0, 0.0, 0.0]), ("root_y", [0.0, 1.0, 0.0])):
        root.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_SLIDE, axis=axis)
    inertial(root, [0.0, 0.0, 0.0])
    root.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.5 * s for s in WORM_ROOT_BOX], friction=[0.0, 0.0, 0.0],
                  condim=1, contype=2, conaffinity=1)
    parent, pos = root, [0.0, 0.0, 0.0]
    for i in range(3):
        body = parent.add_body(name=f"tail{i + 1}", pos=pos)
        body.add_joint(name=f"tail{i + 1}_joint", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0.0, 0.0, 1.0])
        inertial(body, [0.0, 0.125, 0.0])
        body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.5 * s for s in WORM_TAIL_BOX], pos=[0.0, 0.125, 0.0],
                      friction=[0.0, 0.0, 0.0], condim=1, contype=2, conaffinity=1)
        parent, pos = body, [0.0, 0.25, 0.0]
    m = spec.compile()
    return m, (lambda q, v, tau: (q.copy(), v.copy(), tau.copy(), np.arange(len(v))))


# ---------------------------------------------------------------------------------------------- talos


def half_sitting(root: Path) -> dict:
    """The SRDF's half_sitting configuration, {joint name: values}."""
    srdf = (root / TALOS_SRDF).read_text()
    block = re.search(r'<group_state name="half_sitting".*?</group_state>', srdf, re.S).group(0)
    return {name: np.array(value.split(), dtype=float)
            for name, value in re.findall(r'<joint name="([^"]+)" value="([^"]+)"', block)}


def rd_talos() -> Scene:
    root = robots_dir()
    text = stripped_urdf(root / TALOS_URDF, dynamics=True, collision=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias of sensor frames
        sk = rd.load_urdf(text, floating_base=True, package_dirs=[root], load_geometry=True, strict=False)
    pose = half_sitting(root)
    for body in sk.bodies:
        body.shapes[:] = [replace(s, friction=TALOS_FRICTION) for s in body.shapes]
        joint = body.joint
        if joint.nv == 1:  # the implicit joint PD of the settling phase: springs at half_sitting, dampers
            joint.rest_position = pose.get(joint.name, np.zeros(1)).copy()
            joint.stiffness, joint.damping = np.array([KP]), np.array([KD])
    world = rd.World(dt=DT)
    world.add_ground(friction=TALOS_FRICTION)
    world.add_skeleton(sk)
    q_ref = world.neutral_configuration()
    for name in world.joint_names:
        if name in pose:
            j = world.joint(name)
            q_ref[j.q_index:j.q_index + j.nq] = pose[name]
    q_ref[2] -= world.collide(q_ref).distances.min() + PENETRATION  # the deeper foot PENETRATION deep
    q, v, zero = q_ref.copy(), np.zeros(world.nv), np.zeros(world.nv)
    for _ in range(SETTLE_STEPS):
        q, v = world.step(q, v, zero)
    names = world.parameters().names
    world.set_parameters({n: 0.0 for n in names if n.endswith(("/stiffness", "/damping"))})

    def pd(q, v):
        tau = np.zeros(world.nv)
        tau[6:] = KP * world.difference(q, q_ref)[6:] - KD * v[6:]
        return tau

    # the timed states: two steps of the chain under the PD torques, each with the warm start of the step that
    # ended there (the one a simulation carries into its next step)
    q, v = world.step(q, v, pd(q, v))
    wa = world.warm_start()
    qb, vb = world.step(q, v, pd(q, v))
    states = [(q, v, pd(q, v)), (qb, vb, pd(qb, vb))]
    scene = Scene("talos", world, states, (0.0, 0.0, -G), TALOS_FRICTION, None,
                  warm_starts=[wa, world.warm_start()])
    scene.mj_model = lambda: mj_talos(world)
    layout = joint_layout(world)
    scene.nimble_request = {"scene": "urdf", "urdf": text.replace("package://example-robot-data/robots/",
                                                                  f"file://{root}/"),
                            "states": [nimble_state(layout, *s) for s in states]}
    scene.notes.append(f"settled {SETTLE_STEPS} steps: max |v| {np.abs(v).max():.1e}, base height {q[2]:.4f} m")
    feet = contact_summary(world, *states[0])["bodies"]
    if feet != ["leg_left_6_link", "leg_right_6_link"]:
        scene.notes.append(f"WARNING: talos is not standing on both feet (clamping normal rows on {feet})")
    return scene


def mj_talos(world: rd.World):
    """The same URDF through MuJoCo's importer (meshes by absolute path), a free joint on the base, only
    robot-ground pairs colliding."""
    import mujoco

    root = robots_dir()
    text = stripped_urdf(root / TALOS_URDF, dynamics=True, collision=True)
    spec = mujoco.MjSpec.from_string(text)
    spec.strippath = False
    for mesh in spec.meshes:
        mesh.file = mesh.file.replace("package://example-robot-data/robots/", f"{root}/")
    spec.worldbody.first_body().add_freejoint()
    for g in spec.geoms:
        g.friction = [TALOS_FRICTION, 0.0, 0.0]
        g.condim, g.contype, g.conaffinity = 3, 2, 1
    mj_spec_options(spec, "pyramidal")
    mj_ground(spec, TALOS_FRICTION, contype=1, conaffinity=2)
    m = spec.compile()
    m.dof_damping[:] = 0.0
    m.dof_frictionloss[:] = 0.0
    m.dof_armature[:] = 0.0
    return m, (lambda q, v, tau: mj_state(m, joint_layout(world), q, v, tau))


def mj_state(model, layout, q, v, tau):
    """MuJoCo's qpos, qvel, qfrc_applied for rigidiff's (q, v, tau), by joint name, and the permutation
    rigidiff v index -> MuJoCo dof. The free joint: quaternion wxyz (ours xyzw), linear velocity and force
    in the world frame (ours in the body frame)."""
    qpos, qvel, qfrc = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
    perm = np.zeros(len(v), dtype=int)
    for name, jtype, qi, vi in layout:
        if jtype == "free":
            mujoco_free_joint(model, q[qi:qi + 7], v[vi:vi + 6], tau[vi:vi + 6], qpos, qvel, qfrc, perm[vi:vi + 6])
        else:
            j = model.joint(name)
            qpos[j.qposadr[0]] = q[qi]
            qvel[j.dofadr[0]] = v[vi]
            qfrc[j.dofadr[0]] = tau[vi]
            perm[vi] = j.dofadr[0]
    return qpos, qvel, qfrc, perm


# ---------------------------------------------------------------------------------------------- timing


def contact_summary(world, q, v, tau) -> dict:
    """Contacts and constraint rows of rigidiff's step at (q, v, tau)."""
    world.step(q, v, tau)
    c = world.last_contacts()
    rows = [(k, c.body_a[i], cls) for k, i, cls in zip(c.row_kinds, c.row_index, c.row_classes)]
    clamping = [r for r in rows if r[2] != "separating"]
    bodies = sorted({b for k, b, cls in clamping if k == "normal" and cls == "clamping"})
    return {"contacts": len(c), "rows": len(rows), "clamping": sum(cls == "clamping" for _, _, cls in rows),
            "active": len(clamping), "bodies": bodies, "solver": c.solver,
            "depth": float(-c.distances.min()) if len(c) else 0.0}


def mujoco_timers(scene: Scene, res: dict) -> dict:
    """mj_step batches on the same two states, and MuJoCo's contact count at the first."""
    import mujoco

    m, to_mj = scene.mj_model()
    d = mujoco.MjData(m)
    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    states = []
    for q, v, tau in scene.states:
        qpos, qvel, qfrc, _ = to_mj(q, v, tau)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        d.qacc_warmstart[:] = 0.0
        mujoco.mj_step(m, d)  # a step at that state for the solver's warm start
        d.qpos[:], d.qvel[:], d.time = qpos, qvel, 0.0
        state = np.empty(mujoco.mj_stateSize(m, spec))
        mujoco.mj_getState(m, d, state, spec)
        states.append(state)
    mujoco.mj_setState(m, d, states[0], spec)
    mujoco.mj_forward(m, d)
    res["mj contacts"] = int(d.ncon)
    res["mj mass"] = float(m.body_mass.sum())
    res["mujoco version"] = mujoco.__version__
    sa, sb = states
    set_state, step = mujoco.mj_setState, mujoco.mj_step
    n = res["n step"]

    def batch():
        for _ in range(n // 2):
            set_state(m, d, sa, spec)
            step(m, d)
            set_state(m, d, sb, spec)
            step(m, d)

    def set_only():  # subtracted from the batch above: mj_setState costs 1-2 us through Python
        for _ in range(n // 2):
            set_state(m, d, sa, spec)
            set_state(m, d, sb, spec)

    return {"mj setState+step": (batch, None), "mj setState": (set_only, None)}


def rd_timers(scene: Scene, n: dict) -> dict:
    world = scene.world
    (qa, va, ta), (qb, vb, tb) = scene.states

    def batch(fn, calls):
        def run():
            for _ in range(calls // 2):
                fn(qa, va, ta)
                fn(qb, vb, tb)
        return run

    def last_contacts():  # the contacts of the step (what step_jacobians builds for .contacts)
        for _ in range(n["step"] // 2):
            world.last_contacts()
            world.last_contacts()

    def fd(q, v, tau):
        return finite_difference_jacobians(world, q, v, tau, eps=FD_EPS)

    fns = {"rd step": (batch(world.step, n["step"]), None),
           "rd step_jacobians": (batch(world.step_jacobians, n["jac"]), None),
           "rd last_contacts": (last_contacts, None),
           "rd central FD": (batch(fd, n["fd"]), None)}
    if scene.warm_starts:  # each state with its own warm start, as mj_step gets it; the restore timed apart
        wa, wb = scene.warm_starts
        restore, step = world.set_warm_start, world.step

        def warm():
            for _ in range(n["step"] // 2):
                restore(wa)
                step(qa, va, ta)
                restore(wb)
                step(qb, vb, tb)

        def restore_only():
            for _ in range(n["step"] // 2):
                restore(wa)
                restore(wb)

        fns.update({"rd set_warm_start+step": (warm, None), "rd set_warm_start": (restore_only, None)})
    return fns


def per_round(fns: dict, calls: dict, repeat: int) -> dict:
    """Per-call times (us) of every round: interleaved_medians over single rounds, so that the ratios
    can be taken round by round."""
    out = {k: [] for k in fns}
    interleaved_medians(fns, 1, warmup=0)  # warm-up round
    for _ in range(repeat):
        for k, t in interleaved_medians(fns, 1, warmup=0).items():
            out[k].append(1e6 * t / calls[k])
    return out


class NimbleProcess:
    """_nimble_contact_timer.py in Nimble's interpreter, answering one line per request."""

    def __init__(self, python: str, request: dict, timeout: float = 600.0):
        self.timeout = timeout
        self.stderr = tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([python, str(NIMBLE_TIMER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, cwd=str(NIMBLE_TIMER.parent))
        self.answers = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send(json.dumps(request))

    def _read(self):
        for line in self.proc.stdout:  # Nimble's own messages are skipped
            if line.startswith("@@JSON@@"):
                self.answers.put(json.loads(line[len("@@JSON@@"):]))
        self.answers.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        try:
            out = self.answers.get(timeout=self.timeout)
        except queue.Empty:
            out = None
        if out is None:
            self.stderr.seek(0)
            tail = " | ".join(self.stderr.read().strip().splitlines()[-3:])
            raise RuntimeError(f"no answer (exit {self.proc.poll()}): {tail}")
        return out

    def close(self) -> None:
        try:
            self.send("done")
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        self.stderr.close()


def bench_nimble(python: str, scene: Scene, repeat: int, n: int, res: dict, checks: dict) -> None:
    """Nimble runs in another process, round by round: after each of its rounds (a batch of forward steps
    and one of forward steps + Jacobians) ours are timed, so that both see the same load."""
    req = dict(scene.nimble_request, dt=DT, gravity=list(scene.gravity), friction=scene.friction, n=n)
    world = scene.world
    (qa, va, ta), (qb, vb, tb) = scene.states

    def ours(fn, calls):
        t0 = time.perf_counter()
        for _ in range(calls // 2):
            fn(qa, va, ta)
            fn(qb, vb, tb)
        return 1e6 * (time.perf_counter() - t0) / (2 * (calls // 2))

    try:
        proc = NimbleProcess(python, req)
    except OSError as e:
        checks["nimble"] = f"could not run {python}: {e}"
        return
    try:
        out = proc.answer()
        if "error" in out:
            checks["nimble"] = f"failed: {out['error']}"
            return
        keys = ("nimble step", "nimble step+jacobians", "nimble rd step", "nimble rd step_jacobians")
        rounds = {k: [] for k in keys}
        for r in range(repeat + 1):  # the first round warms up
            proc.send("round")
            t = proc.answer()
            times = (t["step"], t["step+jacobians"], ours(world.step, 10 * n), ours(world.step_jacobians, n))
            if r:
                for k, x in zip(keys, times):
                    rounds[k].append(x)
    except RuntimeError as e:
        checks["nimble"] = f"timer failed: {e}"
        return
    finally:
        proc.close()
    res.update(rounds)
    res["nimble contacts"] = out["contacts"]
    res["nimble version"] = out["version"]
    if out["nv"] != world.nv:
        checks["nimble"] = f"nv {out['nv']} differs from rigidiff's {world.nv}: Jacobians not compared"
        return
    perm = nimble_permutation(world, out["dofs"]) if scene.name != "jump_worm" else np.arange(world.nv)
    jac = world.step_jacobians(qa, va, ta)
    nv_dv, nv_dtau = np.array(out["dv_dv"])[np.ix_(perm, perm)], np.array(out["dv_dtau"])[np.ix_(perm, perm)]
    joints = actuated(world)
    checks["nimble"] = {
        "dv_dv": float(np.abs(jac.dv_dv - nv_dv).max()), "dv_dtau": float(np.abs(jac.dv_dtau - nv_dtau).max()),
        "dv_dv joints": float(np.abs(jac.dv_dv - nv_dv)[np.ix_(joints, joints)].max()),
        "dv_dtau joints": float(np.abs(jac.dv_dtau - nv_dtau)[np.ix_(joints, joints)].max()),
        "scale dv_dv": float(np.abs(jac.dv_dv).max()), "scale dv_dtau": float(np.abs(jac.dv_dtau).max())}


def nimble_permutation(world, dofs: list) -> np.ndarray:
    """Nimble's dof index of each rigidiff v index. Nimble's free joint: (angular, linear) in the body
    frame; rigidiff's: (linear, angular) in the body frame."""
    perm = np.zeros(world.nv, dtype=int)
    for name, jtype, _, vi in joint_layout(world):
        if jtype == "free":
            i0 = next(i for i, d in enumerate(dofs) if d not in world.joint_names)
            perm[vi:vi + 3], perm[vi + 3:vi + 6] = np.arange(i0 + 3, i0 + 6), np.arange(i0, i0 + 3)
        else:
            perm[vi] = dofs.index(name)
    return perm


def actuated(world) -> np.ndarray:
    """v indices of the one-dof joints (not the free base)."""
    return np.array([vi for _, jtype, _, vi in joint_layout(world) if jtype != "free"], dtype=int)


def contact_mode(world) -> tuple:
    """The contact mode of the last step: its contacts (shape pairs, feature types) and row classes."""
    c = world.last_contacts()
    return (tuple(zip(c.geometry_a.tolist(), c.geometry_b.tolist(), c.types)), tuple(c.row_classes))


def fd_checks(scene: Scene) -> dict:
    """The analytic blocks against (a) the timed central FD (eps FD_EPS) and (b) a mode-preserving one: per
    column, eps from 1e-6 down to 1e-9 until both perturbed steps keep the contact mode of the step (Nimble's
    tests do the same); a column that changes the mode at every eps is left out and counted."""
    world = scene.world
    q, v, tau = scene.states[0]
    jac = world.step_jacobians(q, v, tau)
    mode = contact_mode(world)
    blocks = ("dq_dq", "dq_dv", "dq_dtau", "dv_dq", "dv_dv", "dv_dtau")
    out = {"scale": max(float(np.abs(getattr(jac, b)).max()) for b in blocks)}
    fd = finite_difference_jacobians(world, q, v, tau, eps=FD_EPS)
    diffs = {b: float(np.abs(getattr(jac, b) - getattr(fd, b)).max()) for b in blocks}
    worst = max(diffs, key=diffs.get)
    out["plain"] = (diffs[worst], worst)
    n, best, skipped = world.nv, (0.0, "-"), 0
    for wrt in ("q", "v", "tau"):
        for k in range(n):
            for eps in (1e-6, 1e-7, 1e-8, 1e-9):
                sides = []
                for sign in (1.0, -1.0):
                    qq, vv, tt = q, v.copy(), tau.copy()
                    if wrt == "q":
                        e = np.zeros(n)
                        e[k] = sign * eps
                        qq = world.integrate(q, e)
                    elif wrt == "v":
                        vv[k] += sign * eps * max(1.0, abs(v[k]))
                    else:
                        tt[k] += sign * eps * max(1.0, abs(tau[k]))
                    sides.append((world.step(qq, vv, tt), contact_mode(world), (vv - v + tt - tau)[k]))
                if sides[0][1] == mode and sides[1][1] == mode:
                    break
            else:
                skipped += 1
                continue
            (qp, vp), _, hp = sides[0]
            (qm, vm), _, hm = sides[1]
            h = 2 * eps if wrt == "q" else hp - hm
            col = np.concatenate([world.difference(qm, qp), vp - vm]) / h
            ana = np.concatenate([getattr(jac, f"dq_d{wrt}")[:, k], getattr(jac, f"dv_d{wrt}")[:, k]])
            d = float(np.abs(col - ana).max())
            if d > best[0]:
                best = (d, f"d(q, v)_next/d{wrt}[{k}]")
    out["mode"] = best
    out["skipped"] = skipped
    return out


def bench_scene(scene: Scene, quick: bool, nimble_python: str | None) -> tuple[dict, dict]:
    world = scene.world
    res, checks = {"nv": world.nv}, {}
    res.update(contact_summary(world, *scene.states[0]), **{"rd mass": world.total_mass})
    repeat = 5 if quick else 41
    n = {"step": 100 if quick else 200, "jac": 20 if quick else 40, "fd": 2 * max(1, 60 // world.nv)}
    res["n step"] = n["step"]
    fns = rd_timers(scene, n)
    calls = {"rd step": n["step"], "rd step_jacobians": n["jac"], "rd last_contacts": n["step"],
             "rd central FD": n["fd"], "rd set_warm_start+step": n["step"], "rd set_warm_start": n["step"]}
    try:
        fns.update(mujoco_timers(scene, res))
        calls["mj setState+step"] = calls["mj setState"] = n["step"]
    except ImportError:
        checks["mujoco"] = "not installed"
    res.update(per_round(fns, calls, repeat))
    if "mj setState" in res:
        res["mj_step"] = list(np.array(res.pop("mj setState+step")) - np.array(res.pop("mj setState")))
    if "rd set_warm_start" in res:
        res["rd warm step"] = list(np.array(res.pop("rd set_warm_start+step")) - np.array(res.pop("rd set_warm_start")))
    if nimble_python:
        bench_nimble(nimble_python, scene, 3 if quick else 15, 10 if quick else 20, res, checks)
    else:
        checks["nimble"] = "not installed"
    checks["fd"] = fd_checks(scene)
    return res, checks


# ---------------------------------------------------------------------------------------------- report


def spread(values) -> str:
    """The median and the interquartile range (a preempted batch makes the extremes meaningless)."""
    p25, p50, p75 = np.percentile(values, [25, 50, 75])
    return f"{p50:8.2f} [{p25:.2f}-{p75:.2f}]"


def print_scene(name: str, res: dict, checks: dict, notes: list) -> None:
    med = {k: float(np.median(v)) for k, v in res.items() if isinstance(v, list) and v and isinstance(v[0], float)}
    print(f"\n{name}: nv {res['nv']}; rigidiff: {res['contacts']} contacts, {res['rows']} constraint rows, "
          f"{res['clamping']} clamping ({res['active']} not separating), normal rows clamping on "
          f"{', '.join(res['bodies']) or 'no body'}; deepest {1e3 * res['depth']:.3f} mm; LCP {res['solver']}")
    peers = []
    if "mj contacts" in res:
        peers.append(f"mujoco {res['mj contacts']} contacts, total mass {res['mj mass']:.3f} kg (rigidiff "
                     f"{res['rd mass']:.3f})")
    if "nimble contacts" in res:
        peers.append(f"nimble {res['nimble contacts']} contacts")
    for note in notes + ([", ".join(peers)] if peers else []):
        print(f"  {note}")
    print(f"  {'per call':<44} {'us (median)':>12}")
    rows = [("rd step", "rd step"), ("rd warm step (its own warm start, as mj_step)", "rd warm step"),
            ("rd step_jacobians", "rd step_jacobians"),
            ("rd last_contacts (built on access, not in step_jacobians)", "rd last_contacts"),
            (f"rd central FD (eps {FD_EPS:g}, {6 * res['nv']} steps)", "rd central FD"),
            ("mj_step", "mj_step"), ("nimble step", "nimble step"),
            ("nimble forward pass + Jacobians", "nimble step+jacobians"),
            ("(rd step between Nimble's rounds)", "nimble rd step"),
            ("(rd step_jacobians between Nimble's rounds)", "nimble rd step_jacobians")]
    for label, key in rows:
        if key in med:
            print(f"  {label:<44} {med[key]:12.1f}")
    print(f"  {'ratio':<44} {'median [quartiles over rounds]':<30} target")
    ratio_rows = []
    if "rd central FD" in res:
        r = np.array(res["rd central FD"]) / np.array(res["rd step_jacobians"])
        floor = 6 * res["nv"] * np.array(res["rd step"]) / np.array(res["rd step_jacobians"])
        tgt = TARGETS["fd"]
        met = ("yes" if np.median(r) >= tgt else "NO") if name == "talos" else "-"
        ratio_rows.append(("FD / step_jacobians (x faster)", r, f">= {tgt:g}x (talos) {met}"))
        ratio_rows.append(("6 nv x step / step_jacobians (FD's floor)", floor, ""))
        r = np.array(res["rd step_jacobians"]) / np.array(res["rd step"])
        ratio_rows.append(("step_jacobians / step (time)", r, ""))
    if "nimble step+jacobians" in res:
        r = np.array(res["nimble step+jacobians"]) / np.array(res["nimble rd step_jacobians"])
        tgt = TARGETS["nimble"]
        met = "yes" if np.median(r) >= tgt else "NO"
        ratio_rows.append(("nimble fwd+Jacobians / step_jacobians", r, f">= {tgt:g}x {met}"))
    if "mj_step" in res:
        r = np.array(res["rd step"]) / np.array(res["mj_step"])
        tgt = TARGETS["mj"]
        ratio_rows.append(("rd step / mj_step (time)", r, f"<= {tgt:g}x {'yes' if np.median(r) <= tgt else 'NO'}"))
        if "rd warm step" in res:
            r = np.array(res["rd warm step"]) / np.array(res["mj_step"])
            ratio_rows.append(("rd warm step / mj_step (both warm-started)", r, "<= 1.2x (talos)"))
    if "nimble step" in res:
        ratio_rows.append(("nimble step / rd step", np.array(res["nimble step"]) / np.array(res["nimble rd step"]),
                           ""))
    for label, r, tgt in ratio_rows:
        print(f"  {label:<44} {spread(r):<30} {tgt}")
    print("  checks (untimed):")
    fd = checks["fd"]
    print(f"    analytic vs own central FD (eps {FD_EPS:g}, the timed one): max |diff| {fd['plain'][0]:.1e} "
          f"(in {fd['plain'][1]}; largest entry {fd['scale']:.1e})")
    print(f"    analytic vs own mode-preserving central FD: max |diff| {fd['mode'][0]:.1e} (in {fd['mode'][1]}); "
          f"{fd['skipped']} of {3 * res['nv']} columns change the contact mode at every eps down to 1e-9")
    nim = checks.get("nimble")
    if isinstance(nim, dict):
        print(f"    nimble velocity Jacobians vs ours: max |diff| dv_dv {nim['dv_dv']:.1e} (largest entry "
              f"{nim['scale dv_dv']:.1e}), dv_dtau {nim['dv_dtau']:.1e} ({nim['scale dv_dtau']:.1e}); "
              f"joints only: {nim['dv_dv joints']:.1e}, {nim['dv_dtau joints']:.1e}")
    elif nim is not None:
        print(f"    nimble: {nim}")
    if "mujoco" in checks:
        print(f"    mujoco: {checks['mujoco']}")


SCENES = {"jump_worm": rd_jump_worm, "talos": rd_talos}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), choices=list(SCENES))
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    ap.add_argument("--nimble-python", default=os.environ.get("RIGIDIFF_NIMBLE_PYTHON"),
                    help="Python interpreter with nimblephysics installed (default: $RIGIDIFF_NIMBLE_PYTHON)")
    args = ap.parse_args(argv)
    if not args.nimble_python:
        print("nimble: not installed (pass --nimble-python or set RIGIDIFF_NIMBLE_PYTHON); timing the others")
    versions = {}
    for name in args.scenes:
        scene = SCENES[name]()
        res, checks = bench_scene(scene, args.quick, args.nimble_python)
        versions.update({k: v for k, v in res.items() if k.endswith("version")})
        print_scene(name, res, checks, scene.notes)
    print("\nrigidiff " + rd.__version__ + "".join(f", {k.split()[0]} {v}" for k, v in sorted(versions.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``rigidiff demo``: build robots, simulate them (with contact), check Jacobians against finite differences,
report each check in plain words, and draw the quadruped falling onto the ground (a PNG frame strip, when
matplotlib is installed)."""

from __future__ import annotations

import time

import numpy as np

import rigidiff as rd
from rigidiff.testing import check_jacobians


def build_cartpole() -> rd.Skeleton:
    """The cartpole of the README, built by hand."""
    sk = rd.Skeleton("cartpole")
    cart = sk.add_body("cart", joint=rd.PrismaticJoint("slider", axis=(1, 0, 0)),
                       inertia=rd.Inertia(mass=1.0, com=(0, 0, 0), rotational_inertia=np.eye(3) * 0.01))
    pole = sk.add_body("pole", parent=cart, joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                       joint_origin=rd.Transform(translation=(0, 0, 0.1)),
                       inertia=rd.Inertia.from_shape(rd.Capsule(radius=0.02, length=1.0), mass=0.1,
                                                     origin=rd.Transform(translation=(0, 0, 0.5))))
    pole.add_shape(rd.Capsule(radius=0.02, length=1.0), origin=rd.Transform(translation=(0, 0, 0.5)))
    return sk


def _pose_log(T0: np.ndarray, T1: np.ndarray) -> np.ndarray:
    """(linear, angular) displacement from pose T0 to T1: origin offset and rotation vector, world axes."""
    from scipy.spatial.transform import Rotation

    rot = Rotation.from_matrix(T1[:3, :3] @ T0[:3, :3].T).as_rotvec()
    return np.concatenate([T1[:3, 3] - T0[:3, 3], rot])


def jacobian_fd_error(world: rd.World, q: np.ndarray, body: str, eps: float = 1e-6) -> float:
    """Max relative error of body_jacobian(frame="world") against central differences of body poses."""
    J = world.body_jacobian(q, body)
    Jfd = np.zeros_like(J)
    for k in range(world.nv):
        d = np.zeros(world.nv)
        d[k] = eps
        Tp = world.body_pose(world.integrate(q, d), body)
        Tm = world.body_pose(world.integrate(q, -d), body)
        Jfd[:, k] = _pose_log(Tm, Tp) / (2 * eps)
    return float(np.abs(J - Jfd).max() / max(1.0, np.abs(J).max()))


def contact_jacobian_error(world, q, v, tau, eps=1e-7):
    """Largest difference between world.step_jacobians and central differences of world.step over the
    input columns whose perturbed steps keep the contact mode (the rows' classes, and each contact on its
    side of the touching distance, rest_depth / 50: a larger gap closes, a closer contact holds); (error,
    number of columns checked)."""
    jac = world.step_jacobians(q, v, tau)
    touching = world.contact_options().rest_depth / 50.0
    mode = (list(jac.contacts.row_classes), list(jac.contacts.distances > touching))
    nv = world.nv
    analytic = np.block([[jac.dq_dq, jac.dq_dv, jac.dq_dtau], [jac.dv_dq, jac.dv_dv, jac.dv_dtau]])
    err, checked = 0.0, 0
    for col in range(3 * nv):
        outs = []
        for s in (1.0, -1.0):
            d = np.zeros(3 * nv)
            d[col] = s * eps
            qn, vn = world.step(world.integrate(q, d[:nv]), v + d[nv:2 * nv], tau + d[2 * nv:])
            c = world.last_contacts()
            outs.append((qn, vn, (list(c.row_classes), list(c.distances > touching))))
        if outs[0][2] != mode or outs[1][2] != mode:
            continue
        fd = np.concatenate([world.difference(outs[1][0], outs[0][0]), outs[0][1] - outs[1][1]]) / (2 * eps)
        err = max(err, float(np.abs(analytic[:, col] - fd).max()))
        checked += 1
    return err, checked


def box_slide_distance(mu: float, v0: float) -> float:
    """Distance a 20 cm box launched at v0 along the ground slides before friction stops it."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=mu)
    sk = rd.Skeleton("box")
    box = sk.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(rd.Box((0.2, 0.2, 0.2)), 1.0))
    box.add_shape(rd.Box((0.2, 0.2, 0.2)), friction=mu)
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2] = 0.1
    v = np.zeros(6)
    v[0] = v0
    Q, _ = world.rollout(q, v, np.zeros((int(1.2 * v0 / (mu * 9.81) / world.dt), 6)))
    return float(Q[-1, 0] - q[0])


def write_picture(world: rd.World, Q, path) -> str:
    """Draw the frame strip of trajectory Q into ``path``; the report line saying where, or why not."""
    t0 = time.perf_counter()
    try:
        from rigidiff.viz import frame_strip

        frame_strip(world, Q, path, n_frames=4)
    except ImportError as exc:
        return f"picture skipped: {exc}"
    except OSError as exc:
        return f"picture not written: {exc}"
    return (f"picture of the quadruped falling onto the ground and landing on its feet (4 frames over "
            f"{(len(Q) - 1) * world.dt:.1f} s): {path} ({time.perf_counter() - t0:.2f} s)")


class _Report:
    """The demo's report: one line per check, saying in plain words what it shows, what was measured and
    the bound it must meet, marked ok or FAILED."""

    def __init__(self):
        self.lines = ["rigidiff demo: each line below is one check of the engine, marked ok or FAILED", ""]
        self.results = []

    def check(self, ok, what: str, measured: str) -> None:
        ok = bool(ok)
        self.results.append(ok)
        self.lines.append(f"[{'ok' if ok else 'FAILED'}] {what}")
        self.lines.append(f"     {measured}")

    def note(self, text: str) -> None:
        self.lines.append(f"     {text}")

    @property
    def passed(self) -> bool:
        return all(self.results)


def run_demo(fast: bool = False, picture=None) -> int:
    """Run the demo and print its report; with ``picture`` (a path), also draw the quadruped falling onto
    the ground there. Returns 0 when every check passed, else 1."""
    t_start = time.perf_counter()
    report = _Report()

    # 1. a cartpole built by hand: free swing, energy conservation
    world = rd.World(dt=1e-3)
    world.add_skeleton(build_cartpole())
    steps = 500 if fast else 3000
    q0 = np.array([0.0, 0.5])
    Q, V = world.rollout(q0, np.zeros(world.nv), np.zeros((steps, world.nv)))
    energy = np.array([world.kinetic_energy(q, v) + world.potential_energy(q) for q, v in zip(Q, V)])
    drift = np.abs(energy - energy[0]).max() / abs(energy[0] - world.potential_energy(np.array([0.0, np.pi])))
    report.check(drift < 0.01, f"energy: the pole of a cartpole built by hand, let go {q0[1]:g} rad from upright, "
                 f"falls and swings freely for {steps * world.dt:g} s, and the total energy stays constant",
                 f"energy drift {100 * drift:.3f} % of the swing energy (must stay under 1 %)")

    # 2. a 7-dof arm from URDF: Jacobians against finite differences, dynamics round trip
    arm = rd.World(dt=1e-3)
    arm.add_skeleton(rd.load_urdf(rd.models.path("arm7")))
    rng = np.random.default_rng(7)
    q = arm.random_configuration(rng)
    v = rng.normal(size=arm.nv)
    tip = arm.body_names[-1]
    jac_err = jacobian_fd_error(arm, q, tip)
    report.check(jac_err < 1e-6, f"kinematics: the Jacobian of the arm7's {tip!r} (loaded from URDF) predicts how "
                 "the hand moves when each joint turns a little",
                 f"largest error against moving the joints by 1e-6 rad: {jac_err:.1e} relative (must be < 1e-6)")
    tau = rng.normal(size=arm.nv)
    a = arm.forward_dynamics(q, v, tau)
    roundtrip = np.abs(arm.inverse_dynamics(q, v, a) - tau).max()
    report.check(roundtrip < 1e-9, "dynamics: the torques that produce the arm's accelerations (inverse dynamics) "
                 "are the torques it was given (forward dynamics)",
                 f"largest difference {roundtrip:.1e} N m (must be < 1e-9)")
    step_report = check_jacobians(arm, q, v, tau, wrt=("q", "v", "tau", "gravity", f"{tip}/mass"),
                                  method="ridders")
    step_err = step_report.max_rel_error
    report.check(step_report.passed and step_err < 1e-6, "step gradients: the analytic derivatives of one arm step "
                 "(with respect to its state, torques, gravity and hand mass) agree with finite differences",
                 f"largest error {step_err:.1e} relative (must be < 1e-6); per block:")
    report.lines += ["       " + row for row in str(step_report).splitlines()[1:]]
    report.note("the same check on random states of any robot: rigidiff check-grad arm7 --parameters all")

    # reverse mode: the gradient of a loss of a whole rollout in one pass
    T = 100
    taus = 0.5 * rng.normal(size=(T, arm.nv))
    weights = rng.normal(size=(T + 1, arm.nv))

    def loss(q_start):
        return float(np.sum(weights * arm.rollout(q_start, v, taus)[1]))

    traj = arm.rollout(q, v, taus, record=True)
    grad = traj.backward(dL_dV=weights).q
    fd = np.array([(loss(arm.integrate(q, 1e-6 * e)) - loss(arm.integrate(q, -1e-6 * e))) / 2e-6
                   for e in np.eye(arm.nv)])
    rollout_err = float(np.abs(grad - fd).max() / np.abs(fd).max())
    report.check(rollout_err < 1e-6, f"reverse mode: one backward pass through a {T}-step arm rollout gives the "
                 "gradient of a loss of all its velocities with respect to the starting pose",
                 f"largest error against finite differences {rollout_err:.1e} relative (must be < 1e-6)")

    # 3. a floating quadruped in free fall: the centre of mass falls at g whatever the legs do
    quad = rd.World(dt=1e-3)
    quad.add_skeleton(rd.load_urdf(rd.models.path("quadruped"), floating_base=True))
    qq = quad.random_configuration(np.random.default_rng(3))
    vq = np.zeros(quad.nv)
    Jc = quad.center_of_mass_jacobian(qq)
    com_acc = Jc @ quad.forward_dynamics(qq, vq, np.zeros(quad.nv))  # dJ/dt v vanishes at v = 0
    report.check(np.allclose(com_acc, quad.gravity, atol=1e-9), "free fall: the centre of mass of a floating "
                 "quadruped in a random pose accelerates at g, whatever its legs do",
                 f"acceleration {np.array2string(com_acc, precision=4)} m/s^2 (must be gravity, "
                 f"{quad.gravity.tolist()}, within 1e-9)")

    # 4. contact: the quadruped dropped onto the ground lands on its four feet and stands under a joint PD;
    # a box slides to rest after v0^2 / (2 mu g)
    quad.add_ground(friction=0.8)
    qs = quad.neutral_configuration()
    qs[2] = 0.6  # feet 26 cm above the ground
    q_ref, vs = qs.copy(), np.zeros(quad.nv)
    falling = [qs]
    for _ in range(500 if fast else 2000):
        tau_pd = np.zeros(quad.nv)
        tau_pd[6:] = 20.0 * (q_ref[7:] - qs[7:]) - 0.3 * vs[6:]
        qs, vs = quad.step(qs, vs, tau_pd)
        falling.append(qs)
    feet = quad.last_contacts()
    weight_ratio = float(feet.normal_impulses.sum() / (quad.total_mass * 9.81 * quad.dt))
    report.check(len(feet) == 4 and abs(weight_ratio - 1.0) < 1e-6 and np.abs(vs).max() < 1e-6,
                 f"contact: the quadruped dropped from 26 cm lands on its feet and comes to rest "
                 f"({len(falling) - 1} steps)",
                 f"{len(feet)} contacts ({', '.join(sorted(set(feet.body_a)))}) carry {weight_ratio:.6f} times its "
                 f"weight; base at {qs[2]:.3f} m, largest speed {np.abs(vs).max():.1e} (must be 4 feet, the weight "
                 f"within 1e-6, speeds < 1e-6)")
    # the standing quadruped's step Jacobians through its foot contacts, against central differences
    # that keep every constraint row's class (the contact mode)
    tau_pd = np.zeros(quad.nv)
    tau_pd[6:] = 20.0 * (q_ref[7:] - qs[7:]) - 0.3 * vs[6:]
    contact_err, contact_cols = contact_jacobian_error(quad, qs, vs, tau_pd)
    report.check(contact_err < 1e-6 and contact_cols >= 2 * quad.nv, "gradients through contact: the standing "
                 "quadruped's step derivatives, with its feet on the ground, agree with finite differences",
                 f"largest error {contact_err:.1e} (must be < 1e-6), over the {contact_cols} of {3 * quad.nv} "
                 "input directions whose small changes keep the contact mode (which rows push, stick or slide)")
    slide = box_slide_distance(mu=0.5, v0=2.0)
    expected = 2.0**2 / (2 * 0.5 * 9.81)
    report.check(abs(slide - expected) < 0.02 * expected, "friction: a box pushed to 2 m/s on the ground "
                 "(friction coefficient 0.5) slides as far as the textbook says",
                 f"it stops after {slide:.4f} m; v0^2 / (2 mu g) = {expected:.4f} m (must agree within 2 %)")

    # timing, for information
    n = 2000 if fast else 20000
    t0 = time.perf_counter()
    for _ in range(n):
        arm.step(q, v, tau)
    t_step = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    for _ in range(n // 4):
        arm.step_jacobians(q, v, tau)
    t_jac = (time.perf_counter() - t0) / (n // 4)
    t0 = time.perf_counter()
    arm.rollout(q, v, np.zeros((1000, arm.nv)))
    t_roll = (time.perf_counter() - t0) / 1000
    lines = report.lines + ["", f"timing (arm7): world.step {1e6 * t_step:.2f} us per call, rollout "
                                f"{1e6 * t_roll:.2f} us per step, step + its Jacobians {1e6 * t_jac:.2f} us per call"]
    if picture is not None:
        lines.append(write_picture(quad, np.array(falling[:401]), picture))
    n_checks = len(report.results)
    verdict = f"all {n_checks} checks passed" if report.passed else \
        f"{report.results.count(False)} of {n_checks} checks FAILED"
    lines.append(f"{verdict} in {time.perf_counter() - t_start:.2f} s")
    print("\n".join(lines))
    return 0 if report.passed else 1

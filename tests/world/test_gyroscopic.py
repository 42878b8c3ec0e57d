"""World(gyroscopic="implicit"), the default (docs/conventions.md, Time stepping): a free body, or a body on a
ball joint, keeps its world-frame angular momentum and its energy while it spins, flips about its
intermediate axis with the right period, and every derivative of the step (state, torques, parameters,
reverse mode, through contact) still matches finite differences of the step itself."""

import numpy as np
import pytest
from rdsupport import assert_close
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import rigidiff as rd
from rigidiff.testing import check_jacobians

INERTIA = np.diag([0.1, 0.2, 0.25])
MAJOR_SPIN = np.array([0.2, 0.1, 4.0])  # near z, the axis of the largest moment
INTERMEDIATE_SPIN = np.array([0.3, 5.0, 0.1])  # near y: it flips (Dzhanibekov) every 3.6 s


def spinning_world(gyroscopic, dt=1e-3, integrator="semi_implicit"):
    world = rd.World(dt=dt, gravity=(0.0, 0.0, 0.0), integrator=integrator, gyroscopic=gyroscopic)
    sk = rd.Skeleton("spinner")
    sk.add_body("body", joint=rd.FreeJoint("free"), inertia=rd.Inertia(1.0, rotational_inertia=INERTIA))
    world.add_skeleton(sk)
    return world


def spin(world, w0, seconds):
    """Rollout of a torque-free spin from the identity; returns Q, V."""
    q0 = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    return world.rollout(q0, np.r_[0.0, 0.0, 0.0, w0], np.zeros((int(round(seconds / world.dt)), 6)))


def momentum_and_energy(Q, V):
    """World-frame angular momentum (N, 3) and kinetic energy (N,) of the spinner (centre of mass at its origin)."""
    R = Rotation.from_quat(Q[:, 3:7]).as_matrix()
    w = V[:, 3:6]
    return np.einsum("nij,jk,nk->ni", R, INERTIA, w), 0.5 * np.einsum("ni,ij,nj->n", w, INERTIA, w)


def relative_drift(L, E):
    return np.abs(L - L[0]).max() / np.linalg.norm(L[0]), np.abs(E - E[0]).max() / E[0]


@pytest.mark.parametrize("w0", [MAJOR_SPIN, INTERMEDIATE_SPIN], ids=["major", "intermediate"])
def test_a_spinning_free_body_keeps_its_momentum_and_energy_for_10_s(w0):
    drift_L, drift_E = relative_drift(*momentum_and_energy(*spin(spinning_world("implicit"), w0, 10.0)))
    assert drift_L < 1e-6 and drift_E < 1e-3  # the targets; the update does much better:
    assert drift_L < 1e-12  # round-off (1.5e-14 and 9.9e-14 measured)
    assert drift_E < 2e-6  # O(dt^2) without drift (1.5e-9 and 6.2e-7 measured)
    # the explicit gyroscopic term (MuJoCo's Euler) drifts far more
    explicit_L, explicit_E = relative_drift(*momentum_and_energy(*spin(spinning_world("explicit"), w0, 10.0)))
    assert explicit_L > 100 * drift_L and explicit_E > 3 * drift_E


def flip_times(t, wy):
    """Times where the body rate about the intermediate axis changes sign (linear interpolation)."""
    k = np.nonzero(np.sign(wy[1:]) != np.sign(wy[:-1]))[0]
    return t[k] - wy[k] * (t[k + 1] - t[k]) / (wy[k + 1] - wy[k])


def reference_flip_period(w0, seconds):
    """Mean time between two flips of Euler's equations, I w' = -w x I w, solved to 1e-12."""
    Ii = np.linalg.inv(INERTIA)
    sol = solve_ivp(lambda t, w: -Ii @ np.cross(w, INERTIA @ w), (0.0, seconds), w0, method="DOP853",
                    rtol=1e-12, atol=1e-12, dense_output=True)
    t = np.linspace(0.0, seconds, 200_001)
    return np.diff(flip_times(t, sol.sol(t)[1])).mean()


def test_the_intermediate_axis_flips_with_the_period_of_the_exact_motion():
    seconds = 10.0
    reference = reference_flip_period(INTERMEDIATE_SPIN, seconds)
    errors = {}
    for mode in ("implicit", "explicit"):
        world = spinning_world(mode)
        Q, V = spin(world, INTERMEDIATE_SPIN, seconds)
        flips = flip_times(np.arange(len(V)) * world.dt, V[:, 4])
        assert len(flips) == 3  # it does flip, three times in 10 s
        errors[mode] = abs(np.diff(flips).mean() / reference - 1.0)
    assert errors["implicit"] < 2e-5
    assert errors["explicit"] > 10 * errors["implicit"]


def test_only_free_and_ball_joints_carrying_one_body_on_a_static_parent_change():
    """A floating base with a limb, or a ball joint below a moving body, keeps the explicit term: the step is
    the same bit for bit under both settings."""
    worlds = []
    for mode in ("explicit", "implicit"):
        world = rd.World(dt=1e-3, gyroscopic=mode)
        sk = rd.Skeleton("robot")
        base = sk.add_body("base", joint=rd.FreeJoint("root"), inertia=rd.Inertia(2.0, rotational_inertia=INERTIA))
        arm = sk.add_body("arm", parent=base, joint=rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0)),
                          joint_origin=rd.Transform(translation=(0.2, 0.0, 0.0)),
                          inertia=rd.Inertia(0.5, com=(0.1, 0.0, 0.0), rotational_inertia=np.eye(3) * 0.01))
        sk.add_body("wrist", parent=arm, joint=rd.BallJoint("wrist"), joint_origin=rd.Transform(translation=(0.2, 0, 0)),
                    inertia=rd.Inertia(0.3, com=(0.05, 0.0, 0.0), rotational_inertia=INERTIA * 0.1))
        world.add_skeleton(sk)
        worlds.append(world)
    rng = np.random.default_rng(0)
    q = worlds[0].random_configuration(rng)
    v = rng.normal(size=worlds[0].nv) * 3.0
    tau = rng.normal(size=worlds[0].nv)
    (q0, v0), (q1, v1) = (w.step(q, v, tau) for w in worlds)
    np.testing.assert_array_equal(q0, q1)
    np.testing.assert_array_equal(v0, v1)


def test_a_body_spinning_about_an_offset_centre_of_mass_keeps_its_momentum_about_it():
    """The implicit update acts through the body's inertia at its origin: the couple turns the body about its
    centre of mass, whose velocity the linear update carries (first order, as under the explicit term)."""
    world = offset_free_body(passive=False, dt=1e-3)
    world.gravity = (0.0, 0.0, 0.0)
    inertia = world.skeletons[0].body("box").inertia
    q0 = np.r_[0.3, -0.2, 0.5, Rotation.from_rotvec([0.2, 0.3, 0.1]).as_quat()]
    Q, V = world.rollout(q0, np.r_[0.4, -0.1, 0.2, 2.0, -3.0, 15.0], np.zeros((2000, 6)))
    R = Rotation.from_quat(Q[:, 3:]).as_matrix()
    L = np.einsum("nij,jk,nk->ni", R, inertia.rotational_inertia, V[:, 3:])
    assert np.abs(L - L[0]).max() < 1e-12 * np.linalg.norm(L[0])
    assert np.abs(V[-1, 3:] - V[0, 3:]).max() > 1.0  # it does tumble


def test_every_single_body_of_a_world_gets_the_implicit_update():
    """Bodies after a robot with a floating base, side by side: each steps as it does alone."""
    def spinner(name):
        sk = rd.Skeleton(name)
        sk.add_body("body", joint=rd.FreeJoint("free"), inertia=rd.Inertia(1.0, rotational_inertia=INERTIA))
        return sk

    def robot():
        sk = rd.Skeleton("robot")
        base = sk.add_body("base", joint=rd.FreeJoint("root"), inertia=rd.Inertia(2.0, rotational_inertia=INERTIA))
        sk.add_body("arm", parent=base, joint=rd.RevoluteJoint("hinge"), inertia=rd.Inertia(0.5, com=(0.1, 0.0, 0.0),
                                                                                           rotational_inertia=np.eye(3) * 0.01))
        return sk

    world = rd.World(gravity=(0.0, 0.0, 0.0))
    for sk in (robot(), spinner("a"), spinner("b")):
        world.add_skeleton(sk)
    q = world.neutral_configuration()
    v = np.r_[np.zeros(7), 0.0, 0.0, 0.0, MAJOR_SPIN, 0.0, 0.0, 0.0, INTERMEDIATE_SPIN]
    _, v_next = world.step(q, v, np.zeros(world.nv))
    alone = spinning_world("implicit")
    for w0, rows in ((MAJOR_SPIN, slice(7, 13)), (INTERMEDIATE_SPIN, slice(13, 19))):
        _, expected = alone.step(np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], np.r_[0.0, 0.0, 0.0, w0], np.zeros(6))
        assert_close(v_next[rows], expected, rtol=1e-13, floor=1.0, what="single body")


def spinning_top(gyroscopic, gravity=(0.0, 0.0, -9.81)):
    """A body on a ball joint fixed in the world, its centre of mass 0.1 m above the pivot."""
    world = rd.World(dt=1e-3, gravity=gravity, gyroscopic=gyroscopic)
    sk = rd.Skeleton("top")
    sk.add_body("top", joint=rd.BallJoint("pivot"),
                inertia=rd.Inertia(0.5, com=(0.0, 0.0, 0.1), rotational_inertia=np.diag([0.002, 0.002, 0.004])))
    world.add_skeleton(sk)
    return world


def test_a_body_on_a_ball_joint_keeps_its_momentum_about_the_pivot():
    world = spinning_top("implicit", gravity=(0.0, 0.0, 0.0))
    Io = world.mass_matrix(world.neutral_configuration())  # rotational inertia about the pivot, body axes
    q0 = Rotation.from_rotvec([0.3, 0.0, 0.0]).as_quat()
    Q, V = world.rollout(q0, np.array([1.0, -2.0, 30.0]), np.zeros((5000, 3)))
    R = Rotation.from_quat(Q).as_matrix()
    L = np.einsum("nij,jk,nk->ni", R, Io, V)
    assert np.abs(L - L[0]).max() < 1e-10 * np.linalg.norm(L[0])


@pytest.mark.parametrize("build", ["free", "ball"])
def test_step_acceleration_undoes_the_implicit_update(build):
    """World.step_acceleration of recorded velocities gives back the generalized forces that acted."""
    world = offset_free_body() if build == "free" else spinning_top("implicit")
    rng = np.random.default_rng(2)
    q0 = world.neutral_configuration()
    q0[-4:] = Rotation.from_rotvec([0.4, 0.1, -0.3]).as_quat()
    v0 = np.r_[0.7, -0.4, 1.1, 6.0, -9.0, 12.0][-world.nv:]
    taus = rng.normal(size=(20, world.nv))
    Q, V = world.rollout(q0, v0, taus)
    A = world.step_acceleration(V[:-1], V[1:])
    damping = world.joint(world.joint_names[0]).damping  # implicit in the step: D v' = D (v + dt a)
    for q, v, t, a in zip(Q[:-1], V[:-1], taus, A):
        assert_close(world.inverse_dynamics(q, v, a), t - damping * (v + world.dt * a), rtol=1e-9, floor=1.0,
                     what="generalized forces")
    naive = (V[1:] - V[:-1]) / world.dt  # without the maps taken back
    assert np.abs(naive - A).max() > 1.0


# ------------------------------------------------------------------------------------------ derivatives


def offset_free_body(gyroscopic="implicit", contact=False, dt=5e-3, passive=True):
    """A box with its centre of mass off its origin (B couples the linear and angular parts of the implicit
    update) and, if passive, damping and armature on its free joint (A and B then differ from the body's
    inertia)."""
    shape = rd.Box((0.2, 0.3, 0.1))
    world = rd.World(dt=dt, gyroscopic=gyroscopic)
    sk = rd.Skeleton("body")
    joint = rd.FreeJoint("free", damping=0.05, armature=0.01) if passive else rd.FreeJoint("free")
    b = sk.add_body("box", joint=joint,
                    inertia=rd.Inertia.from_shape(shape, mass=1.3, origin=rd.Transform(translation=(0.02, -0.01, 0.03))))
    b.add_shape(shape, friction=0.6)
    world.add_skeleton(sk)
    if contact:
        world.add_ground(friction=0.6)
        world.contact_options(warm_start=False)
    return world


@pytest.mark.parametrize("passive", [False, True], ids=["rigid", "passive"])
def test_step_jacobians_of_a_spinning_free_body_match_finite_differences(passive):
    world = offset_free_body(passive=passive)
    q = np.r_[0.1, -0.2, 1.0, Rotation.from_rotvec([0.4, 0.1, -0.3]).as_quat()]
    v = np.r_[0.7, -0.4, 1.1, 6.0, -9.0, 12.0]
    tau = np.r_[0.3, 0.1, -0.2, 0.05, -0.02, 0.01]
    check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), method="ridders").raise_if_failed()
    # the implicit update changes the step's velocity Jacobian: it is not the explicit one
    explicit = offset_free_body("explicit", passive=passive).step_jacobians(q, v, tau)
    assert np.abs(world.step_jacobians(q, v, tau).dv_dv - explicit.dv_dv).max() > 1e-4


def test_step_jacobians_of_a_spinning_top_match_finite_differences():
    world = spinning_top("implicit")
    q = Rotation.from_rotvec([0.3, -0.2, 0.1]).as_quat()
    v = np.array([1.0, -2.0, 30.0])
    check_jacobians(world, q, v, np.array([0.01, 0.0, -0.02]), wrt=("q", "v", "tau"),
                    method="ridders").raise_if_failed()


@pytest.mark.parametrize("spin_rate", [0.0, 8.0], ids=["landing", "spinning"])
def test_step_jacobians_of_a_spinning_box_landing_on_the_ground_match_finite_differences(spin_rate):
    """The box lands flat (four sticking corners) while spinning about the vertical, or about a tilted axis."""
    world = offset_free_body(contact=True, dt=1e-3)
    q = np.r_[0.0, 0.0, 0.0499, 0.0, 0.0, 0.0, 1.0]
    v = np.r_[0.0, 0.0, -0.5, 0.0, 0.0, spin_rate]
    tau = np.zeros(6)
    world.step(q, v, tau)
    assert len(world.last_contacts()) == 4
    check_jacobians(world, q, v, tau, wrt=("q", "v", "tau"), method="central", eps=1e-7,
                    rtol=1e-5).raise_if_failed()


@pytest.mark.parametrize("contact", [False, True], ids=["free", "contact"])
def test_step_vjp_equals_the_transposed_jacobians(contact):
    world = offset_free_body(contact=contact)
    q = np.r_[0.0, 0.0, 0.0499 if contact else 1.0, Rotation.from_rotvec([0.0, 0.0, 0.3]).as_quat()]
    v = np.r_[0.5, 0.2, -0.3, 0.3, -0.2, 9.0]
    tau = np.r_[0.1, 0.0, 0.2, 0.0, 0.01, 0.0]
    gq, gv = np.random.default_rng(3).normal(size=(2, 6))
    J = world.step_jacobians(q, v, tau)
    g = world.step_vjp(q, v, tau, gq, gv)
    assert_close(g.q, J.dq_dq.T @ gq + J.dv_dq.T @ gv, rtol=1e-10, floor=1.0, what="g_q")
    assert_close(g.v, J.dq_dv.T @ gq + J.dv_dv.T @ gv, rtol=1e-10, floor=1.0, what="g_v")
    assert_close(g.tau, J.dq_dtau.T @ gq + J.dv_dtau.T @ gv, rtol=1e-10, floor=1.0, what="g_tau")


def test_rollout_backward_matches_central_differences():
    world = spinning_world("implicit", dt=1e-2)
    q0 = np.r_[0.0, 0.0, 0.0, Rotation.from_rotvec([0.2, -0.1, 0.3]).as_quat()]
    v0 = np.r_[0.1, 0.2, -0.1, INTERMEDIATE_SPIN + [0.3, 0.0, -0.2]]
    taus = np.random.default_rng(1).normal(size=(30, 6)) * 0.05
    gv_last = np.r_[0.3, -0.2, 0.1, 1.0, -0.5, 0.7]

    def loss(q0_, v0_, taus_):
        return world.rollout(q0_, v0_, taus_)[1][-1] @ gv_last

    traj = world.rollout(q0, v0, taus, record=True)
    GV = np.zeros_like(traj.v)
    GV[-1] = gv_last
    g = traj.backward(None, GV)
    eps = 1e-6
    fd_v = [(loss(q0, v0 + eps * e, taus) - loss(q0, v0 - eps * e, taus)) / (2 * eps) for e in np.eye(6)]
    fd_q = [(loss(world.integrate(q0, eps * e), v0, taus) - loss(world.integrate(q0, -eps * e), v0, taus)) / (2 * eps)
            for e in np.eye(6)]
    dtau = np.zeros_like(taus)
    dtau[7, 4] = eps
    fd_tau = (loss(q0, v0, taus + dtau) - loss(q0, v0, taus - dtau)) / (2 * eps)
    assert_close(g.v, fd_v, rtol=1e-7, floor=1.0, what="g_v0")
    assert_close(g.q, fd_q, rtol=1e-7, floor=1.0, what="g_q0")
    assert g.tau[7, 4] == pytest.approx(fd_tau, rel=1e-6, abs=1e-8)


# ------------------------------------------------------------------------------------------ the option


def test_the_option_is_validated_kept_and_read_back():
    assert rd.World().gyroscopic == "implicit"  # the default
    world = spinning_world("explicit")
    assert world.gyroscopic == "explicit"
    world.gyroscopic = "implicit"
    assert world.gyroscopic == "implicit" and world._copy().gyroscopic == "implicit"
    with pytest.raises(ValueError, match="gyroscopic must be one of"):
        rd.World(gyroscopic="midpoint")
    with pytest.raises(TypeError, match="gyroscopic must be a str"):
        world.gyroscopic = 1
    assert world.gyroscopic == "implicit"  # a refused value leaves the setting
    world.rebuild()
    assert world.gyroscopic == "implicit"
    _, v = spin(world, INTERMEDIATE_SPIN, 0.5)
    world.gyroscopic = "explicit"  # reaches the compiled model at once
    _, v_explicit = spin(world, INTERMEDIATE_SPIN, 0.5)
    assert np.abs(v[-1] - v_explicit[-1]).max() > 1e-4


@pytest.mark.parametrize("build", ["free", "rigid", "ball", "contact"])
def test_parameter_derivatives_match_finite_differences(build):
    """The implicit update depends on the body's inertia (Ig, A) and on the joint's passive terms (A)."""
    tau = np.zeros(6)
    if build == "ball":
        world = spinning_top("implicit")
        world.rebuild()
        q, v, tau = Rotation.from_rotvec([0.3, -0.2, 0.1]).as_quat(), np.array([1.0, -2.0, 30.0]), np.zeros(3)
    else:
        world = offset_free_body(contact=build == "contact", dt=1e-3, passive=build != "rigid")
        q = np.r_[0.0, 0.0, 0.0499 if build == "contact" else 1.0, 0.0, 0.0, 0.0, 1.0]
        v = np.r_[0.0, 0.0, -0.5, 0.0, 0.0, 8.0] if build == "contact" else np.r_[0.3, -0.2, 0.5, 6.0, -9.0, 12.0]
    wrt = ("inertia", "armature", "damping", "stiffness", "gravity")
    # through contact, small central steps (1e-5 of each parameter's scale) keep the contact mode
    # (docs/contact.md#gradients)
    method = dict(method="central", eps=1e-5) if build == "contact" else dict(method="ridders")
    check_jacobians(world, q, v, tau, wrt=wrt, **method).raise_if_failed()
    # reverse mode: the transposed parameter Jacobians
    J = world.step_jacobians(q, v, tau, wrt=list(wrt))
    gq, gv = np.random.default_rng(4).normal(size=(2, world.nv))
    g = world.step_vjp(q, v, tau, gq, gv, wrt=list(wrt))
    assert_close(g.parameters, J.dq_dp.T @ gq + J.dv_dp.T @ gv, rtol=1e-10, floor=1.0, what="g_parameters")


def isotropic_body(shape, anisotropy=0.0, passive=False):
    """A free cube or sphere (Ig = c I: no gyroscopic torque at any rate), spinning in free flight; with
    `anisotropy`, its Ig's xy entry made that fraction of c, which takes the implicit update's general path."""
    world = rd.World(dt=1e-2, gravity=(0.0, 0.0, -9.81))
    sk = rd.Skeleton("body")
    inertia = rd.Inertia.from_shape(shape, mass=0.8)
    c = inertia.rotational_inertia[0, 0]
    assert np.array_equal(inertia.rotational_inertia, c * np.eye(3))
    if anisotropy:
        Ig = c * np.eye(3)
        Ig[0, 1] = Ig[1, 0] = anisotropy * c
        inertia = rd.Inertia(0.8, rotational_inertia=Ig)
    joint = rd.FreeJoint("free", damping=0.05, armature=0.01) if passive else rd.FreeJoint("free")
    sk.add_body("b", joint=joint, inertia=inertia).add_shape(shape)
    world.add_skeleton(sk)
    return world


ISOTROPIC_STATE = (np.r_[0.1, -0.2, 1.0, Rotation.from_rotvec([0.4, 0.1, -0.3]).as_quat()],
                   np.r_[0.7, -0.4, 1.1, 6.0, -9.0, 12.0], np.r_[0.3, 0.1, -0.2, 0.05, -0.02, 0.01])


@pytest.mark.parametrize("shape", [rd.Box((0.1, 0.1, 0.1)), rd.Sphere(0.05)], ids=["cube", "sphere"])
@pytest.mark.parametrize("passive", [False, True], ids=["rigid", "passive"])
def test_an_isotropic_body_steps_as_the_general_update_does_in_the_limit(shape, passive):
    """A cube's or sphere's implicit update is the identity (its rate y = w): the step skips it. The general
    update of the same body made anisotropic by 1e-9 gives the same step and Jacobians to that order."""
    q, v, tau = ISOTROPIC_STATE
    exact, near = isotropic_body(shape, passive=passive), isotropic_body(shape, 1e-9, passive=passive)
    (q1, v1), (q2, v2) = exact.step(q, v, tau), near.step(q, v, tau)
    assert_close(v1, v2, rtol=1e-7, floor=1.0, what="v_next")
    assert_close(q1, q2, rtol=1e-7, floor=1.0, what="q_next")
    J1, J2 = exact.step_jacobians(q, v, tau), near.step_jacobians(q, v, tau)
    for name in ("dq_dq", "dq_dv", "dv_dq", "dv_dv", "dv_dtau"):
        assert_close(getattr(J1, name), getattr(J2, name), rtol=1e-7, floor=1.0, what=name)


@pytest.mark.parametrize("passive", [False, True], ids=["rigid", "passive"])
def test_an_isotropic_body_keeps_its_inertia_derivatives(passive):
    """Perturbing a cube's inertia breaks its symmetry: the step's derivatives in the inertia (and armature)
    keep the implicit update's terms even where the step itself skips it."""
    q, v, tau = ISOTROPIC_STATE
    world = isotropic_body(rd.Box((0.1, 0.1, 0.1)), passive=passive)
    wrt = ("inertia", "armature", "damping") if passive else ("inertia",)
    # central steps of 1e-6: the cube's moments are 1.3e-3, which Ridders' first steps (1e-2) swamp
    check_jacobians(world, q, v, tau, wrt=wrt, method="central", eps=1e-6, rtol=1e-5).raise_if_failed()
    J = world.step_jacobians(q, v, tau, wrt=list(wrt))
    gq, gv = np.random.default_rng(5).normal(size=(2, world.nv))
    g = world.step_vjp(q, v, tau, gq, gv, wrt=list(wrt))
    assert_close(g.parameters, J.dq_dp.T @ gq + J.dv_dp.T @ gv, rtol=1e-10, floor=1.0, what="g_parameters")


@pytest.mark.parametrize("joint", [rd.FreeJoint, rd.BallJoint])
def test_a_spin_too_fast_for_the_step_raises_naming_the_joint_and_the_remedies(joint):
    # 10 rad/s about an axis near x with dt = 0.6: six radians a step, where the update's equation has no root near
    # the first-order guess (before, the step returned rates of 1e13 rad/s without a word)
    inertia = np.diag([1e-3, 2e-3, 3e-3])

    def world(gyroscopic):
        w = rd.World(dt=0.6, gravity=(0.0, 0.0, 0.0), gyroscopic=gyroscopic)
        sk = rd.Skeleton("s")
        sk.add_body("b", joint=joint("spin"), inertia=rd.Inertia(1.0, rotational_inertia=inertia))
        w.add_skeleton(sk)
        return w

    w = world("implicit")
    q, v = w.neutral_configuration(), np.zeros(w.nv)
    v[-3:] = (10.0, 1.0, 0.0)
    for call in (lambda: w.step(q, v, np.zeros(w.nv)), lambda: w.step_jacobians(q, v, np.zeros(w.nv)),
                 lambda: w.rollout(q, v, np.zeros((3, w.nv)))):
        with pytest.raises(RuntimeError, match=r"joint 's/spin' did not converge: its body turns by 6\.03 rad in one "
                                               r"step.*smaller dt.*gyroscopic=\"explicit\""):
            call()
    with pytest.raises(RuntimeError, match=r"batch item 1: .*did not converge"):
        w.step_batch(np.stack([q, q]), np.stack([0.01 * v, v]), np.zeros((2, w.nv)), threads=2)
    # the remedies the message names work: a smaller step keeps the momentum, the explicit update steps
    explicit = world("explicit")
    q1, v1 = explicit.step(q, v, np.zeros(explicit.nv))
    assert np.all(np.isfinite(v1)) and np.linalg.norm(v1[-3:]) < 20.0
    fine = world("implicit")
    fine.dt = 0.06
    q1, v1 = fine.step(q, v, np.zeros(fine.nv))
    R = Rotation.from_quat(q1[-4:]).as_matrix()
    assert np.abs(R @ inertia @ v1[-3:] - inertia @ v[-3:]).max() < 1e-15

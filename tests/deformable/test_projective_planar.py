"""Planar joints in projective worlds, stepped as a free joint confined to their plane in the barrier world's chart
(docs/deformable.md, "Planar joints"): a sliding, spinning puck (alone, carrying a swinging rod, on a turntable)
equal to the barrier world's step over 50 steps; a puck on a vertical plane resting on a stiff block at the
penalty's depth; a puck pushed across a soft block with friction; x and theta limits; the step's derivatives
(state, tau, parameters, dense Jacobians, a rollout's backward pass; on a turntable and on a vertical plane too)
against central differences of our own step, q perturbed as q (+) e; and the turn per step that stays refused."""

import numpy as np
import pytest
from test_projective_floating_base import _block, beside_the_barrier_world
from test_projective_floating_gradients import (H, _check, _check_dense_columns, _check_rollout_backward,
                                               add_hinged_rod)

import rigidiff as rd

PUCK = (0.08, 0.08, 0.04)


def _puck(name="puck", normal=(0.0, 0.0, 1.0), height=0.0, damping=0.0, lower=None, upper=None, mass=0.5,
          com=(0.01, 0.0, 0.0)):
    """A box on a planar joint whose centre of mass is `com` from the joint's origin (the translation and the turn
    couple in M), the joint's origin `height` above the world's."""
    sk = rd.Skeleton(name)
    inertia = rd.Inertia.from_shape(rd.Box(PUCK), mass=mass, origin=rd.Transform(com))
    body = sk.add_body("disc", rd.PlanarJoint("slide", normal=normal, damping=damping, lower=lower, upper=upper),
                       joint_origin=rd.Transform((0.0, 0.0, height)), inertia=inertia)
    body.add_shape(rd.Box(PUCK))
    return sk


def _puck_with_arm(lower=-0.5, upper=0.5):
    """The puck (normal z) carrying a rod on a hinge about its own x at its edge, limited to [lower, upper]: gravity
    swings the rod, and its turn couples with the puck's spin in M."""
    return add_hinged_rod(_puck("arm"), lower, upper)


def _turntable(height=0.04 + 0.02 - 0.0015):
    """The puck's planar joint on a turntable: a revolute joint about z (with a spring) below it, `height` up."""
    sk = rd.Skeleton("turntable")
    plate = rd.Box((0.1, 0.1, 0.01))
    table = sk.add_body("table", rd.RevoluteJoint("spin", axis=(0, 0, 1), damping=0.05, stiffness=0.5),
                        joint_origin=rd.Transform((0.0, 0.0, height)),
                        inertia=rd.Inertia.from_shape(plate, mass=0.3, origin=rd.Transform((0.0, 0.0, 0.05))))
    inertia = rd.Inertia.from_shape(rd.Box(PUCK), mass=0.5, origin=rd.Transform((0.01, 0.0, 0.0)))
    body = sk.add_body("disc", rd.PlanarJoint("slide"), parent=table, inertia=inertia)
    body.add_shape(rd.Box(PUCK))
    return sk


@pytest.mark.parametrize("which", ["puck", "arm", "turntable"])
def test_free_motion_matches_the_barrier_world_step(which):
    """Away from any contact, a puck sliding and spinning at 6 rad/s (one whose hinged rod swings under gravity, and
    one on a turning table) steps as in the barrier world for 50 steps: both minimise the same incremental potential
    in the same chart on R^2 x SO(2), and re-express the velocity in the joint's new frame."""
    skeleton, q0, v0 = {"puck": (_puck(), [0.0, 0.0, 0.2], [0.3, -0.2, 6.0]),
                        "arm": (_puck_with_arm(-2.0, 2.0), [0.0, 0.0, 0.2, 0.3], [0.4, 0.1, -3.0, 1.5]),
                        "turntable": (_turntable(), [0.5, 0.0, 0.0, 0.2], [1.0, 0.3, -0.2, 6.0])}[which]
    Q, worst_q, worst_v = beside_the_barrier_world(skeleton, q0, v0, 50)
    assert worst_q < 1e-9 and worst_v < 1e-8
    theta = Q[-1, 3 if which == "turntable" else 2]
    assert abs(theta - 0.2) > 1.0  # it turned


def test_a_puck_on_a_vertical_plane_rests_on_a_stiff_block_at_the_penalty_depth():
    """A puck on a planar joint whose plane is vertical (normal y) falls onto a stiff block and rests on its face,
    level: the penalty forces k d of the nine vertices under it carry its weight, each at d = m g / (9 k)."""
    k, mass = 2e3, 0.5
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, max_iterations=500, contact_stiffness=k)
    _block(world, size=(0.2, 0.2, 0.05), cells=(8, 8, 2), material=(1e7, 0.3, 1000.0))
    world.add_skeleton(_puck(normal=(0.0, 1.0, 0.0), height=0.05 + 0.02 + 0.005, damping=0.5, mass=mass,
                             com=(0.0, 0.0, 0.0)))
    s, b = world.layout("puck"), world.layout("block")
    q, v = world.q, world.v
    for _ in range(150):
        q, v = world.step(q, v)
        assert world.last_step["converged"]
    assert np.abs(v[s.v]).max() < 1e-4
    pose = world.skeleton_world().body_poses(q[s.q])[0]
    bottom = pose[2, 3] - 0.02
    assert np.abs(pose[:3, :3] - np.eye(3)).max() < 1e-6  # level
    X = q[b.q].reshape(-1, 3)
    under = (np.abs(X[:, 0] - pose[0, 3]) < 0.04) & (np.abs(X[:, 1]) < 0.04) & (X[:, 2] > bottom)
    assert under.sum() == 9
    depths = X[under, 2] - bottom
    assert k * depths.sum() == pytest.approx(mass * 9.81, rel=1e-6)  # the weight carried by the penalty
    assert depths == pytest.approx(mass * 9.81 / (9 * k), rel=0.01)  # a ninth of it each (the block's sag differs)
    assert np.abs(X[under, 2] - 0.05).max() < 0.05 * depths.mean()  # the stiff block barely gives


def _pressing_puck(friction, spin=6.0, wide=False):
    """A turned puck pressed 1.5 mm into a soft block (12 cm wide, or 30 cm), sliding and spinning on it, pushed on
    every dof."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, friction=friction,
                     contact_stiffness=2e4)
    if wide:
        _block(world, size=(0.3, 0.3, 0.04), cells=(12, 12, 1), origin=(-0.15, -0.15, 0.0))
    else:
        _block(world, size=(0.12, 0.12, 0.04), cells=(4, 4, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(_puck(height=0.04 + 0.02 - 0.0015), q=[0.004, -0.003, 0.3])
    s = world.layout("puck")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.2, -0.1, spin]
    f[s.v] = [0.3, 0.1, 0.02]
    rng = np.random.default_rng(4)
    v[: s.v.start] = 0.01 * rng.standard_normal(s.v.start)
    return world, q, v, f


def test_a_puck_pushed_across_a_soft_block_drags_its_surface_and_is_slowed_by_friction():
    """Pushed along x while pressed into the block, the puck slides; friction drags the block's top along and
    slows the puck, the more so the higher mu."""
    travelled, drag = {}, {}
    for mu in (0.0, 0.5):
        world, q, v, f = _pressing_puck(mu, spin=0.0, wide=True)
        s, b = world.layout("puck"), world.layout("block")
        v[:] = 0.0
        f[s.v] = [2.0, 0.0, 0.0]
        top0 = q[b.q].reshape(-1, 3)[:, 2] > 0.04 - 1e-9
        for _ in range(20):
            q, v = world.step(q, v, f)
            assert world.last_step["contacts"] >= 4
        travelled[mu] = q[s.q][0]
        drag[mu] = (q[b.q].reshape(-1, 3)[top0, 0] - world.q[b.q].reshape(-1, 3)[top0, 0]).mean()
    assert travelled[0.0] > travelled[0.5] > 0.0
    assert drag[0.5] > 10 * abs(drag[0.0]) and drag[0.5] > 0.0


@pytest.mark.parametrize("friction, spin", [(0.0, 6.0), (0.4, 6.0), (0.4, 60.0)])
def test_gradients_of_a_puck_on_a_soft_block_match_central_differences(friction, spin):
    """At 60 rad/s the puck turns by 0.6 rad in the step: the chart's terms (the displacement's rotation, its
    start's) are far from their values at no turn."""
    world, q, v, f = _pressing_puck(friction, spin)
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    s = world.layout("puck")
    rng = np.random.default_rng(1)
    vertices = rng.choice(s.v.start, 5, replace=False)
    params = (("friction", lambda x: setattr(world, "friction", x), friction, H),
              ("contact_stiffness", lambda x: setattr(world, "contact_stiffness", x), 2e4, 2e4 * H))
    g, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + list(vertices),
                      parameters=params if friction else ())
    assert worst < 1e-6
    assert np.abs(g.q[s.v]).max() > 0.0 and np.abs(g.tau[s.v]).max() > 0.0


@pytest.mark.parametrize("friction", [0.0, 0.4])
def test_gradients_of_a_puck_on_a_turntable_match_central_differences(friction):
    """The planar joint below a revolute one (its plane turning under it), the puck pressing, sliding and spinning
    on a soft block (friction_velocity 0.1 m/s: at the default the mollifier's stiffness stalls the adjoint's
    conjugate gradients a little above 1e-12)."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, friction=friction,
                     contact_stiffness=2e4, friction_velocity=0.1)
    _block(world, size=(0.12, 0.12, 0.04), cells=(4, 4, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(_turntable(), q=[0.0, 0.004, -0.003, 0.3])
    s = world.layout("turntable")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [1.5, 0.2, -0.1, 6.0]
    f[s.v] = [0.01, 0.3, 0.1, 0.02]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    _, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + [3, 17])
    assert worst < 1e-6


def test_gradients_of_a_puck_on_a_vertical_plane_pressing_on_a_block_match_central_differences():
    """The plane's normal along y (gravity in the plane), the puck pressed into the block by its weight, turning and
    rubbing on it."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, contact_stiffness=2e3,
                     friction=0.3)
    _block(world, size=(0.12, 0.12, 0.04), cells=(4, 4, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(_puck(normal=(0.0, 1.0, 0.0), height=0.04 + 0.02, damping=0.5), q=[0.003, 0.001, 0.05])
    s = world.layout("puck")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.1, 0.05, 2.0]
    f[s.v] = [0.2, 0.1, 0.01]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    _, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + [3, 17])
    assert worst < 1e-6


def test_skeleton_parameter_gradients_of_a_puck_match_central_differences():
    world, q, v, f = _pressing_puck(0.4)
    world.set_parameters({"slide/damping_0": 0.05, "slide/damping_2": 0.01, "slide/armature_1": 1e-4})
    chosen = {"disc/mass": 0.5, "disc/com_x": 0.01, "disc/inertia_zz": 1e-4, "slide/damping_0": 0.05,
              "slide/damping_2": 0.01, "slide/armature_1": 1e-4}
    values = dict(zip(world.parameters().names, world.parameters().values))

    def setter(name):
        return lambda x: world.set_parameters({name: x})

    # steps of 3e-3 of each parameter's scale (Richardson's extrapolation takes their curvature): at 1e-4 the friction
    # solve's round-off reaches 1e-6 of the inertia's difference quotient
    _check(world, q, v, f, [], parameters=[(n, setter(n), values[n], 3e-3 * scale) for n, scale in chosen.items()])


def test_dense_jacobians_and_rollout_backward_match_central_differences():
    """The dense Jacobians' columns without friction (plain central differences: friction's mollified slip curves
    the step too sharply for them at 1e-6), a three-step rollout_backward with friction."""
    world, q, v, f = _pressing_puck(0.0)
    _check_dense_columns(world, q, v, f, "puck")
    world, q, v, f = _pressing_puck(0.3)
    world.tolerance = 1e-10  # three adjoints through friction
    _check_rollout_backward(world, q, v, f, "puck")


X_MAX, TURN_MAX = 0.03, 0.9


def _limited_world(stiffness=1e3):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=500)
    world.joint_limits, world.joint_limit_stiffness = True, stiffness
    _block(world, origin=(5.0, 5.0, 0.0))  # far away: no contact
    world.add_skeleton(_puck(damping=2.0, lower=[-np.inf, -np.inf, -np.inf], upper=[X_MAX, np.inf, TURN_MAX]),
                       q=[0.0, 0.0, 0.5])
    return world


def _push(theta, force):
    """tau pushing the joint's origin by `force` (parent frame): the planar joint's forces are in its child frame."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([c * force[0] + s * force[1], -s * force[0] + c * force[1]])


def test_a_turned_puck_pushed_into_its_x_and_turn_limits_rests_at_the_penalty_depth():
    """A puck turned by 0.5 rad, pushed along the parent's x by 3 N and turned by 1 N m, rests beyond x_max by
    F / k_l and beyond its turn limit by torque / k_l (the joint's forces in its child frame, the limits' penalty
    on x in the parent's)."""
    k = 1e3
    world = _limited_world(k)
    s = world.layout("puck")
    q, v = world.q, world.v
    f = np.zeros(world.nv)
    for _ in range(300):
        f[s.v] = [*_push(q[s.q][2], (3.0, 0.0)), 1.0]
        q, v = world.step(q, v, f)
    assert np.abs(v[s.v]).max() < 1e-6
    assert q[s.q][0] == pytest.approx(X_MAX + 3.0 / k, rel=1e-6)
    assert q[s.q][2] == pytest.approx(TURN_MAX + 1.0 / k, rel=1e-6)


def test_gradients_against_the_limits_match_central_differences():
    """Turned against both limits, the penalty's x-gradient turns into the child frame: the step's derivatives and
    joint_limit_stiffness's against central differences."""
    world = _limited_world()
    s = world.layout("puck")
    q, v = world.q, world.v
    q[s.q] = [X_MAX + 0.002, 0.01, TURN_MAX + 0.001]
    v[s.v] = [0.1, -0.05, 0.3]
    f = np.zeros(world.nv)
    f[s.v] = [*_push(q[s.q][2], (3.0, 0.5)), 0.2]
    params = (("joint_limit_stiffness", lambda x: setattr(world, "joint_limit_stiffness", x), 1e3, 1e3 * H),)
    g, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)), parameters=params)
    assert worst < 1e-7


def test_gradients_of_a_hinge_beyond_its_limit_on_a_spinning_puck_match_central_differences():
    """The rod's hinge starts beyond its upper limit on a spinning puck: the limit's penalty, a function of s, meets
    the start s0 through s = s0 (+) ds in the adjoint."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=500)
    world.joint_limits, world.joint_limit_stiffness = True, 50.0
    _block(world, origin=(5.0, 5.0, 0.0))
    world.add_skeleton(_puck_with_arm(), q=[0.01, -0.02, 0.4, 0.52])
    s = world.layout("arm")
    q, v = world.q, world.v
    v[s.v] = [0.2, 0.1, 5.0, 0.3]
    f = np.zeros(world.nv)
    f[s.v] = [0.1, -0.2, 0.01, 0.02]
    params = (("joint_limit_stiffness", lambda x: setattr(world, "joint_limit_stiffness", x), 50.0, 50.0 * H),)
    g, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)), parameters=params)
    assert worst < 1e-7
    assert world.step(q, v, f)[0][s.q][3] > 0.5  # the limit acts


def test_a_turn_of_pi_per_step_is_refused():
    world = rd.World(dt=1e-2, solver="projective")
    _block(world, origin=(5.0, 5.0, 0.0))
    world.add_skeleton(_puck())
    s = world.layout("puck")
    assert (s.q.stop - s.q.start, s.v.stop - s.v.start) == (3, 3)
    q, v = world.q, world.v
    v[s.v.start + 2] = 320.0
    with pytest.raises(ValueError, match=r"joint 'puck/slide' would turn by 3.2 rad.*smaller dt"):
        world.step(q, v)
    v[s.v.start + 2] = 300.0
    assert np.isfinite(world.step(q, v)[0]).all()

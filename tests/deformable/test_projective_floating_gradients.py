"""Step derivatives of projective worlds with free and ball joints (floating bases) against central differences of
our own step at a solver tolerance of 1e-12: the configuration perturbed as q (+) e (the lcp world's integrate on
the skeleton's coordinates, the vertices added) and q's change measured by difference(q'_minus, q'_plus), both in
the tangent as step_vjp takes them; a free box pressing, sliding and spinning on a soft block with friction, a
ball-jointed capsule lying on one, a ball joint in a chain, a hinge beyond its limit on a free box, the parameters, a
rollout's backward pass and the dense Jacobians."""

import numpy as np
import pytest
from test_projective_floating_base import _block, _box_skeleton, _quaternion

import rigidiff as rd

H = 4e-7  # Richardson-extrapolated from H and H / 2: friction's mollified slip curves the step sharply


def _move(world, q, e):
    """q (+) e: the vertices added, the skeletons' coordinates by the lcp world's integrate."""
    nx = world.nq - world.skeleton_world().nq
    return np.concatenate([q[:nx] + e[:nx], world.skeleton_world().integrate(q[nx:], e[nx:])])


def _change(world, q0, q1):
    """q1 (-) q0 in the tangent at q0."""
    nx = world.nq - world.skeleton_world().nq
    return np.concatenate([q1[:nx] - q0[:nx], world.skeleton_world().difference(q0[nx:], q1[nx:])])


def _check(world, q, v, f, indices, seed=0, rel=1e-6, parameters=()):
    """step_vjp against central differences of the step along each index of `indices` (of q's tangent, v and f)
    and along each parameter (name, setter, value, central-difference step)."""
    rng = np.random.default_rng(seed)
    wq, wv = rng.standard_normal(world.nv), rng.standard_normal(world.nv)
    g = world.step_vjp(q, v, f, wq, wv)
    scale = max(np.abs(g.q).max(), np.abs(g.v).max(), np.abs(g.tau).max())

    def directional(args, h):
        (qp, vp), (qm, vm) = world.step(*args(h)), world.step(*args(-h))
        return (wq @ _change(world, qm, qp) + wv @ (vp - vm)) / (2 * h)

    def richardson(args, h):
        return (4.0 * directional(args, h / 2) - directional(args, h)) / 3.0

    worst = 0.0
    for name, grad in (("q", g.q), ("v", g.v), ("f", g.tau)):
        for i in indices:
            e = np.zeros(world.nv)
            e[i] = 1.0
            if name == "q":
                fd = richardson(lambda h: (_move(world, q, h * e), v, f), H)
            elif name == "v":
                fd = richardson(lambda h: (q, v + h * e, f), H)
            else:
                fd = richardson(lambda h: (q, v, f + h * e), H)
            assert grad[i] == pytest.approx(fd, rel=rel, abs=rel * scale), (name, i)
            worst = max(worst, abs(grad[i] - fd) / scale)
    for p, setter, value, step in parameters:
        def moved(h, setter=setter, value=value):
            setter(value + h)
            return q, v, f

        fd = richardson(moved, step)
        setter(value)
        assert g.parameter(p) == pytest.approx(fd, rel=rel, abs=rel * np.abs(g.parameters).max()), p
    return g, worst


def _pressing_box(friction):
    """A free box (centre of mass off its joint's origin, turned about z and tilted) pressed into a small soft
    block, sliding and spinning on it, pushed by forces on every dof."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, friction=friction,
                     contact_stiffness=2e4)
    _block(world, size=(0.12, 0.12, 0.04), cells=(4, 4, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(_box_skeleton(offset=(0.01, 0.0, 0.005)),
                       q=np.concatenate([[0.005, -0.003, 0.04 + 0.02 - 0.0015], _quaternion([0.03, -0.02, 0.3])]))
    s = world.layout("box")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.2, -0.1, -0.05, 0.4, -0.3, 1.5]
    f[s.v] = [0.3, 0.1, -0.5, 0.01, -0.02, 0.03]
    rng = np.random.default_rng(4)
    v[: s.v.start] = 0.01 * rng.standard_normal(s.v.start)
    return world, q, v, f


@pytest.mark.parametrize("friction, spin", [(0.0, False), (0.4, False), (0.0, True), (0.4, True)])
def test_gradients_of_a_free_box_on_a_soft_block_match_central_differences(friction, spin):
    """Spinning, the box turns by 0.94 rad in the step: the charts' curvature terms (of exp3 against the chain's
    turns, of the displacement's map and of s = s0 (+) ds) are far from their values at no turn."""
    world, q, v, f = _pressing_box(friction)
    if spin:
        v[world.layout("box").v] = [0.2, -0.1, -0.05, 30.0, -40.0, 80.0]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 2
    s = world.layout("box")
    rng = np.random.default_rng(1)
    vertices = rng.choice(s.v.start, 6, replace=False)
    _, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + list(vertices), parameters=(
        ("friction", lambda x: setattr(world, "friction", x), friction, H),
        ("contact_stiffness", lambda x: setattr(world, "contact_stiffness", x), 2e4, 2e4 * H)) if friction else ())
    assert worst < 1e-6


def test_gradients_of_a_ball_jointed_capsule_lying_on_a_soft_block_match_central_differences():
    sk = rd.Skeleton("arm")
    link = rd.Capsule(0.015, 0.1)
    body = sk.add_body("link", rd.BallJoint("shoulder", damping=0.05, stiffness=0.5),
                       joint_origin=rd.Transform((-0.05, 0.0, 0.054)),
                       inertia=rd.Inertia.from_shape(link, mass=0.1, origin=rd.Transform((0.0, 0.0, 0.05))))
    body.add_shape(link, rd.Transform((0.0, 0.0, 0.05)))
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, friction=0.3)
    _block(world, size=(0.12, 0.12, 0.04), cells=(2, 2, 1), origin=(-0.06, -0.06, 0.0))
    # lying along +x, tilted down a little so that its far end presses into the block
    world.add_skeleton(sk, q=_quaternion([0.0, np.pi / 2 + 0.05, 0.0]))
    s = world.layout("arm")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.3, -0.2, 0.5]
    f[s.v] = [0.002, 0.001, -0.003]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 1
    _, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + [0, 7, 20], seed=3)
    assert worst < 1e-6


def test_gradients_of_a_ball_joint_in_a_chain_match_central_differences():
    """A ball joint below a revolute one (the ball's turns after the shoulder's in the chain): an upper capsule
    on a revolute shoulder, a lower one on a ball elbow lying on the block, rubbing on it (friction_velocity 0.1 m/s:
    at the default 1e-3 the mollifier's stiffness stalls this adjoint's conjugate gradients at 3e-12 of |b|, above
    the tolerance)."""
    sk = rd.Skeleton("arm")
    bone = rd.Capsule(0.012, 0.05)
    upper = sk.add_body("upper", rd.RevoluteJoint("shoulder", axis=(0, 1, 0), damping=0.05),
                        joint_origin=rd.Transform((-0.06, 0.0, 0.05), rpy=(0.0, np.pi / 2, 0.0)),
                        inertia=rd.Inertia.from_shape(bone, mass=0.05, origin=rd.Transform((0.0, 0.0, 0.025))))
    upper.add_shape(bone, rd.Transform((0.0, 0.0, 0.025)))
    lower = sk.add_body("lower", rd.BallJoint("elbow", damping=0.02, stiffness=0.2), parent=upper,
                        joint_origin=rd.Transform((0.0, 0.0, 0.06)),
                        inertia=rd.Inertia.from_shape(bone, mass=0.05, origin=rd.Transform((0.0, 0.0, 0.025))))
    lower.add_shape(bone, rd.Transform((0.0, 0.0, 0.025)))
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, friction=0.3,
                     friction_velocity=0.1)
    _block(world, size=(0.12, 0.12, 0.04), cells=(4, 4, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(sk, q=np.concatenate([[0.1], _quaternion([0.05, -0.15, 0.1])]))
    s = world.layout("arm")
    assert (s.q.stop - s.q.start, s.v.stop - s.v.start) == (5, 4)
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.5, 2.0, -1.0, 3.0]
    f[s.v] = [0.01, 0.002, -0.001, 0.003]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 1
    _, worst = _check(world, q, v, f, list(range(s.v.start, s.v.stop)) + [2, 30], seed=5)
    assert worst < 1e-6


def test_skeleton_parameter_gradients_of_a_free_box_match_central_differences():
    """The box's mass, centre of mass and inertia and its free joint's damping and armature (the regressor at the
    start, with the displacement and the frame turn in the acceleration)."""
    world, q, v, f = _pressing_box(0.4)
    world.set_parameters({"root/damping_3": 0.01, "root/damping_0": 0.05, "root/armature_1": 1e-4})
    chosen = ["base/mass", "base/com_x", "base/com_z", "base/inertia_zz", "base/inertia_xy", "root/damping_0",
              "root/damping_3", "root/armature_1"]
    values = dict(zip(world.parameters().names, world.parameters().values))

    def setter(name):
        return lambda x: world.set_parameters({name: x})

    # steps relative to each parameter's scale (an inertia of 1e-4 kg m^2 moved by 1e-6 would curve the difference)
    scale = {"base/mass": 0.2, "base/com_x": 0.01, "base/com_z": 0.01, "base/inertia_zz": 1e-4,
             "base/inertia_xy": 1e-4, "root/damping_0": 0.05, "root/damping_3": 0.01, "root/armature_1": 1e-4}
    _check(world, q, v, f, [], parameters=[(n, setter(n), values[n], 1e-4 * scale[n]) for n in chosen])


def test_rollout_backward_with_a_free_box_matches_central_differences():
    world, q, v, f = _pressing_box(0.3)
    world.tolerance = 1e-10  # three adjoints through friction: 1e-12 is below what their conjugate gradients reach
    _check_rollout_backward(world, q, v, f, "box")


def _check_rollout_backward(world, q, v, f, name):
    """A three-step rollout_backward's cotangents of the first step's forces on skeleton `name` against central
    differences of the rollout (its last state's change measured in the tangent)."""
    forces = np.tile(f, (3, 1))
    Q, V = world.rollout(q, v, forces)
    assert Q.shape == (4, world.nq) and V.shape == (4, world.nv)
    rng = np.random.default_rng(2)
    dQ, dV = np.zeros((4, world.nv)), np.zeros((4, world.nv))
    dQ[-1], dV[-1] = rng.standard_normal(world.nv), rng.standard_normal(world.nv)
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    s = world.layout(name)

    def loss_change(f0p, f0m):
        fp, fm = forces.copy(), forces.copy()
        fp[0], fm[0] = f0p, f0m
        (Qp, Vp), (Qm, Vm) = world.rollout(q, v, fp), world.rollout(q, v, fm)
        return dQ[-1] @ _change(world, Qm[-1], Qp[-1]) + dV[-1] @ (Vp[-1] - Vm[-1])

    h = 1e-5
    for i in range(s.v.start, s.v.stop):
        e = np.zeros(world.nv)
        e[i] = h
        fd = loss_change(f + e, f - e) / (2 * h)
        assert g.tau[0, i] == pytest.approx(fd, rel=1e-5, abs=1e-6 * np.abs(g.tau).max())


def test_dense_jacobians_columns_match_central_differences():
    """step_jacobians (one adjoint per row) of a free box on a small soft block: its columns along the box's
    tangent moves q (+) e and velocities against central differences of the step, in the tangent."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=2000, contact_stiffness=2e4)
    _block(world, size=(0.12, 0.12, 0.04), cells=(2, 2, 1), origin=(-0.06, -0.06, 0.0))
    world.add_skeleton(_box_skeleton(offset=(0.01, 0.0, 0.005)),
                       q=np.concatenate([[0.0, 0.0, 0.04 + 0.02 - 0.0015], _quaternion([0.03, -0.02, 0.3])]))
    s = world.layout("box")
    q, v, f = world.q, world.v, np.zeros(world.nv)
    v[s.v] = [0.2, -0.1, -0.05, 4.0, -3.0, 6.0]
    world.step(q, v, f)
    assert world.last_step["contacts"] >= 1
    _check_dense_columns(world, q, v, f, "box")


def _check_dense_columns(world, q, v, f, name):
    """The columns of step_jacobians along skeleton `name`'s dofs (q moved as q (+) e, and v) against central
    differences of the step, in the tangent."""
    s = world.layout(name)
    J = world.step_jacobians(q, v, f)
    assert J.dq_dq.shape == (world.nv, world.nv)
    h = 1e-6
    for j in range(s.v.start, s.v.stop):
        e = np.zeros(world.nv)
        e[j] = h
        (qp, vp), (qm, vm) = world.step(_move(world, q, e), v, f), world.step(_move(world, q, -e), v, f)
        dq, dv = _change(world, qm, qp) / (2 * h), (vp - vm) / (2 * h)
        assert np.abs(J.dq_dq[:, j] - dq).max() < 1e-6 * max(1.0, np.abs(dq).max()), j
        assert np.abs(J.dv_dq[:, j] - dv).max() < 1e-6 * max(1.0, np.abs(dv).max()), j
        (qp, vp), (qm, vm) = world.step(q, v + e, f), world.step(q, v - e, f)
        assert np.abs(J.dq_dv[:, j] - _change(world, qm, qp) / (2 * h)).max() < 1e-6, j
        assert np.abs(J.dv_dv[:, j] - (vp - vm) / (2 * h)).max() < 1e-6 * max(1.0, np.abs(J.dv_dv[:, j]).max()), j


def test_gradients_of_a_hinge_beyond_its_limit_on_a_tumbling_free_box_match_central_differences():
    """A rod hinged to a tumbling free box, its hinge beyond its upper limit: the limit's penalty is a function of
    s = s0 (+) ds, so it reaches the start s0 in the adjoint (without that term the q cotangents are 65% off)."""
    sk = add_hinged_rod(_box_skeleton(offset=(0.01, 0.0, 0.0)), -0.5, 0.5)
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=500)
    world.joint_limits, world.joint_limit_stiffness = True, 50.0
    _block(world, origin=(5.0, 5.0, 0.0))  # far away: no contact
    world.add_skeleton(sk, q=np.concatenate([[0.01, -0.02, 1.0], _quaternion([0.2, -0.1, 0.4]), [0.52]]))
    s = world.layout("box")
    q, v = world.q, world.v
    v[s.v] = [0.2, 0.1, 0.0, 1.0, -2.0, 5.0, 0.3]
    _, worst = _check(world, q, v, np.zeros(world.nv), list(range(s.v.start, s.v.stop)))
    assert worst < 1e-7


def add_hinged_rod(skeleton, lower, upper):
    """Hang a rod (a capsule along y, 0.1 kg) on a hinge about x at y = 5 cm from the skeleton's first body, limited
    to [lower, upper]; return the skeleton."""
    rod = rd.Capsule(0.01, 0.1)
    link = skeleton.add_body("rod", rd.RevoluteJoint("hinge", axis=(1, 0, 0), lower=lower, upper=upper, damping=0.02),
                             parent=skeleton.bodies[0], joint_origin=rd.Transform((0.0, 0.05, 0.0)),
                             inertia=rd.Inertia.from_shape(rod, mass=0.1, origin=rd.Transform((0.0, 0.05, 0.0))))
    link.add_shape(rod, rd.Transform((0.0, 0.05, 0.0), rpy=(np.pi / 2, 0.0, 0.0)))
    return skeleton

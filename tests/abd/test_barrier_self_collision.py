"""Self-collision of a skeleton's links in barrier worlds (Skeleton(self_collision=True)): a planar chain of three
links folding onto itself passes through itself with self-collision off and never intersects with it on (checked
independently with IPC Toolkit on the links' surfaces); neighbouring links that overlap at their joint (and a
body welded to a link) make no pairs; an intersecting start names both links; the step's Jacobians (state and
parameters, with and without friction between the two links) against central differences of the step, its
vector-Jacobian products and a recorded rollout's backward pass against the transposed Jacobians."""

import numpy as np
import pytest

import rigidiff as rd
from step_differences import (assert_parameter_jacobians, assert_step_jacobians, assert_vjp_is_transposed_jacobians,
                              central_jacobians, central_parameter_jacobians)

DHAT = 1e-3
# central-difference steps (q, v, tau), as tests/abd/test_barrier_skeleton_derivatives.py takes them
EPS = (1e-8, 1e-6, 1e-5)
# the fold: the elbows at 1.9 rad turning further, so that the third link's tip swings into the first link
FOLD = np.array([0.0, 1.9, 1.9])


def _chain(self_collision, length=0.18, bracket=False, floating=False, rounded=False):
    """Three links in the plane z = 0.1, each a box of `length` along x from its revolute joint about z (joints
    0.2 apart): at 0.18 its ends stop 1 cm short of the joints, at 0.24 it overlaps its neighbours there. With
    bracket, a small box welded to the second link's end carries the third link's joint and overlaps both. With
    floating, the first link is on a free joint (a floating base) instead. With rounded, the links are cylinders
    of radius 2 cm along x (192 faces each, many of them near the other link at the contact)."""
    sk = rd.Skeleton("chain", self_collision=self_collision)
    link = rd.Cylinder(0.02, length) if rounded else rd.Box((length, 0.04, 0.04))
    inertia = rd.Inertia.from_shape(rd.Box((length, 0.04, 0.04)), density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
    root = rd.FreeJoint("j1") if floating else rd.RevoluteJoint("j1", axis=(0, 0, 1))
    first = sk.add_body("link1", root, joint_origin=rd.Transform((0.0, 0.0, 0.1)), inertia=inertia)
    along_x = rd.Transform((0.1, 0.0, 0.0), rpy=(0.0, np.pi / 2, 0.0) if rounded else (0.0, 0.0, 0.0))
    first.add_shape(link, along_x)
    second = sk.add_body("link2", rd.RevoluteJoint("j2", axis=(0, 0, 1)), parent=first,
                         joint_origin=rd.Transform((0.2, 0.0, 0.0)), inertia=inertia)
    second.add_shape(link, along_x)
    parent, origin = second, rd.Transform((0.2, 0.0, 0.0))
    if bracket:
        cube = rd.Box((0.05, 0.05, 0.05))
        parent = sk.add_body("bracket", rd.FixedJoint("weld"), parent=second,
                             joint_origin=rd.Transform((0.2, 0.0, 0.0)), inertia=rd.Inertia.from_shape(cube, mass=0.05))
        parent.add_shape(cube)
        origin = rd.Transform()
    third = sk.add_body("link3", rd.RevoluteJoint("j3", axis=(0, 0, 1)), parent=parent, joint_origin=origin,
                        inertia=inertia)
    third.add_shape(link, along_x)
    return sk


def _world(self_collision, friction=0.0, tolerance=1e-2, q=FOLD, **chain):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0), friction=friction,
                     newton_tolerance=tolerance, max_newton_iterations=2000)
    world.add_skeleton(_chain(self_collision, **chain), q=q)
    return world


def _links_apart(world, q, first, second):
    """(whether IPC Toolkit finds the two link surfaces (indices into world._link_surfaces) crossing, their
    minimum distance within 5 cm by IPC Toolkit, inf beyond)."""
    ipctk = pytest.importorskip("ipctk")
    surfaces = world._link_surfaces(q)
    (_, Va, Fa), (_, Vb, Fb) = surfaces[first], surfaces[second]
    V, F = np.vstack([Va, Vb]), np.vstack([Fa, Fb + len(Va)])
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    patches = np.r_[np.zeros(len(Va)), np.ones(len(Vb))].astype(np.int32)
    mesh.can_collide = ipctk.make_vertex_patches_filter(patches)  # only link against link
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, 0.05)
    distance = collisions.compute_minimum_distance(mesh, V) if len(collisions) else np.inf
    return ipctk.has_intersections(mesh, V), distance


def _fold(world, steps, v=(0.0, 3.0, 3.0), tau=(0.0, 0.0, 0.0)):
    """The states of `steps` steps from the world's q at velocity v under the torques tau."""
    q, v = world.q, np.array(v, dtype=float)
    states = [(q, v)]
    for _ in range(steps):
        q, v = world.step(q, v, np.array(tau, dtype=float))
        states.append((q, v))
    return states


@pytest.mark.parametrize("speed,rounded", [(3.0, False), (20.0, False), (3.0, True)])
def test_fold_stops_at_the_first_link_only_with_self_collision(speed, rounded):
    """Without self-collision the third link's tip passes through the first link; with it the links never
    intersect (their distance stays positive at every step, by IPC Toolkit) and the contact reverses the tip's
    swing before the far elbow folds as far as it does freely, also with the elbows at 20 rad/s (the tip moving up
    to 7 cm a step, more than the links' 4 cm width), and with round links."""
    pytest.importorskip("ipctk")
    steps = 30 if speed == 3.0 else 12
    through = _fold(_world(False, rounded=rounded), steps, v=(0.0, speed, speed))
    crossed = [_links_apart(_world(False, rounded=rounded), q, 0, 2)[0] for q, _ in through]
    assert any(crossed)
    world = _world(True, rounded=rounded)
    stopped = _fold(world, steps, v=(0.0, speed, speed))
    closest = np.inf
    for q, _ in stopped:
        crossing, distance = _links_apart(world, q, 0, 2)
        assert not crossing and distance > 0.0
        closest = min(closest, distance)
    assert closest < 5 * DHAT  # the links came into contact
    # the contact ends the far elbow's fold well before its free swing does
    assert max(q[2] for q, _ in stopped) < max(q[2] for q, _ in through) - 0.05


def test_contact_only_between_links_that_are_neither_parent_nor_child():
    """At the fold's contact the pairs are the first and third links' (the only ones that can touch): active
    pairs with self-collision on, none with it off at the same state."""
    on, off = _world(True), _world(False)
    q, v = _fold(on, 4)[-1]
    on.step(q, v, np.zeros(3))
    off.step(q, v, np.zeros(3))
    assert on.last_step["active_pairs"] > 0 and off.last_step["active_pairs"] == 0


def test_overlapping_neighbours_and_a_welded_body_make_no_pairs():
    """Links that overlap their neighbours at the joints, and a bracket welded to the second link that overlaps it
    and the third link, step with self-collision on as with it off (no pair between a link and its parent, nor
    within one link) while the chain swings far from folding."""
    pytest.importorskip("ipctk")
    q0 = np.array([0.0, 0.3, -0.3])
    for bracket in (False, True):
        on = _world(True, length=0.24, bracket=bracket, q=q0)
        off = _world(False, length=0.24, bracket=bracket, q=q0)
        # the surfaces (link1, link2[, bracket], link3) cross where they meet
        meeting = [(0, 1), (1, 2), (2, 3)] if bracket else [(0, 1), (1, 2)]
        assert all(_links_apart(on, q0, a, b)[0] for a, b in meeting)
        for (q1, v1), (q2, v2) in zip(_fold(on, 20, v=(1.0, -2.0, 2.0)), _fold(off, 20, v=(1.0, -2.0, 2.0))):
            np.testing.assert_array_equal(q1, q2)
            np.testing.assert_array_equal(v1, v2)
        assert on.last_step["active_pairs"] == 0


def test_a_body_welded_next_to_the_joint_counts_as_its_link():
    """A bracket welded to the second link at its joint, overlapping the first link's end, is part of the second
    link: no pair with the first link (its link's parent), so the chain starts and swings with self-collision on
    exactly as with it off; a body welded to the bracket (two welds up) counts as the second link too."""
    pytest.importorskip("ipctk")

    def chain(self_collision):
        sk = rd.Skeleton("chain", self_collision=self_collision)
        box = rd.Box((0.24, 0.04, 0.04))
        inertia = rd.Inertia.from_shape(box, density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
        first = sk.add_body("link1", rd.RevoluteJoint("j1", axis=(0, 0, 1)),
                            joint_origin=rd.Transform((0.0, 0.0, 0.1)), inertia=inertia)
        first.add_shape(box, rd.Transform((0.1, 0.0, 0.0)))
        second = sk.add_body("link2", rd.RevoluteJoint("j2", axis=(0, 0, 1)), parent=first,
                             joint_origin=rd.Transform((0.2, 0.0, 0.0)), inertia=inertia)
        second.add_shape(rd.Box((0.1, 0.04, 0.04)), rd.Transform((0.12, 0.0, 0.0)))
        cube = rd.Box((0.05, 0.05, 0.05))
        bracket = sk.add_body("bracket", rd.FixedJoint("weld"), parent=second,
                              inertia=rd.Inertia.from_shape(cube, mass=0.05))
        bracket.add_shape(cube)
        nub = sk.add_body("nub", rd.FixedJoint("weld2"), parent=bracket, joint_origin=rd.Transform((-0.03, 0.0, 0.0)),
                          inertia=rd.Inertia.from_shape(rd.Box((0.02, 0.02, 0.02)), mass=0.01))
        nub.add_shape(rd.Box((0.02, 0.02, 0.02)))
        return sk

    q0 = np.array([0.0, 0.4])
    worlds = []
    for self_collision in (True, False):
        world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
        world.add_skeleton(chain(self_collision), q=q0)
        worlds.append(world)
    on, off = worlds
    # the bracket (surface 2) and the nub (surface 3) cross the first link's end at the start
    assert _links_apart(on, q0, 0, 2)[0] and _links_apart(on, q0, 0, 3)[0]
    swing = dict(v=(1.0, -2.0), tau=(0.0, 0.0))
    for (q1, v1), (q2, v2) in zip(_fold(on, 10, **swing), _fold(off, 10, **swing)):
        np.testing.assert_array_equal(q1, q2)
        np.testing.assert_array_equal(v1, v2)
    assert on.last_step["active_pairs"] == 0


def test_intersecting_start_names_both_links():
    crossed = np.array([0.0, 2.3, 2.3])  # the third link reaches across the first
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="'chain/link1/shape0' and 'chain/link3/shape0' intersect"):
        world.add_skeleton(_chain(True), q=crossed)
    assert world.skeletons == []
    world.add_skeleton(_chain(False), q=crossed)  # without self-collision the links may overlap
    other = _world(True)
    with pytest.raises(ValueError, match="'chain/link1/shape0' and 'chain/link3/shape0' intersect"):
        other.step(crossed, np.zeros(3), np.zeros(3))


def _pressing_state(friction):
    """The fold driven by torques on the elbows (0.3 and 0.2 N m) that keep the third link's tip pressed on the
    first link while it slides along it; the state a few steps into the contact (pairs within dhat)."""
    world = _world(True, friction=friction, tolerance=1e-12)
    tau = np.array([0.0, 0.3, 0.2])
    q, v = _fold(world, 5, v=(0.0, 3.0, 3.0), tau=tau)[-1]
    return world, q, v, tau


@pytest.mark.parametrize("friction", [0.0, 0.3])
def test_step_jacobians_match_central_differences_in_self_contact(friction):
    world, q, v, tau = _pressing_state(friction)
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    assert_step_jacobians(J, central_jacobians(world, q, v, tau, eps=EPS))


def test_friction_between_two_links_acts():
    """The tip slides on the first link: friction changes the step, and its coefficient's column of the step
    Jacobians is felt."""
    world, q, v, tau = _pressing_state(0.3)
    frictionless = _pressing_state(0.0)[0]
    assert np.abs(world.step(q, v, tau)[1] - frictionless.step(q, v, tau)[1]).max() > 1e-2
    J = world.step_jacobians(q, v, tau, wrt="friction")
    assert np.abs(J.dv_dp).max() > 1e-2


@pytest.mark.parametrize("friction", [0.0, 0.3])
def test_parameter_jacobians_match_central_differences_in_self_contact(friction):
    """Every parameter the step feels (the links' masses, centres of mass and inertias, gravity, dhat, friction)
    against central differences of the step."""
    world, q, v, tau = _pressing_state(friction)
    J = world.step_jacobians(q, v, tau, wrt="all")
    felt = [n for n in J.parameter_names
            if np.abs(J.dq_dp[:, J.parameter_names.index(n)]).max() > 0.0 and not (n == "friction" and friction == 0.0)]
    assert {"dhat", "link3/mass", "link3/com_y", "j3/armature"} <= set(felt)
    assert ("friction" in felt) == (friction > 0.0)
    assert_parameter_jacobians(J, central_parameter_jacobians(world, q, v, tau, J, felt))


def test_step_vjp_and_rollout_backward_are_the_transposed_jacobians():
    world, q, v, tau = _pressing_state(0.3)
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=world.nq), rng.normal(size=world.nv)
    assert_vjp_is_transposed_jacobians(world, q, v, tau, a, b, atol=1e-9)
    Jp = world.step_jacobians(q, v, tau, wrt="all")
    g = world.step_vjp(q, v, tau, a, b, wrt="all")
    np.testing.assert_allclose(g.parameters, Jp.dq_dp.T @ a + Jp.dv_dp.T @ b, rtol=1e-9,
                               atol=1e-9 * np.abs(g.parameters).max())
    # six recorded steps through the contact: the reverse pass chains the step Jacobians (parameters included)
    T = 6
    taus = np.tile(tau, (T, 1))
    start = _world(True, friction=0.3, tolerance=1e-12)
    q0, v0 = _fold(start, 2, tau=tau)[-1]
    traj = start.rollout(q0, v0, taus, record=True)
    gQ, gV = rng.normal(size=traj.q.shape), rng.normal(size=traj.v.shape)
    back = traj.backward(gQ, gV, wrt="all")
    gq, gv, gtaus, active = gQ[-1].copy(), gV[-1].copy(), np.zeros_like(taus), 0
    gp = np.zeros(len(start.parameters().names))
    for t in range(T - 1, -1, -1):
        J = start.step_jacobians(traj.q[t], traj.v[t], taus[t], wrt="all")
        active += start.last_step["active_pairs"]
        gtaus[t] = J.dq_dtau.T @ gq + J.dv_dtau.T @ gv
        gp += J.dq_dp.T @ gq + J.dv_dp.T @ gv
        gq, gv = J.dq_dq.T @ gq + J.dv_dq.T @ gv + gQ[t], J.dq_dv.T @ gq + J.dv_dv.T @ gv + gV[t]
    assert active > 0
    for got, want in ((back.q, gq), (back.v, gv), (back.tau, gtaus), (back.parameters, gp)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8 * np.abs(want).max())

    def loss(v_start):  # and a directional central difference of the whole rollout in v0
        Q, V = start.rollout(q0, v_start, taus)
        return np.sum(gQ * Q) + np.sum(gV * V)

    d, h = rng.normal(size=start.nv), 1e-6
    fd = (loss(v0 + h * d) - loss(v0 - h * d)) / (2 * h)
    assert abs(back.v @ d - fd) < 1e-6 * max(abs(fd), np.abs(back.v).max())


def test_a_link_on_a_universal_joint_is_its_parents_child():
    """A universal joint is two revolute joints in the core with a massless body between them: its link and the
    parent link still count as parent and child, so where they overlap at the joint they make no pair."""
    pytest.importorskip("ipctk")
    sk = rd.Skeleton("wrist", self_collision=True)
    link = rd.Box((0.24, 0.04, 0.04))
    inertia = rd.Inertia.from_shape(link, density=1000.0, origin=rd.Transform((0.1, 0.0, 0.0)))
    arm = sk.add_body("arm", rd.RevoluteJoint("j1", axis=(0, 0, 1)), joint_origin=rd.Transform((0.0, 0.0, 0.1)),
                      inertia=inertia)
    arm.add_shape(link, rd.Transform((0.1, 0.0, 0.0)))
    hand = sk.add_body("hand", rd.UniversalJoint("u", axis1=(0, 0, 1), axis2=(0, 1, 0)), parent=arm,
                       joint_origin=rd.Transform((0.2, 0.0, 0.0)), inertia=inertia)
    hand.add_shape(link, rd.Transform((0.1, 0.0, 0.0)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
    world.add_skeleton(sk, q=[0.0, 0.3, 0.2])
    assert _links_apart(world, world.q, 0, 1)[0]  # the two links cross at the joint
    q, v = world.q, np.array([0.5, -1.0, 1.0])
    for _ in range(5):
        q, v = world.step(q, v, np.zeros(3))
        assert world.last_step["active_pairs"] == 0


def _floating_fold(tolerance=1e-2, friction=0.0):
    """The chain on a free base (at rest at the origin, turned a little about x and y) folding as FOLD does: the
    world, and its states over 8 steps (the tip reaches the first link at the fourth)."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0), friction=friction,
                     newton_tolerance=tolerance, max_newton_iterations=2000)
    base = np.r_[0.0, 0.0, 0.0, np.sin(0.1), 0.05, 0.0, np.cos(0.1)]
    base[3:] /= np.linalg.norm(base[3:])
    world.add_skeleton(_chain(True, floating=True), q=np.r_[base, FOLD[1:]])
    v = np.r_[np.zeros(6), 3.0, 3.0]
    q, states = world.q, []
    for _ in range(8):
        states.append((q, v))
        q, v = world.step(q, v, np.r_[np.zeros(6), 0.3, 0.2])
    return world, states


def test_floating_chain_folds_without_intersecting():
    """On a free base the fold moves the base too (the CCD follows the free joint's path): the links never
    intersect and come within dhat. The links' top faces stay in one plane, so the start check of each step meets
    edges lying in a face's plane to round-off (once taken for crossings there)."""
    pytest.importorskip("ipctk")
    world, states = _floating_fold()
    distances = []
    for q, _ in states:
        crossing, distance = _links_apart(world, q, 0, 2)
        assert not crossing and distance > 0.0
        distances.append(distance)
    assert min(distances) < DHAT and np.abs(states[-1][0][:3]).max() > 1e-3  # touching, the base moved


def test_floating_chain_step_jacobians_in_self_contact():
    """The step Jacobians of the floating chain with its tip pressed and sliding on its first link (friction 0.3),
    the configuration perturbed and measured in the tangent (q (+) e), against central differences of the step."""
    from test_barrier_floating_derivatives import _central_jacobians

    world, states = _floating_fold(tolerance=1e-12, friction=0.3)
    q, v = states[-1]
    tau = np.r_[np.zeros(6), 0.3, 0.2]
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    assert_step_jacobians(J, _central_jacobians(world, q, v, tau))


@pytest.mark.filterwarnings("ignore:.*URDF")
def test_solo12_with_self_collision_lands_as_without(robots_dir):
    """example-robot-data's solo12 (its shipped meshes, 50736 faces) dropped onto the ground with self-collision on:
    its links that touch at their joints are parent and child (or welded: the feet), the others stay beyond dhat of
    each other, so its 20 steps are those of self-collision off, bit for bit (the culled broad phase of its own
    link pairs finds no pair and loses none)."""
    from test_barrier_solo12 import DHAT as SOLO_DHAT, STAND, _feet_depth, _solo

    solo, runs = _solo(robots_dir), []
    start = np.concatenate([[0.0, 0.0, _feet_depth(solo) + 0.02, 0.0, 0.0, 0.0, 1.0], STAND])
    for self_collision in (False, True):
        solo.self_collision = self_collision  # read when the world compiles the skeleton
        world = rd.World(dt=1e-2, solver="barrier", dhat=SOLO_DHAT, friction=0.8)
        world.add_ground()
        world.add_skeleton(solo, q=start)
        q, v, states = world.q, world.v, []
        for _ in range(20):
            q, v = world.step(q, v)
            states.append(np.r_[q, v])
        runs.append(np.array(states))
    assert world.skeletons[0].self_collision and world.last_step["active_pairs"] > 0  # on, standing on the ground
    np.testing.assert_array_equal(runs[0], runs[1])

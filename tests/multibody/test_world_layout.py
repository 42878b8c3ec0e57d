"""Several skeletons in one world, name qualification, and settings changed after the model is compiled."""

import numpy as np
import pytest
from rdsupport import assert_close, hinge_chain, world_of

import rigidiff as rd


def floater(name):
    sk = rd.Skeleton(name)
    base = sk.add_body("link0", joint=rd.FreeJoint("j0"),
                       inertia=rd.Inertia(2.0, (0.1, 0, 0), np.diag([0.1, 0.2, 0.25])))
    sk.add_body("link1", joint=rd.BallJoint("j1"), parent=base, joint_origin=rd.Transform((0, 0, 0.3)),
                inertia=rd.Inertia(1.0, (0, 0, -0.2), np.diag([0.01, 0.01, 0.005])))
    return sk


@pytest.fixture(scope="module")
def worlds():
    parts = [hinge_chain(3, name="a", seed=1), floater("b")]
    alone = [world_of(hinge_chain(3, name="a", seed=1)), world_of(floater("b"))]
    return world_of(*parts), alone


def test_layout_follows_insertion_order_and_qualifies_ambiguous_names(worlds):
    both, (a, b) = worlds
    assert (both.nq, both.nv, both.nbodies) == (a.nq + b.nq, a.nv + b.nv, a.nbodies + b.nbodies)
    # link0 and link1 (and j0, j1) exist in both skeletons: qualified; link2 / j2 only in "a": plain
    assert both.body_names == ["a/link0", "a/link1", "link2", "b/link0", "b/link1"]
    assert both.joint_names == ["a/j0", "a/j1", "j2", "b/j0", "b/j1"]
    assert both.joint("b/j0").q_index == 3 and both.joint("b/j0").v_index == 3
    assert both.joint("b/j1").q_index == 10 and both.joint("b/j1").v_index == 9
    assert both.body_index("a/link2") == both.body_index("link2") == 2
    with pytest.raises(IndexError):
        both.body_index("link0")  # ambiguous
    with pytest.raises(IndexError):
        both.joint("j1")


def one_body(skeleton, body, joint):
    sk = rd.Skeleton(skeleton)
    sk.add_body(body, joint=rd.RevoluteJoint(joint, axis=(0, 0, 1)), inertia=rd.Inertia(1.0, (0, 0, 0), np.eye(3)))
    return sk


def test_a_name_with_a_slash_never_takes_another_bodys_qualified_name():
    """Skeleton 'x''s body 'a/b' and skeleton 'a''s body 'b': 'a/b' names the second (its qualified name)
    whichever skeleton comes first; the first goes by 'x/a/b' (it used to take 'a/b' when it came last)."""
    for order in ((0, 1), (1, 0)):
        parts = [one_body("x", "a/b", "x_j"), one_body("a", "b", "a/j")]
        world = world_of(*[parts[k] for k in order])
        slashed, plain = (0, 1) if order == (0, 1) else (1, 0)
        assert world.body_index("a/b") == plain and world.body_index("b") == plain
        assert world.body_index("x/a/b") == slashed
        assert world.body_names[slashed] == "x/a/b" and world.body_names[plain] == "b"
        for name in world.body_names:  # every listed name finds its own body
            assert world.body_names[world.body_index(name)] == name
        assert world.joint("a/j").q_index == world.joint("a/a/j").q_index


def test_two_qualified_names_that_coincide_are_refused():
    world = world_of(one_body("a/b", "c", "j1"), one_body("a", "b/c", "j2"))
    with pytest.raises(ValueError, match=r"'c' of skeleton 'a/b' and 'b/c' of skeleton 'a' are both called 'a/b/c'"):
        world.body_names


def test_independent_skeletons_have_independent_dynamics(worlds):
    both, (a, b) = worlds
    rng = np.random.default_rng(0)
    for _ in range(5):
        qa, qb = a.random_configuration(rng), b.random_configuration(rng)
        va, vb = rng.normal(size=a.nv), rng.normal(size=b.nv)
        ta, tb = rng.normal(size=a.nv), rng.normal(size=b.nv)
        q, v, tau = np.concatenate([qa, qb]), np.concatenate([va, vb]), np.concatenate([ta, tb])
        M = both.mass_matrix(q)
        assert np.all(M[:a.nv, a.nv:] == 0.0)
        assert_close(M[:a.nv, :a.nv], a.mass_matrix(qa), 1e-14, what="M_a")
        assert_close(M[a.nv:, a.nv:], b.mass_matrix(qb), 1e-14, what="M_b")
        acc = both.forward_dynamics(q, v, tau)
        assert_close(acc, np.concatenate([a.forward_dynamics(qa, va, ta), b.forward_dynamics(qb, vb, tb)]), 1e-13)
        q1, v1 = both.step(q, v, tau)
        (qa1, va1), (qb1, vb1) = a.step(qa, va, ta), b.step(qb, vb, tb)
        assert_close(q1, np.concatenate([qa1, qb1]), 1e-14)
        assert_close(v1, np.concatenate([va1, vb1]), 1e-13)
        KE = a.kinetic_energy(qa, va) + b.kinetic_energy(qb, vb)
        assert both.kinetic_energy(q, v) == pytest.approx(KE, rel=1e-13)
        assert_close(both.body_poses(q), np.concatenate([a.body_poses(qa), b.body_poses(qb)]), 1e-14)
        assert both.total_mass == pytest.approx(a.total_mass + b.total_mass)


def test_gravity_and_dt_changes_after_compiling_take_effect():
    w = world_of(hinge_chain(3, seed=1))
    q, v = np.array([0.3, -0.2, 0.5]), np.array([0.1, 0.2, 0.3])
    g0, U0 = w.gravity_forces(q), w.potential_energy(q)
    dv0 = w.step(q, v, np.zeros(3))[1] - v
    w.gravity = (0.0, 0.0, -2 * 9.81)
    assert_close(w.gravity_forces(q), 2 * g0, 1e-14, what="g(q)")
    assert w.potential_energy(q) == pytest.approx(2 * U0, rel=1e-14)
    w.gravity = (0.0, 0.0, -9.81)
    w.dt = 2e-3
    assert_close(w.step(q, v, np.zeros(3))[1] - v, 2 * dv0, 1e-9, what="dt")
    w.rebuild()  # a rebuild keeps both settings
    assert w.dt == 2e-3
    assert_close(w.gravity_forces(q), g0, 1e-14, what="g(q) after rebuild")
    w.gravity = (0.0, 0.0, 0.0)
    np.testing.assert_array_equal(w.gravity_forces(q), np.zeros(3))
    assert w.potential_energy(q) == 0.0


def test_stateful_convenience_matches_the_functional_api():
    w = world_of(floater("f"))
    q0 = w.random_configuration(3)
    v0 = np.linspace(-1, 1, w.nv)
    w.q, w.v = q0, v0
    tau = np.full(w.nv, 0.1)
    q, v = w.advance(tau, n_steps=25)
    Q, V = w.rollout(q0, v0, np.tile(tau, (25, 1)))
    np.testing.assert_array_equal(q, Q[-1])
    np.testing.assert_array_equal(v, V[-1])
    assert w.time == pytest.approx(25 * w.dt)
    q_out = w.q
    q_out[:] = 0.0  # a copy: the world's state is untouched
    np.testing.assert_array_equal(w.q, Q[-1])


def test_a_body_without_a_joint_is_welded_to_its_parent():
    """joint=None welds, as a body without joints does in MuJoCo: no dofs, the parent's pose times the
    joint origin, and its mass moves with the parent."""
    sk = rd.Skeleton("welded")
    arm = sk.add_body("arm", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                      inertia=rd.Inertia(1.0, (0, 0, 0.5), np.eye(3) * 0.01))
    tip = sk.add_body("tip", parent=arm, joint_origin=rd.Transform((0, 0, 1.0)),
                      inertia=rd.Inertia(2.0, (0, 0, 0), np.eye(3) * 0.001))
    base = sk.add_body("base")  # no parent either: fixed to the world, massless
    assert tip.joint.name == "tip_weld" and isinstance(tip.joint, rd.FixedJoint)
    assert base.joint.name == "base_weld"
    world = world_of(sk)
    assert (world.nq, world.nv) == (1, 1)
    q = np.array([0.3])
    tip_pose = world.body_pose(q, "tip")
    assert_close(tip_pose[:3, 3], [np.sin(0.3), 0.0, np.cos(0.3)], 1e-14)
    # the tip's 2 kg sit 1 m from the hinge: M = 0.01 + 1 * 0.5^2 + 0.001 + 2 * 1^2
    assert_close(world.mass_matrix(q), [[0.01 + 0.25 + 0.001 + 2.0]], 1e-13)
    with pytest.raises(ValueError, match="tip_weld"):
        sk.add_body("other", joint=rd.FixedJoint("tip_weld"))


def test_random_configuration_respects_limits_and_samples_huge_limits_near_zero():
    """Limits are respected; "no limit" written as +-1e16 (Gazebo's URDFs) is sampled like no limit,
    and a narrow window far from zero is sampled where it is."""
    sk = rd.Skeleton("limits")
    inertia = rd.Inertia(1.0, (0, 0, 0), np.eye(3) * 0.01)
    joints = [
        rd.RevoluteJoint("huge", axis=(0, 0, 1), lower=-1e16, upper=1e16),
        rd.RevoluteJoint("free_angle", axis=(0, 1, 0)),
        rd.RevoluteJoint("one_sided", axis=(1, 0, 0), lower=0.5, upper=1e16),
        rd.PrismaticJoint("far_window", axis=(1, 0, 0), lower=1e7, upper=1e7 + 0.25),
        rd.PrismaticJoint("huge_slide", axis=(0, 1, 0), lower=-1e16, upper=1e16),
        rd.PlanarJoint("plane", lower=(-1e16, -0.1, -1e16), upper=(1e16, 0.1, 1e16)),
    ]
    parent = None
    for j in joints:
        parent = sk.add_body(f"b_{j.name}", joint=j, parent=parent, inertia=inertia)
    world = world_of(sk)
    Q = np.array([world.random_configuration(seed) for seed in range(300)])
    col = {j.name: world.joint(j.name).q_index for j in joints}
    bounds = {"huge": (-np.pi, np.pi), "free_angle": (-np.pi, np.pi), "one_sided": (0.5, 0.5 + 2 * np.pi),
              "far_window": (1e7, 1e7 + 0.25), "huge_slide": (-1.0, 1.0)}
    for name, (lo, hi) in bounds.items():
        x = Q[:, col[name]]
        assert np.all((x >= lo) & (x <= hi)), name
        assert x.max() - x.min() > 0.8 * (hi - lo), f"{name}: samples do not spread over [{lo}, {hi}]"
    plane = Q[:, col["plane"]:col["plane"] + 3]
    assert np.all(np.abs(plane[:, 0]) <= 1.0) and np.all(np.abs(plane[:, 1]) <= 0.1)
    assert np.all(np.abs(plane[:, 2]) <= np.pi) and np.ptp(plane[:, 2]) > 0.8 * 2 * np.pi

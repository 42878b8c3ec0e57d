"""A joint whose bodies have no inertia along one of its axes raises in every state (ABA's relative
threshold, docs/conventions.md), whatever the round-off; a nearly singular but real body still steps."""

import numpy as np
import pytest
from rdsupport import world_of

import rigidiff as rd


def tilted(moments, axis):
    """A rotational inertia with these principal moments, its third principal axis along ``axis``."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    t = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
    t /= np.linalg.norm(t)
    R = np.column_stack([t, np.cross(a, t), a])
    return R @ np.diag(moments) @ R.T


def free_body(moments, axis=(0.0, 0.0, 1.0), mass=0.1):
    sk = rd.Skeleton("floating")
    sk.add_body("body", joint=rd.FreeJoint("free"),
                inertia=rd.Inertia(mass, rotational_inertia=tilted(moments, axis)))
    return world_of(sk)


def rod_on_a_hinge(moments, axis):
    """A rod spinning about its own axis on a hinge, carried by a floating base."""
    sk = rd.Skeleton("arm")
    base = sk.add_body("base", joint=rd.FreeJoint("free"), inertia=rd.Inertia(1.0, rotational_inertia=0.1 * np.eye(3)))
    sk.add_body("rod", parent=base, joint=rd.RevoluteJoint("spin", axis=axis),
                joint_origin=rd.Transform(translation=(0.3, -0.2, 0.5)),
                inertia=rd.Inertia(2.0, com=0.4 * np.asarray(axis), rotational_inertia=tilted(moments, axis)))
    return world_of(sk)


def random_states(world, n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q = world.random_configuration(rng)
        q[:3] = rng.uniform(-3.0, 3.0, 3)
        v, tau = rng.normal(size=(2, world.nv))
        yield q, v, tau


SINGULAR = [
    ("free", lambda: free_body((1.0, 1.0, 0.0)), "floating/free"),
    # the zero moment about an axis nearly in the xy plane: the last Cholesky pivot of D gathers the
    # round-off of the others
    ("free tilted", lambda: free_body((1.0, 1.0, 0.0), axis=(1.0, 0.3, 1e-3), mass=1e3), "floating/free"),
    ("hinge", lambda: rod_on_a_hinge((0.5, 0.5, 0.0), (0.6, -0.48, 0.64)), "arm/spin"),
]


@pytest.mark.parametrize("make, joint", [(m, j) for _, m, j in SINGULAR], ids=[i for i, _, _ in SINGULAR])
def test_a_zero_principal_inertia_about_a_joint_axis_raises_in_every_state(make, joint):
    world = make()
    for q, v, tau in random_states(world, 300, seed=1):
        for call in (lambda: world.forward_dynamics(q, v, tau), lambda: world.step(q, v, tau),
                     lambda: world.mass_matrix_inverse(q)):
            with pytest.raises(RuntimeError, match=f"joint '{joint}' is singular"):
                call()


@pytest.mark.parametrize("make", [lambda: free_body((1.0, 1.0, 1e-6)),
                                  lambda: rod_on_a_hinge((0.5, 0.5, 1e-6), (0.6, -0.48, 0.64))],
                         ids=["free", "hinge"])
def test_a_nearly_singular_real_body_still_steps(make):
    """Principal moments (1, 1, 1e-6): accelerations are large but right (M a = tau - h)."""
    world = make()
    for q, v, tau in random_states(world, 100, seed=2):
        a = world.forward_dynamics(q, v, tau)
        M = world.mass_matrix(q)
        residual = M @ a - (tau - world.bias_forces(q, v))
        assert np.max(np.abs(residual)) <= 1e-8 * max(1.0, np.max(np.abs(M @ a)))
        assert np.all(np.isfinite(world.step(q, v, tau)[1]))


def test_a_robot_far_from_the_origin_is_not_called_singular():
    """The singular test is made again at the joint's own origin when the world-origin scale refuses it:
    a quadruped 1 km away keeps its accelerations; at 100 km, where double precision no longer resolves
    its light links, the error names the distance."""
    world = rd.World()
    world.add_skeleton(rd.load_urdf(rd.models.path("quadruped"), floating_base=True))
    rng = np.random.default_rng(0)
    q0 = world.random_configuration(rng)
    q0[:3] = 0.0
    v, tau = rng.normal(size=(2, world.nv))
    a0 = world.forward_dynamics(q0, v, tau)
    for distance in (100.0, 1000.0):
        q = q0.copy()
        q[0] = distance
        a = world.forward_dynamics(q, v, tau)
        assert np.abs(a - a0).max() < 1e-5 * np.abs(a0).max()
        world.step(q, v, tau)
    q = q0.copy()
    q[0] = 1e5
    with pytest.raises(RuntimeError, match=r"m from the world origin"):
        world.forward_dynamics(q, v, tau)

"""Small worlds and problems shared by the trajectory-optimisation tests."""

from __future__ import annotations

import numpy as np

import rigidiff as rd


def cartpole_world(dt=0.05) -> rd.World:
    world = rd.World(dt=dt)
    world.add_skeleton(rd.models.load("cartpole"))
    return world


def swing_up(world, T=60, method_bounds=20.0) -> rd.trajopt.Problem:
    """The pole hangs (q = (0, pi)) and must end upright and at rest at the cart's start."""
    prob = rd.trajopt.Problem(world, T, q0=[0.0, np.pi])
    prob.add_state_cost(q_target=[0.0, 0.0], v_target=[0.0, 0.0], q_weight=[1.0, 50.0], v_weight=5.0,
                        final_only=True)
    prob.add_control_cost(1e-3)
    prob.set_control_bounds(-method_bounds, method_bounds)
    prob.set_actuated(["slider"])
    return prob


def resting_ball_world(dt=0.01) -> rd.World:
    """Nimble's BALL_ON_FIXED_GROUND: a 0.1 kg ball of radius 0.5 on a vertical slider, on the ground."""
    sk = rd.Skeleton("ball")
    body = sk.add_body("ball", joint=rd.PrismaticJoint("z", axis=(0, 0, 1)),
                       inertia=rd.Inertia.from_shape(rd.Sphere(0.5), mass=0.1))
    body.add_shape(rd.Sphere(0.5))
    world = rd.World(dt=dt)
    world.add_skeleton(sk)
    world.add_ground()
    return world


def resting_height(world) -> float:
    """The ball's height once it has settled on the ground (a hair below its radius)."""
    Q, _ = world.rollout([0.5], [0.0], np.zeros((5, 1)))
    return float(Q[-1, 0])


def slider_box(mass=1.0, dt=0.1) -> rd.World:
    """A box on a frictionless slider along x, no gravity."""
    sk = rd.Skeleton("slide")
    sk.add_body("box", joint=rd.PrismaticJoint("x", axis=(1, 0, 0)),
                inertia=rd.Inertia(mass=mass, rotational_inertia=np.eye(3) * 0.1))
    world = rd.World(dt=dt, gravity=(0, 0, 0))
    world.add_skeleton(sk)
    return world


def free_body_world(dt=0.01) -> rd.World:
    """One free-floating box (quaternion coordinates) and a hinge hanging from it."""
    sk = rd.Skeleton("floater")
    base = sk.add_body("base", joint=rd.FreeJoint("root"),
                       inertia=rd.Inertia.from_shape(rd.Box((0.3, 0.2, 0.1)), mass=2.0))
    sk.add_body("arm", parent=base, joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                joint_origin=rd.Transform(translation=(0.15, 0, 0)),
                inertia=rd.Inertia.from_shape(rd.Capsule(0.03, 0.4), mass=0.5,
                                              origin=rd.Transform(translation=(0, 0, -0.2))))
    world = rd.World(dt=dt, gravity=(0, 0, -1.0))
    world.add_skeleton(sk)
    return world

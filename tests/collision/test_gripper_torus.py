"""A gripper of two boxes on prismatic joints squeezes a torus (a non-convex mesh) from both sides: box faces
against the torus' vertices. Friction holds it when 2 mu F exceeds its weight and lets it slide below."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

MU, MASS = 0.8, 0.1
UPRIGHT = [np.sin(np.pi / 4), 0.0, 0.0, np.cos(np.pi / 4)]


def gripper_world():
    major, minor = 0.05, 0.012
    world = rd.World(dt=1e-3)
    hand = rd.Skeleton("gripper")
    hand.add_body("palm", joint=rd.FixedJoint("mount"), joint_origin=rd.Transform(translation=(0.0, 0.0, 0.3)))
    for side, sign in (("left", 1.0), ("right", -1.0)):
        finger = rd.Box((0.02, 0.06, 0.08))
        hand.add_body(f"{side}_finger", joint=rd.PrismaticJoint(f"{side}_slide", axis=(-sign, 0.0, 0.0)), parent="palm",
                      joint_origin=rd.Transform(translation=(sign * (major + minor + 0.011), 0.0, 0.0)),
                      inertia=rd.Inertia.from_shape(finger, mass=0.2)).add_shape(finger, friction=MU)
    world.add_skeleton(hand)
    mesh = rd.Mesh(trimesh.creation.torus(major_radius=major, minor_radius=minor, major_sections=32,
                                          minor_sections=12))
    ring = rd.Skeleton("torus")
    ring.add_body("torus", joint=rd.FreeJoint("torus_free"), inertia=rd.Inertia.from_shape(mesh, mass=MASS)) \
        .add_shape(mesh, friction=MU)
    world.add_skeleton(ring)
    return world, np.array([0.0, 0.0, 0.0, 0.0, 0.3, *UPRIGHT])


@pytest.mark.parametrize("factor", [1.5, 0.5])
def test_friction_holds_the_squeezed_torus_above_its_limit_and_not_below(factor):
    world, q0 = gripper_world()
    force = factor * MASS * 9.81 / (2 * MU)  # per finger; 1: friction just carries the weight
    taus = np.zeros((1200, world.nv))
    taus[:, :2] = force
    Q, V = world.rollout(q0, np.zeros(world.nv), taus)
    fall = Q[600, 4] - Q[-1, 4]  # over the last 0.6 s, the fingers closed
    if factor > 1:
        assert abs(fall) < 1e-5 and np.abs(V[-1]).max() < 1e-6
        c = world.collide(Q[-1])
        assert {"left_finger", "right_finger"} <= set(c.body_a) | set(c.body_b)
        assert np.all(np.abs(c.normals[:, 0]) > 0.99)  # the fingers press along x
    else:  # between the fingers (closed by 0.05 s) it slides at gravity less both fingers' kinetic friction,
        # (1 - factor) g, and falls out of their reach after 0.11 s
        accel = (Q[100, 4] - 2 * Q[75, 4] + Q[50, 4]) / 0.025 ** 2
        assert accel == pytest.approx(-(1 - factor) * 9.81, rel=0.02)
        assert fall > 1.0

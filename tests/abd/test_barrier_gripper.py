"""A two-finger gripper on the barrier solver lifts a ring: a skeleton whose fixed base is a prismatic lift
carrying two prismatic box fingers squeezes an upright torus standing on a static pedestal and lifts it 3 cm
with friction; without friction the fingers slide up along the ring and it stays on the pedestal. IPC Toolkit
checks every step for intersections, independently of the solver."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from ipc_checks import assert_intersection_free

ipctk = pytest.importorskip("ipctk")

DHAT = 1e-3
RING, TUBE = 0.04, 0.012  # the torus's radius and tube radius
FINGER = (0.02, 0.06, 0.2)  # each finger box; 20 cm tall so that its lower edge stays below the ring
PEDESTAL = (0.016, 0.06, 0.1)  # narrower than the fingers' gap: they pass beside it
CENTRE = PEDESTAL[2] + RING + TUBE + 0.5 * DHAT  # the ring's centre, standing on the pedestal
SQUEEZE, LIFT = 5.0, 0.03  # each finger's closing force (N), the lift's travel (m)
DENSITY = 1000.0


def _gripper():
    """The lift (prismatic along z from the ring's centre height) carries a carriage without surface and two
    fingers sliding along x towards each other, their inner faces 1 cm from the ring's sides."""
    sk = rd.Skeleton("gripper")
    carriage = sk.add_body("carriage", rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=1.0),
                           joint_origin=rd.Transform((0.0, 0.0, CENTRE)),
                           inertia=rd.Inertia.from_shape(rd.Box((0.1, 0.05, 0.02)), density=DENSITY))
    finger = rd.Box(FINGER)
    for side, name in ((-1, "left"), (1, "right")):
        body = sk.add_body(name, rd.PrismaticJoint(f"{name}_slide", axis=(-side, 0, 0), damping=2.0), parent=carriage,
                           joint_origin=rd.Transform((side * (TUBE + 0.01 + FINGER[0] / 2), 0.0, 0.0)),
                           inertia=rd.Inertia.from_shape(finger, density=DENSITY))
        body.add_shape(finger)
    return sk


def _world(friction):
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction)
    world.add_static_mesh(rd.Box(PEDESTAL), pose=rd.Transform((0.0, 0.0, PEDESTAL[2] / 2)), name="pedestal")
    world.add_skeleton(_gripper())
    ring = trimesh.creation.torus(major_radius=RING, minor_radius=TUBE, major_sections=24, minor_sections=8)
    world.add_affine_body(ring, density=DENSITY, pose=rd.Transform((0.0, 0.0, CENTRE), rpy=(0.0, np.pi / 2, 0.0)),
                          name="ring")
    return world


def _grip_and_lift(friction, steps=120):
    """The fingers squeeze with SQUEEZE from the start; from 0.2 s a PD controller (with the weight of the
    gripper and the ring as feedforward) raises the lift by LIFT at 0.1 m/s and holds it. Returns the lift's
    travel and the ring's rise (from its start) at every step."""
    world = _world(friction)
    lift = world.layout("gripper").q.start
    weight = 9.81 * (DENSITY * (0.1 * 0.05 * 0.02 + 2 * np.prod(FINGER)) + world.mass_properties("ring")["mass"])
    q, v = world.q, world.v
    travel, rise = [], []
    for k in range(steps):
        target = float(np.clip(0.1 * (k * world.dt - 0.2), 0.0, LIFT))
        tau = np.zeros(world.nv)
        tau[lift + 1] = tau[lift + 2] = SQUEEZE
        tau[lift] = 500.0 * (target - q[lift]) - 20.0 * v[lift] + weight
        q, v = world.step(q, v, tau)
        assert_intersection_free(ipctk, world, q, DHAT)
        travel.append(q[lift])
        rise.append(world.body_pose(q, "ring")[2, 3] - CENTRE)
    return np.array(travel), np.array(rise)


def test_gripper_lifts_and_holds_a_ring_with_friction():
    """mu = 0.5: the squeeze (5 N a finger) holds up to 2 mu SQUEEZE = 5 N, five times the ring's weight. The
    ring rises with the lift (within 1 mm of its 3 cm; measured 0.44 mm) and over the 0.5 s hold moves less than
    0.1 mm against the fingers (measured 0.05 mm)."""
    travel, rise = _grip_and_lift(friction=0.5)
    assert travel[-1] > 0.9 * LIFT
    assert abs(rise[-1] - travel[-1]) < 1e-3
    hold = rise[-50:] - travel[-50:]
    assert np.ptp(hold) < 1e-4


def test_ring_slips_out_of_a_frictionless_grip():
    """mu = 0: the fingers' faces push only across, so they slide up the ring's sides and it stays standing on
    the pedestal (its centre within dhat of where it started; measured 0.37 mm) while the lift rises 3 cm."""
    travel, rise = _grip_and_lift(friction=0.0)
    assert travel[-1] > 0.9 * LIFT
    assert np.abs(rise).max() < DHAT

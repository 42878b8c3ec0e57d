"""Physics against closed forms: pendulum periods, energy of a frictionless chain, a spinning free body,
free fall under the semi-implicit Euler step."""

import numpy as np
import pytest
from rdsupport import hinge_chain, rod_inertia, world_of

import rigidiff as rd

G = 9.81


def crossing_times(t, x):
    """Times where x crosses zero upwards (linear interpolation between samples)."""
    idx = np.nonzero((x[:-1] < 0.0) & (x[1:] >= 0.0))[0]
    return t[idx] - x[idx] * (t[idx + 1] - t[idx]) / (x[idx + 1] - x[idx])


def measured_period(world, q0, v0, seconds):
    steps = int(round(seconds / world.dt))
    Q, _ = world.rollout(q0, v0, np.zeros((steps, world.nv)))
    t = np.arange(steps + 1) * world.dt
    times = crossing_times(t, Q[:, 0])
    assert len(times) >= 3, "too few oscillations to measure a period"
    return np.mean(np.diff(times))


def pendulum(inertia):
    sk = rd.Skeleton("pendulum")
    sk.add_body("bob", joint=rd.RevoluteJoint("hinge", axis=(0.0, 1.0, 0.0)), inertia=inertia)
    return world_of(sk, dt=1e-3)


def test_small_angle_point_mass_pendulum_period():
    L, m = 1.3, 0.7
    world = pendulum(rd.Inertia(m, com=(0.0, 0.0, -L)))  # a point mass at distance L
    period = measured_period(world, np.array([0.01]), np.zeros(1), seconds=12.0)
    expected = 2.0 * np.pi * np.sqrt(L / G)
    assert period == pytest.approx(expected, rel=5e-3)


def test_small_angle_compound_pendulum_period():
    """A rod of length L hinged at one end: T = 2 pi sqrt(I_pivot / (m g L/2)), about 2 pi sqrt(2L / 3g)."""
    L, m, r = 0.8, 2.0, 0.01
    inertia = rod_inertia(m, L, radius=r)
    world = pendulum(inertia)
    period = measured_period(world, np.array([-0.02]), np.zeros(1), seconds=10.0)
    I_pivot = inertia.inertia_about_origin()[1, 1]
    expected = 2.0 * np.pi * np.sqrt(I_pivot / (m * G * L / 2.0))
    assert period == pytest.approx(expected, rel=5e-3)
    assert period == pytest.approx(2.0 * np.pi * np.sqrt(2.0 * L / (3.0 * G)), rel=5e-3)
    # and a compound pendulum is not a point-mass pendulum of the same length
    assert abs(period - 2.0 * np.pi * np.sqrt(L / G)) > 0.1 * period


def test_large_amplitude_changes_the_period():
    """Beyond small angles the period grows: T(theta0) ~ T0 (1 + theta0^2 / 16 + 11 theta0^4 / 3072)."""
    L = 1.0
    world = pendulum(rd.Inertia(1.0, com=(0.0, 0.0, -L)))
    theta0 = 1.0
    period = measured_period(world, np.array([theta0]), np.zeros(1), seconds=12.0)
    T0 = 2.0 * np.pi * np.sqrt(L / G)
    assert period == pytest.approx(T0 * (1 + theta0**2 / 16 + 11 * theta0**4 / 3072), rel=2e-3)


def chain_energy(dt, q_amp, v_amp, seed, seconds=10.0):
    """Energies along a free swing of a 5-link chain (samples every 10 ms), and the energy of its rest state."""
    world = world_of(hinge_chain(5, seed=11), dt=dt)
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-q_amp, q_amp, world.nv)
    v0 = rng.uniform(-v_amp, v_amp, world.nv)
    steps = int(round(seconds / dt))
    Q, V = world.rollout(q0, v0, np.zeros((steps, world.nv)))
    every = int(round(0.01 / dt))
    E = np.array([world.kinetic_energy(q, v) + world.potential_energy(q) for q, v in zip(Q[::every], V[::every])])
    KE = np.array([world.kinetic_energy(q, v) for q, v in zip(Q[::every], V[::every])])
    return E, KE, world.potential_energy(np.zeros(world.nv))


def test_energy_of_frictionless_chain_is_conserved():
    """5-link chain, random initial velocities, 10 s at dt = 1e-3, small oscillations: the energy stays
    within 1 % (of the energy above the chain's rest state)."""
    E, KE, E_rest = chain_energy(1e-3, q_amp=0.01, v_amp=0.01, seed=1)
    scale = E[0] - E_rest
    assert np.max(np.abs(E - E[0])) <= 0.01 * scale
    assert np.ptp(KE) > 0.3 * scale  # energy moves between kinetic and potential: the chain swings


def test_energy_drift_of_a_lively_chain_is_first_order_in_dt():
    """Semi-implicit Euler in velocity form (v' = v + dt a(q, v); q' = q (+) dt v') is symplectic only for
    a constant mass matrix; with M(q) the energy drifts at first order in dt over a fixed time (MuJoCo's
    Euler integrator does the same: tests/world/test_against_mujoco.py shows the trajectories agree)."""
    drifts = []
    for dt in (1e-3, 5e-4):
        E, _, E_rest = chain_energy(dt, q_amp=1.0, v_amp=3.0, seed=5, seconds=2.0)
        drifts.append(np.max(np.abs(E - E[0])) / (E[0] - E_rest))
    assert drifts[0] > 1e-3  # the lively chain does drift ...
    assert 1.7 < drifts[0] / drifts[1] < 2.7  # ... at first order in dt


def spatial_momentum_world(world, q, v, body, inertia):
    """Linear momentum and angular momentum about the world origin of a free body, in world axes."""
    h = inertia.spatial_matrix() @ v  # (linear, angular about the body origin) in body axes
    T = world.body_pose(q, body)
    R, t = T[:3, :3], T[:3, 3]
    p = R @ h[:3]
    return p, R @ h[3:] + np.cross(t, p)


def spinning_body_drift(dt, seconds=2.0):
    inertia = rd.Inertia(3.0, com=(0.1, -0.05, 0.2), rotational_inertia=np.diag([0.05, 0.08, 0.11]))
    sk = rd.Skeleton("top")
    sk.add_body("body", joint=rd.FreeJoint("free"), inertia=inertia)
    world = world_of(sk, dt=dt, gravity=(0.0, 0.0, 0.0))
    q0 = np.array([0.3, -0.2, 0.5, *(np.array([0.1, 0.2, 0.3, 0.9]) / np.linalg.norm([0.1, 0.2, 0.3, 0.9]))])
    v0 = np.array([0.4, -0.1, 0.2, 2.0, -3.0, 1.5])  # not about a principal axis: the body tumbles
    steps = int(round(seconds / dt))
    Q, V = world.rollout(q0, v0, np.zeros((steps, 6)))
    p0, L0 = spatial_momentum_world(world, Q[0], V[0], "body", inertia)
    drift_p = drift_L = 0.0
    for q, v in zip(Q[::10], V[::10]):
        p, L = spatial_momentum_world(world, q, v, "body", inertia)
        drift_p = max(drift_p, np.linalg.norm(p - p0) / np.linalg.norm(p0))
        drift_L = max(drift_L, np.linalg.norm(L - L0) / np.linalg.norm(L0))
    omega_change = np.linalg.norm(V[-1, 3:] - V[0, 3:])
    return drift_p, drift_L, omega_change


def test_free_body_without_gravity_keeps_its_momentum():
    """Torque-free tumbling (centre of mass off the body origin): linear and angular momentum are conserved
    by the dynamics. The explicit velocity update v' = v + dt a(v) makes both drift at first order in dt
    over a fixed time, so we check a small drift that halves with dt and extrapolates to zero."""
    drift_p, drift_L, omega_change = spinning_body_drift(1e-3)
    assert omega_change > 0.5  # the body-frame angular velocity changes: it really tumbles
    assert drift_p < 0.02 and drift_L < 0.03
    drift_p_half, drift_L_half, _ = spinning_body_drift(5e-4)
    for d, d_half in ((drift_p, drift_p_half), (drift_L, drift_L_half)):
        assert abs(2.0 * d_half - d) < 0.05 * d  # Richardson: the drift vanishes as dt -> 0


def test_free_fall_follows_the_semi_implicit_euler_parabola():
    """Semi-implicit Euler: v_n = v0 - g n dt and z_n = z0 + v0 t - g dt^2 n (n + 1) / 2
    = z0 + v0 t - g t^2 / 2 - g dt t / 2, i.e. the exact parabola plus an O(dt) offset g dt t / 2."""
    dt, z0, vx, vz = 1e-3, 10.0, 0.7, 1.2
    sk = rd.Skeleton("stone")
    sk.add_body("stone", joint=rd.FreeJoint("free"),
                inertia=rd.Inertia(2.0, com=(0.05, 0.0, -0.02), rotational_inertia=np.diag([0.01, 0.02, 0.025])))
    world = world_of(sk, dt=dt)
    R = rd.Transform(rpy=(0.3, -0.4, 1.1)).rotation  # a constant, non-trivial orientation
    q0 = np.array([1.0, 2.0, z0, *rd.Transform(rotation=R).quaternion])
    v_world = np.array([vx, 0.0, vz])
    v0 = np.concatenate([R.T @ v_world, np.zeros(3)])  # free-joint velocity is in the body frame
    steps = 2000
    Q, V = world.rollout(q0, v0, np.zeros((steps, 6)))
    n = np.arange(steps + 1)
    t = n * dt
    z_expected = z0 + vz * t - G * dt**2 * n * (n + 1) / 2.0
    np.testing.assert_allclose(Q[:, 2], z_expected, rtol=0, atol=1e-11)
    np.testing.assert_allclose(Q[:, 0], 1.0 + vx * t, rtol=0, atol=1e-11)
    np.testing.assert_allclose(Q[:, 1], 2.0, rtol=0, atol=1e-11)
    np.testing.assert_allclose(Q[:, 3:], np.tile(q0[3:], (steps + 1, 1)), rtol=0, atol=1e-12)
    # world-frame velocity v_n = v0 - g n dt
    vz_world = np.einsum("ij,nj->ni", R, V[:, :3])[:, 2]
    np.testing.assert_allclose(vz_world, vz - G * dt * n, rtol=0, atol=1e-10)
    # the continuous parabola is missed by exactly the first-order offset g dt t / 2
    z_exact = z0 + vz * t - G * t**2 / 2.0
    np.testing.assert_allclose(z_exact - Q[:, 2], G * dt * t / 2.0, rtol=0, atol=1e-11)

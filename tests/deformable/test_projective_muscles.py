"""Muscles of projective worlds (DiffPD's actuation, w/2 (|F m| - a)^2 per sample): the energy's derivatives,
gradients with respect to activations and stiffness against central differences of our own step, the physics
of a contracting bar, and bad input."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff.errors import UnknownNameError


def _bar(gravity=(0.0, 0.0, -9.81), fixed=True, tolerance=1e-13, method="newton"):
    world = rd.World(dt=1e-2, solver="projective", tolerance=tolerance, max_iterations=5000, gravity=gravity,
                     method=method)
    mesh = rd.HexMesh.box((0.2, 0.05, 0.05), (4, 1, 1))
    pinned = np.flatnonzero(mesh.vertices[:, 0] == 0.0) if fixed else None
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="bar",
                         fixed=pinned)
    return world


def _two_muscles(world):
    # a lower muscle along x, and an upper one with one slanted fibre per element
    lower = world.add_muscle("bar", [0, 1], (1.0, 0.0, 0.0), 1e4, name="lower")
    upper = world.add_muscle("bar", [2, 3], [(1.0, 0.0, 0.3), (1.0, 0.2, 0.0)], 2e4)
    return lower, upper


def test_energy_gradient_and_hessian_with_muscles():
    world = _bar()
    _two_muscles(world)
    rng = np.random.default_rng(0)
    q = world.q + 1e-2 * rng.standard_normal(world.nq)
    a = np.array([0.7, 1.2])
    _, g = world.energy(q, a)
    eps = 1e-6
    fd = np.array([(world.energy(q + eps * e, a)[0] - world.energy(q - eps * e, a)[0]) / (2 * eps)
                   for e in np.eye(world.nq)])
    np.testing.assert_allclose(g, fd, atol=1e-7 * np.abs(g).max())
    world._set_activation(a)
    z = rng.standard_normal(world.nq)
    hz = world._pw_hessian_product(q, z)
    fd_h = (world.energy(q + eps * z, a)[1] - world.energy(q - eps * z, a)[1]) / (2 * eps)
    np.testing.assert_allclose(hz, fd_h, atol=1e-6 * np.abs(hz).max())
    # the muscles change the energy: without them (activation 1 and a rest fibre) it differs
    assert world.energy(q, a)[0] != world.energy(q)[0]


@pytest.mark.parametrize("method", ["newton", "pd", "newton-cholesky"])
def test_step_vjp_activation_and_stiffness_gradients(method):
    world = _bar(method=method)
    lower, upper = _two_muscles(world)
    rng = np.random.default_rng(1)
    q = world.q + 1e-3 * rng.standard_normal(world.nq)
    v = 0.1 * rng.standard_normal(world.nv)
    a = np.array([0.8, 1.1])
    wq, wv = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def loss(activation):
        qn, vn = world.step(q, v, None, activation)
        return wq @ qn + wv @ vn

    g = world.step_vjp(q, v, None, wq, wv, a)
    eps = 1e-6
    fd = [(loss(a + eps * e) - loss(a - eps * e)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(g.activation, fd, rtol=1e-6)
    assert g.parameter_names[-2:] == ("muscle_stiffness:lower", "muscle_stiffness:" + upper)
    for name in (lower, upper):
        k = world.muscle_stiffness(name)
        values = []
        for sign in (1, -1):
            world.set_muscle_stiffness(name, k * (1 + sign * 1e-6))
            values.append(loss(a))
        world.set_muscle_stiffness(name, k)
        fd_k = (values[0] - values[1]) / (2e-6 * k)
        assert g.parameter("muscle_stiffness:" + name) == pytest.approx(fd_k, rel=1e-5)


def test_rollout_backward_through_activations():
    world = _bar()
    world.add_muscle("bar", [0, 1, 2, 3], (1.0, 0.0, 0.0), 1e4)
    T = 4
    rng = np.random.default_rng(2)
    activations = 1.0 + 0.2 * rng.standard_normal((T, 1))
    forces = np.zeros((T, world.nv))
    w = rng.standard_normal(world.nq)

    def loss(acts):
        Q, _ = world.rollout(world.q, world.v, forces, acts)
        return w @ Q[-1]

    Q, V = world.rollout(world.q, world.v, forces, activations)
    dQ = np.zeros((T + 1, world.nq))
    dQ[-1] = w
    g = world.rollout_backward(Q, V, forces, dQ, np.zeros((T + 1, world.nv)), activations)
    assert g.activation.shape == (T, 1)
    eps = 1e-6
    for t in range(T):
        e = np.zeros((T, 1))
        e[t] = eps
        fd = (loss(activations + e) - loss(activations - e)) / (2 * eps)
        assert g.activation[t, 0] == pytest.approx(fd, rel=1e-5, abs=1e-9)


def test_a_contracting_muscle_shortens_a_free_bar_and_keeps_its_momentum():
    world = _bar(gravity=(0.0, 0.0, 0.0), fixed=False, tolerance=1e-10)
    world.add_muscle("bar", np.arange(4), (1.0, 0.0, 0.0), 1e4)
    q, v = world.q, world.v
    x0 = q.reshape(-1, 3)
    length0 = np.ptp(x0[:, 0])
    for _ in range(30):
        q, v = world.step(q, v, activation=[0.8])
    x = q.reshape(-1, 3)
    assert np.ptp(x[:, 0]) < 0.97 * length0  # shorter along the fibre
    momentum = world.masses("bar") @ v.reshape(-1, 3)
    np.testing.assert_allclose(momentum, 0.0, atol=1e-9)
    # at activation 1 the rest shape stays at rest
    q1, v1 = world.step(world.q, world.v)
    np.testing.assert_allclose(q1, world.q, atol=1e-12)


def test_bad_muscles_are_named():
    world = _bar()
    with pytest.raises(UnknownNameError, match="no deformable body"):
        world.add_muscle("nope", [0], (1, 0, 0), 1e4)
    with pytest.raises(ValueError, match="element 7 is not an element of bar"):
        world.add_muscle("bar", [7], (1, 0, 0), 1e4)
    with pytest.raises(ValueError, match="listed twice"):
        world.add_muscle("bar", [0, 0], (1, 0, 0), 1e4)
    with pytest.raises(ValueError, match="non-zero"):
        world.add_muscle("bar", [0], (0, 0, 0), 1e4)
    with pytest.raises(ValueError, match="fiber must have shape"):
        world.add_muscle("bar", [0, 1], np.ones((3, 3)), 1e4)
    with pytest.raises(ValueError, match="stiffness"):
        world.add_muscle("bar", [0], (1, 0, 0), -1.0)
    with pytest.raises(ValueError, match="elements must be"):
        world.add_muscle("bar", [0.5], (1, 0, 0), 1e4)
    name = world.add_muscle("bar", [0], (1, 0, 0), 1e4)
    with pytest.raises(ValueError, match="already belongs to a muscle"):
        world.add_muscle("bar", [1, 0], (1, 0, 0), 1e4)
    with pytest.raises(ValueError, match="already used"):
        world.add_muscle("bar", [2], (1, 0, 0), 1e4, name=name)
    assert world.muscle_names == (name,)  # failed calls add nothing
    with pytest.raises(UnknownNameError, match="no muscle"):
        world.muscle_stiffness("nope")
    with pytest.raises(ValueError, match="activation"):
        world.step(world.q, world.v, activation=[1.0, 1.0])
    with pytest.raises(ValueError, match="activation"):
        world.step(world.q, world.v, activation=[np.nan])

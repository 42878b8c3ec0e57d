"""Derivatives of the projective world against central differences of our own step at a tight tolerance:
the energy's gradient and Hessian products (the projections' Jacobians), step_vjp with respect to q, v, f
and Young's modulus, and the dense step Jacobians."""

import numpy as np
import pytest

import rigidiff as rd

KINDS = ["corotated", "volume", ("corotated", "volume"), "neohookean", ("neohookean", "corotated"),
         "corotated_hyperelastic", ("corotated_hyperelastic", "volume")]


def _beam(kind=("corotated", "volume"), tet=False, E=2e4, ground=False):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-13, max_iterations=5000)
    mesh = rd.HexMesh.box((0.2, 0.05, 0.05), (4, 1, 1))
    if tet:  # each cube cut into 6 tetrahedra around its main diagonal
        cubes = mesh.elements
        split = [[0, 1, 3, 7], [0, 1, 7, 5], [0, 5, 7, 4], [0, 3, 2, 7], [0, 2, 6, 7], [0, 6, 4, 7]]
        tets = np.concatenate([cubes[:, s] for s in split])
        vol = rd.TetMesh.__new__(rd.TetMesh)
        vol.vertices, vol.elements = mesh.vertices, tets
        flip = vol.element_volumes() < 0
        tets[flip] = tets[flip][:, [0, 2, 1, 3]]
        mesh = rd.TetMesh(mesh.vertices, tets)
    fixed = np.flatnonzero(mesh.vertices[:, 0] == 0.0)
    if ground:
        world.add_ground(height=-0.01)
    world.add_deformable(mesh, rd.ProjectiveMaterial(E, 0.3, 1000.0, kind=kind), name="beam", fixed=fixed)
    return world


def _state(world, seed=1, spread=1e-3):
    rng = np.random.default_rng(seed)
    q = world.q + spread * rng.standard_normal(world.nq)
    return q, 0.1 * rng.standard_normal(world.nv), 0.01 * rng.standard_normal(world.nv), rng


def _check_energy_derivatives(world, q, rng, eps, tol_gradient, tol_hessian):
    """The energy's gradient and a Hessian product at q against central differences (max-norm relative)."""
    _, g = world.energy(q)
    fd = np.array([(world.energy(q + eps * e)[0] - world.energy(q - eps * e)[0]) / (2 * eps)
                   for e in np.eye(world.nq)])
    np.testing.assert_allclose(g, fd, atol=tol_gradient * np.abs(g).max())
    z = rng.standard_normal(world.nq)
    hz = world._pw_hessian_product(q, z)
    fd_h = (world.energy(q + eps * z)[1] - world.energy(q - eps * z)[1]) / (2 * eps)
    np.testing.assert_allclose(hz, fd_h, atol=tol_hessian * np.abs(hz).max())
    assert not np.array_equal(hz, fd_h)


@pytest.mark.parametrize("kind", KINDS)
def test_energy_gradient_and_hessian(kind):
    world = _beam(kind)
    q, _, _, rng = _state(world, spread=1e-2)
    _check_energy_derivatives(world, q, rng, eps=1e-6, tol_gradient=1e-7, tol_hessian=1e-6)


def _fd(world, L, fun, x, eps=1e-6):
    out = np.empty(len(x))
    for i in range(len(x)):
        e = np.zeros(len(x))
        e[i] = eps
        out[i] = (L(*fun(x + e)) - L(*fun(x - e))) / (2 * eps)
    return out


@pytest.mark.parametrize("kind, tet", [("corotated", False), (("corotated", "volume"), False),
                                       (("corotated", "volume"), True), ("neohookean", False), ("neohookean", True),
                                       ("corotated_hyperelastic", False), ("corotated_hyperelastic", True)])
def test_step_vjp_matches_central_differences(kind, tet):
    # ("volume" alone has no shear stiffness: a beam of it is a mechanism, its step ill-conditioned)
    world = _beam(kind, tet=tet)
    q, v, f, rng = _state(world)
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)

    def L(qn, vn):
        return a @ qn + b @ vn

    G = world.step_vjp(q, v, f, a, b)
    qn, vn = world.step(q, v, f)
    np.testing.assert_array_equal(G.q_next, qn)
    for g, fun, x in [(G.q, lambda x: world.step(x, v, f), q), (G.v, lambda x: world.step(q, x, f), v),
                      (G.tau, lambda x: world.step(q, v, x), f)]:
        d = _fd(world, L, fun, x)
        assert np.abs(d).max() > 0
        assert np.abs(g - d).max() <= 1e-6 * np.abs(d).max()


@pytest.mark.parametrize("kind", ["corotated", ("corotated", "volume"), "neohookean", ("neohookean", "volume"),
                                  "corotated_hyperelastic", ("corotated_hyperelastic", "corotated")])
def test_material_gradients(kind):
    world = _beam(kind)
    q, v, f, rng = _state(world)
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    G = world.step_vjp(q, v, f, a, b)
    assert G.parameter_names == ("youngs_modulus:beam", "poisson_ratio:beam", "density:beam", "contact_stiffness",
                                 "friction")
    h = 1e-6

    def loss(E, nu):
        world.set_material("beam", rd.ProjectiveMaterial(E, nu, 1000.0, kind=kind))
        qn, vn = world.step(q, v, f)
        return a @ qn + b @ vn

    fd_E = (loss(2e4 * (1 + h), 0.3) - loss(2e4 * (1 - h), 0.3)) / (2 * h * 2e4)
    fd_nu = (loss(2e4, 0.3 + h) - loss(2e4, 0.3 - h)) / (2 * h)
    assert G.parameter("youngs_modulus:beam") == pytest.approx(fd_E, rel=1e-6)
    assert G.parameter("poisson_ratio:beam") == pytest.approx(fd_nu, rel=1e-6)
    assert fd_nu != 0.0


def _check_vjp_in_contact(world, q, v, f, rng):
    """step_vjp with respect to q against central differences, in a step that ends in contact."""
    world.step(q, v, f)
    assert world.last_step["contacts"] > 0
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    G = world.step_vjp(q, v, f, a, b)
    d = _fd(world, lambda qn, vn: a @ qn + b @ vn, lambda y: world.step(y, v, f), q)
    assert np.abs(G.q - d).max() <= 1e-6 * np.abs(d).max()


def test_gradient_in_contact_with_the_ground():
    # the beam's free end pressed 5 mm into the ground: the penalty's Hessian (n n^T where penetrating) counts
    world = _beam(ground=True)
    q, v, f, rng = _state(world, spread=1e-4)
    x = q.reshape(-1, 3)
    x[x[:, 0] > 0.1, 2] -= 0.015
    q = x.ravel()
    _check_vjp_in_contact(world, q, v, f, rng)


def test_dense_jacobians_agree_with_vjp():
    world = _beam(tet=True)
    q, v, f, rng = _state(world)
    J = world.step_jacobians(q, v, f)
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    G = world.step_vjp(q, v, f, a, b)
    np.testing.assert_allclose(a @ J.dq_dq + b @ J.dv_dq, G.q, rtol=1e-9, atol=1e-9 * np.abs(G.q).max())
    np.testing.assert_allclose(a @ J.dq_dtau + b @ J.dv_dtau, G.tau, rtol=1e-9, atol=1e-12)
    # fixed vertices do not move: their rows of dq_dq are unit rows
    fixed = world.fixed_vertices("beam")
    rows = (3 * fixed[:, None] + np.arange(3)).ravel()
    np.testing.assert_allclose(J.dq_dq[rows], np.eye(world.nq)[rows], atol=1e-12)


@pytest.mark.parametrize("speed", [0.5, 1e-4], ids=["sliding", "sticking"])
def test_gradient_with_friction(speed):
    # a block pressed 2 mm into the ground: its bottom vertices rub (lagged normal forces, reference point q)
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=5000, friction=0.4,
                     friction_velocity=1e-3)
    world.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.1, 0.1), (1, 1, 1), origin=(0, 0, -0.002))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="b")
    rng = np.random.default_rng(5)
    q = world.q + 1e-4 * rng.standard_normal(world.nq)
    v = np.tile([speed, 0.3 * speed, 0.0], world.nv // 3)
    f = np.zeros(world.nv)
    world.step(q, v, f)
    assert world.last_step["contacts"] == 4
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    G = world.step_vjp(q, v, f, a, b)

    def L(qn, vn):
        return a @ qn + b @ vn

    for g, fun, x in [(G.q, lambda y: world.step(y, v, f), q), (G.v, lambda y: world.step(q, y, f), v)]:
        d = _fd(world, L, fun, x, eps=1e-6)
        assert np.abs(g - d).max() <= 1e-6 * np.abs(d).max()


def test_rollout_backward_matches_central_differences():
    world = _beam()
    q0, v0, _, rng = _state(world)
    forces = 0.01 * rng.standard_normal((3, world.nv))
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    dL_dQ, dL_dV = np.zeros((4, world.nq)), np.zeros((4, world.nv))
    dL_dQ[-1], dL_dV[-1], dL_dQ[1] = a, b, b  # the final state and an intermediate one

    def loss(q, v, fs):
        Q, V = world.rollout(q, v, fs)
        return a @ Q[-1] + b @ V[-1] + b @ Q[1]

    Q, V = world.rollout(q0, v0, forces)
    G = world.rollout_backward(Q, V, forces, dL_dQ, dL_dV)
    eps = 1e-6
    for i in rng.choice(world.nq, 6, replace=False):
        e = np.zeros(world.nq)
        e[i] = eps
        assert G.q[i] == pytest.approx((loss(q0 + e, v0, forces) - loss(q0 - e, v0, forces)) / (2 * eps),
                                       rel=1e-6, abs=1e-8)
        assert G.v[i] == pytest.approx((loss(q0, v0 + e, forces) - loss(q0, v0 - e, forces)) / (2 * eps),
                                       rel=1e-6, abs=1e-8)
        df = np.zeros_like(forces)
        df[1, i] = eps
        assert G.tau[1, i] == pytest.approx((loss(q0, v0, forces + df) - loss(q0, v0, forces - df)) / (2 * eps),
                                            rel=1e-6, abs=1e-8)
    with pytest.raises(ValueError, match="dL_dQ"):
        world.rollout_backward(Q, V, forces, dL_dQ[:2], dL_dV)


def test_gradients_in_contact_with_a_sphere():
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-12, max_iterations=5000)
    world.add_sphere((0.05, 0.05, -0.3), 0.3)
    mesh = rd.HexMesh.box((0.1, 0.1, 0.05), (2, 2, 1), origin=(0, 0, -0.004))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=("corotated", "volume")), name="b")
    rng = np.random.default_rng(7)
    q = world.q + 1e-4 * rng.standard_normal(world.nq)
    v, f = 0.1 * rng.standard_normal(world.nv), np.zeros(world.nv)
    _check_energy_derivatives(world, q, rng, eps=1e-7, tol_gradient=1e-6, tol_hessian=1e-5)
    _check_vjp_in_contact(world, q, v, f, rng)


@pytest.mark.parametrize("friction", [0.0, 0.4])
def test_density_contact_stiffness_and_friction_gradients(friction):
    # a block sliding on the ground, pressed in and pushed by a force: every parameter of the contact and the
    # density reaches the step (mu = 0 too: the gradient with respect to mu is that of switching friction on)
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-13, max_iterations=5000, friction=friction,
                     contact_stiffness=3e3)
    world.add_ground()
    mesh = rd.HexMesh.box((0.1, 0.05, 0.05), (2, 1, 1))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 800.0, kind=("corotated", "volume")), name="block")
    rng = np.random.default_rng(4)
    q = world.q - np.tile([0.0, 0.0, 2e-3], world.nq // 3)  # 2 mm into the ground
    v = np.tile([0.3, 0.1, 0.0], world.nq // 3)
    f = 0.05 * rng.standard_normal(world.nv)
    a, b = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    G = world.step_vjp(q, v, f, a, b)
    assert world.last_step["contacts"] > 0

    def loss():
        qn, vn = world.step(q, v, f)
        return a @ qn + b @ vn

    def setter(name):
        if name == "density:block":
            return lambda x: world.set_material("block", rd.ProjectiveMaterial(2e4, 0.3, x, kind=("corotated", "volume")))
        return lambda x: setattr(world, name, x)

    for name, value in (("density:block", 800.0), ("contact_stiffness", 3e3), ("friction", friction)):
        h = 1e-4 * max(value, 1.0)  # the solves are exact to about 1e-11: smaller steps would see their noise
        values = []
        for sign in (1, -1) if value > 0.0 else (1, 0):  # mu = 0: a one-sided difference
            setter(name)(value + sign * h)
            values.append(loss())
        setter(name)(value)
        fd = (values[0] - values[1]) / (2 * h if value > 0.0 else h)
        assert fd != 0.0
        assert G.parameter(name) == pytest.approx(fd, rel=1e-5 if value > 0.0 else 1e-4, abs=1e-9), name


def test_rollout_backward_starts_each_solve_at_the_recorded_state():
    # solving a recorded step again from its recorded end takes no iteration, and gives the gradients of
    # step_vjp chained by hand (which solve each step from scratch)
    world = _beam(ground=True)
    world.tolerance = 1e-10
    q, v, _, rng = _state(world)
    T = 4
    forces = 0.01 * rng.standard_normal((T, world.nv))
    Q, V = world.rollout(q, v, forces)
    dQ, dV = rng.standard_normal((T + 1, world.nq)), rng.standard_normal((T + 1, world.nv))
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    assert world.last_step["iterations"] == 0
    gq, gv = dQ[T].copy(), dV[T].copy()
    for t in range(T - 1, -1, -1):
        s = world.step_vjp(Q[t], V[t], forces[t], gq, gv)
        assert world.last_step["iterations"] > 0
        gq, gv = s.q + dQ[t], s.v + dV[t]
    np.testing.assert_allclose(g.q, gq, rtol=0, atol=1e-7 * np.abs(gq).max())
    np.testing.assert_allclose(g.v, gv, rtol=0, atol=1e-7 * np.abs(gv).max())


@pytest.mark.parametrize("ground", [False, True])
def test_an_adjoint_the_iterations_cannot_finish_is_solved_directly(ground):
    """Where the conjugate gradients stall short of the tolerance (a nearly incompressible material and stiff
    contact on a fine mesh took more than max_iterations), the factorised Hessian answers: the same gradient as the
    iterations give when they finish (before, the adjoint raised "did not converge")."""
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-8, friction=0.5)
    if ground:
        world.add_ground()
    mesh = rd.HexMesh.box((0.08, 0.02, 0.02), (8, 2, 2))
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e6, 0.49, 1000.0, kind=("corotated", "volume")), name="beam",
                         pose=rd.Transform((0.0, 0.0, 1e-4 if ground else 0.0)),
                         fixed=None if ground else np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    forces = np.zeros((5, world.nv))
    Q, V = world.rollout(world.q, world.v, forces)
    rng = np.random.default_rng(0)
    dQ, dV = np.zeros_like(Q), np.zeros_like(V)
    dQ[-1], dV[-1] = rng.standard_normal(world.nq), rng.standard_normal(world.nv)
    reference = world.rollout_backward(Q, V, forces, dQ, dV)
    world.solver_options(max_iterations=2)  # the recorded steps need none; the adjoints need hundreds
    g = world.rollout_backward(Q, V, forces, dQ, dV)
    for a, b in ((g.q, reference.q), (g.v, reference.v)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6 * np.abs(b).max())

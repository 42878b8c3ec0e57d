"""The corotated hyperelastic energy (Stomakhin et al.'s fixed corotated) in projective worlds: its energy against
an independent evaluation, its shear term's projection against a numerical minimisation over rotations, linear
elasticity at small strain, the three solvers agreeing, inverted elements pushed back the right way out, and the
gradients of steps that start inverted. The energy's gradient, Hessian, step_vjp and (E, nu) gradients of an
upright beam are in test_projective_gradients.py, with the other kinds."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.spatial.transform import Rotation

import rigidiff as rd
from test_projective_gradients import _fd

KIND = "corotated_hyperelastic"
TET = np.array([[0.0, 0.0, 0.0], [0.05, 0.0, 0.0], [0.0, 0.04, 0.0], [0.01, 0.0, 0.06]])


def _tet_world(kind=KIND, method="newton", gravity=(0.0, 0.0, -9.81), tolerance=1e-12, E=1e4, nu=0.3):
    world = rd.World(dt=1e-2, solver="projective", gravity=gravity, tolerance=tolerance, method=method,
                     max_iterations=5000)
    world.add_deformable(rd.TetMesh(TET, [[0, 1, 2, 3]]), rd.ProjectiveMaterial(E, nu, 1000.0, kind=kind),
                         name="tet")
    return world


def _deformation_gradient(x):
    Dm = (TET[1:] - TET[0]).T
    return (x[1:] - x[0]).T @ np.linalg.inv(Dm)


def _nearest_rotation(F):
    U, _, Vt = np.linalg.svd(F)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    return U @ D @ Vt


def _energy_density(F, mu, lam):
    return mu * np.sum((F - _nearest_rotation(F)) ** 2) + 0.5 * lam * (np.linalg.det(F) - 1.0) ** 2


@pytest.mark.parametrize("inverted", [False, True])
def test_energy_matches_an_independent_evaluation(inverted):
    world = _tet_world()
    rng = np.random.default_rng(3)
    x = TET @ Rotation.from_rotvec([0.3, -0.5, 0.9]).as_matrix().T + 0.008 * rng.standard_normal((4, 3))
    if inverted:  # the apex pushed through the opposite face
        x[3] = x[:3].mean(axis=0) - 0.3 * (x[3] - x[:3].mean(axis=0))
    F = _deformation_gradient(x)
    assert (np.linalg.det(F) < 0) == inverted
    mu, lam = world.material("tet").lame
    volume = abs(np.linalg.det(TET[1:] - TET[0])) / 6.0
    E, grad = world.energy(x.ravel())
    assert E == pytest.approx(volume * _energy_density(F, mu, lam), rel=1e-12)
    assert np.isfinite(grad).all() and np.abs(grad).max() > 0
    # the split: the "corotated" energy (its shear term) plus the volume term
    corotated = _tet_world(kind="corotated").energy(x.ravel())[0]
    assert E - corotated == pytest.approx(0.5 * lam * volume * (np.linalg.det(F) - 1.0) ** 2, rel=1e-10)
    # rigid motions cost nothing
    moved = TET @ Rotation.from_rotvec([2.0, 0.1, -1.0]).as_matrix().T + [0.3, -0.2, 1.0]
    assert world.energy(moved.ravel())[0] < 1e-25


@pytest.mark.parametrize("inverted", [False, True])
def test_the_shear_terms_projection_is_the_nearest_rotation(inverted):
    # the energy's shear term is mu V |F - R|^2 with R from the rotation-variant SVD: the minimum over all
    # rotations, found here by scipy from several starts
    rng = np.random.default_rng(8)
    F = np.eye(3) + 0.4 * rng.standard_normal((3, 3))
    if (np.linalg.det(F) < 0) != inverted:
        F[:, 0] *= -1.0
    world = _tet_world(nu=0.0)  # lambda = 0: the energy is its shear term alone
    mu, _ = world.material("tet").lame
    volume = abs(np.linalg.det(TET[1:] - TET[0])) / 6.0
    x = TET[0] + (TET - TET[0]) @ F.T
    shear = world.energy(x.ravel())[0] / (mu * volume)

    def distance(r):
        return np.sum((F - Rotation.from_rotvec(r).as_matrix()) ** 2)

    best = min(minimize(distance, r0, method="BFGS", options={"gtol": 1e-12}).fun
               for r0 in rng.uniform(-np.pi, np.pi, (8, 3)))
    assert shear == pytest.approx(best, rel=1e-9)


def _beam(kind, nu, method="newton"):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, method=method, max_iterations=5000)
    mesh = rd.HexMesh.box((0.2, 0.04, 0.04), (10, 2, 2))
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e4, nu, 1000.0, kind=kind), name="beam",
                         fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world


def _run(world, steps):
    q, v = world.q, world.v
    for _ in range(steps):
        q, v = world.step(q, v)
    return q


def test_small_strain_is_linear_elasticity():
    # a cantilever sags under gravity as the neo-Hookean one does (both linear elasticity at small strain, at any
    # nu); at nu = 0 (lambda = 0) the energy is the corotated one
    sag = {k: _run(_beam(k, 0.3), 150).reshape(-1, 3)[:, 2].min() for k in (KIND, "neohookean")}
    assert sag[KIND] < -1e-4
    assert sag[KIND] == pytest.approx(sag["neohookean"], rel=2e-2)
    np.testing.assert_allclose(_run(_beam(KIND, 0.0), 20), _run(_beam("corotated", 0.0), 20), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", [KIND, (KIND, "volume")])
def test_the_solvers_agree_on_a_cantilever(kind):
    finals = [_run(_beam(kind, 0.4, method), 5) for method in ("newton", "pd", "newton-cholesky")]
    world = _beam(kind, 0.4)
    scale = np.abs(finals[0] - world.q).max()
    assert scale > 1e-4
    for other in finals[1:]:
        assert np.abs(other - finals[0]).max() < 1e-7 * scale


def _inverted_tet():
    """A state of the tetrahedron with its apex pushed 30 % through its base: det F < 0."""
    x = TET.copy()
    x[3] = [0.012, 0.012, -0.018]
    return x


@pytest.mark.parametrize("method", ["newton", "pd", "newton-cholesky"])
def test_an_inverted_element_is_pushed_back_the_right_way_out(method):
    # as with "corotated", the energy is finite for an inverted element, and both of its terms push it back
    # (R is a rotation, and (J - 1)^2 falls as J grows); the step converges and restores the orientation
    world = _tet_world(method=method, gravity=(0.0, 0.0, 0.0), tolerance=1e-8)
    x = _inverted_tet()
    assert np.linalg.det(_deformation_gradient(x)) < 0
    q, v = x.ravel(), np.zeros(12)
    for _ in range(30):
        q, v = world.step(q, v)
        assert world.last_step["converged"]
    volumes = world.mesh("tet").element_volumes(q.reshape(-1, 3))
    assert volumes.min() > 0.0
    assert np.abs(q.reshape(-1, 3).mean(axis=0) - x.mean(axis=0)).max() < 1e-12  # momentum stays zero


def test_gradients_of_a_step_that_starts_inverted():
    world = _tet_world(tolerance=1e-13)
    rng = np.random.default_rng(11)
    q = _inverted_tet().ravel() + 1e-4 * rng.standard_normal(12)
    v, f = 0.1 * rng.standard_normal(12), 0.01 * rng.standard_normal(12)
    a, b = rng.standard_normal(12), rng.standard_normal(12)

    def L(qn, vn):
        return a @ qn + b @ vn

    G = world.step_vjp(q, v, f, a, b)
    for g, fun, x in [(G.q, lambda y: world.step(y, v, f), q), (G.v, lambda y: world.step(q, y, f), v),
                      (G.tau, lambda y: world.step(q, v, y), f)]:
        d = _fd(world, L, fun, x)
        assert np.abs(d).max() > 0
        assert np.abs(g - d).max() <= 1e-6 * np.abs(d).max()
    h = 1e-6

    def loss(E, nu):
        world.set_material("tet", rd.ProjectiveMaterial(E, nu, 1000.0, kind=KIND))
        return L(*world.step(q, v, f))

    fd_E = (loss(1e4 * (1 + h), 0.3) - loss(1e4 * (1 - h), 0.3)) / (2 * h * 1e4)
    fd_nu = (loss(1e4, 0.3 + h) - loss(1e4, 0.3 - h)) / (2 * h)
    assert G.parameter("youngs_modulus:tet") == pytest.approx(fd_E, rel=1e-6)
    assert G.parameter("poisson_ratio:tet") == pytest.approx(fd_nu, rel=1e-6)


def test_its_parameters_are_the_materials():
    world = _tet_world()
    p = world.parameters()
    assert p.names[:3] == ("youngs_modulus:tet", "poisson_ratio:tet", "density:tet")
    world.set_parameters({"youngs_modulus:tet": 2e4, "poisson_ratio:tet": 0.45})
    m = world.material("tet")
    assert (m.youngs_modulus, m.poisson_ratio, m.energies) == (2e4, 0.45, (KIND,))
    assert m.lame == pytest.approx((2e4 / 2.9, 2e4 * 0.45 / (1.45 * 0.1)))


def test_bad_kinds_are_named():
    with pytest.raises(ValueError, match="corotated_hyperelastic"):
        rd.ProjectiveMaterial(1e4, 0.3, 1000.0, kind="fixed_corotated")
    with pytest.raises(ValueError, match="kind"):
        rd.ProjectiveMaterial(1e4, 0.3, 1000.0, kind=(KIND, KIND))
    world = _tet_world()
    with pytest.raises(ValueError, match="kind stays"):
        world.set_material("tet", rd.ProjectiveMaterial(1e4, 0.3, 1000.0, kind="corotated"))

"""The volume energy's local projection: the singular values' nearest point of the sheet prod s = 1 against an
independent minimisation (a grid, then scipy's BFGS), its Jacobian against central differences, and elements
stretched several times in one direction (a Newton iterate far from the solution, or a violent impact), where the
KKT iteration alone wandered between the sheet's branches and the step raised "did not converge"."""

import numpy as np
import pytest
from scipy.optimize import minimize

import rigidiff as rd
from rigidiff import _testing


def _nearest_on_sheet(sigma):
    """The positive point of prod s = 1 nearest sigma, over s = exp(u), u3 = -u1 - u2: the least distance on a grid
    of u in [-6, 6]^2 (step 0.025, every basin of the distance is wider), then BFGS from that grid point."""
    sigma = np.asarray(sigma, dtype=float)

    def distance(u):
        u = np.clip(u, -30.0, 30.0)
        s = np.exp([u[0], u[1], -u[0] - u[1]])
        return 0.5 * np.sum((s - sigma) ** 2)

    grid = np.linspace(-6.0, 6.0, 481)
    u0, u1 = np.meshgrid(grid, grid, indexing="ij")
    on_grid = (np.exp(u0) - sigma[0]) ** 2 + (np.exp(u1) - sigma[1]) ** 2 + (np.exp(-u0 - u1) - sigma[2]) ** 2
    i, j = np.unravel_index(np.argmin(on_grid), on_grid.shape)
    best = minimize(distance, [grid[i], grid[j]], method="BFGS", options={"gtol": 1e-13})
    u = np.clip(best.x, -30.0, 30.0)
    return np.exp([u[0], u[1], -u[0] - u[1]])


# sorted decreasing, as the solver's SVD gives them (the last carries det F's sign)
MILD = [(1.1, 1.0, 0.95), (1.0, 1.0, 1.0), (1.3, 0.9, 0.8), (0.9, 0.85, 0.8)]
STRETCHED = [(6.788106, 2.137587, 1.045739), (10.0, 1.0, 0.5), (8.0, 0.2, 0.1), (20.0, 3.0, 2.0), (5.0, 5.0, 0.05),
             (12.0, 0.95, 0.9), (4.0, 3.5, 3.0), (2.47858547, 1.6224614, 1.58041747), (17.75, 13.85, 9.09)]
INVERTED = [(1.2, 1.0, -0.3), (3.0, 0.5, -0.5), (1.0, 0.2, -0.01), (6.0, 2.0, -1.5)]


@pytest.mark.parametrize("sigma", MILD + STRETCHED + INVERTED)
def test_projection_is_the_nearest_point_of_the_sheet(sigma):
    sigma = np.asarray(sigma, dtype=float)
    s, _ = _testing.volume_projection(sigma)
    assert abs(np.prod(s) - 1.0) < 1e-12
    expected = _nearest_on_sheet(sigma)
    np.testing.assert_allclose(s, expected, rtol=1e-6, atol=1e-9)


def test_projection_on_random_stretches_is_never_farther_than_the_oracle():
    """Singular values spread over e^-3..e^3.5 (a third of them inverted): the projection lies on the sheet and is
    as near sigma as the best of scipy's starts (the KKT iteration alone sometimes settled at a farther KKT point,
    shrinking a larger coordinate, or did not converge)."""
    rng = np.random.default_rng(3)
    for i in range(30):
        sigma = np.sort(np.exp(rng.uniform(-3.0, 3.5, 3)))[::-1]
        if i % 3 == 0:
            sigma[2] = -sigma[2]
        s, _ = _testing.volume_projection(sigma)
        assert abs(np.prod(s) - 1.0) < 1e-12 and np.all(s > 0.0)
        best = _nearest_on_sheet(sigma)
        assert np.linalg.norm(s - sigma) <= np.linalg.norm(best - sigma) * (1.0 + 1e-9) + 1e-12, (sigma, s, best)


@pytest.mark.parametrize("sigma", MILD + STRETCHED + INVERTED)
def test_projection_jacobian_against_central_differences(sigma):
    sigma = np.asarray(sigma, dtype=float)
    _, J = _testing.volume_projection(sigma)
    h = 1e-6
    fd = np.empty((3, 3))
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd[:, k] = (_testing.volume_projection(sigma + e)[0] - _testing.volume_projection(sigma - e)[0]) / (2 * h)
    np.testing.assert_allclose(J, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())


def test_a_tetrahedron_stretched_sevenfold_has_the_energy_of_its_nearest_point():
    """The projective world's volume energy at a tetrahedron stretched by diag(6.79, 2.14, 1.05) (the singular
    values a bounced bunny's Newton iterate reached) is the energy per squared distance of a mildly stretched one
    times the squared distance to the sheet, and its step runs."""
    rest = 0.1 * np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    world = rd.World(dt=1e-3, solver="projective", gravity=(0.0, 0.0, 0.0), tolerance=1e-8)
    world.add_deformable(rd.TetMesh(rest, [[0, 1, 2, 3]]), rd.ProjectiveMaterial(1e5, 0.3, 1000.0, kind="volume"),
                         name="tet")

    def energy_per_distance(stretch):
        q = (rest @ np.diag(stretch)).ravel()
        energy, _ = world.energy(q)
        d = np.linalg.norm(np.asarray(stretch) - _nearest_on_sheet(stretch))
        return energy / d**2

    mild = energy_per_distance((1.2, 1.0, 0.9))
    np.testing.assert_allclose(energy_per_distance((6.788106, 2.137587, 1.045739)), mild, rtol=1e-6)
    np.testing.assert_allclose(energy_per_distance((10.0, 1.0, 0.5)), mild, rtol=1e-6)
    q = (rest @ np.diag((6.788106, 2.137587, 1.045739))).ravel()
    q1, v1 = world.step(q, np.zeros(world.nv))
    assert np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))
    assert world.last_step["converged"]

"""The SVDs (and volume projections) an energy evaluation records for the Hessian built next at the same point,
as each Newton iteration and adjoint builds it: the Hessian is the same, bit for bit, as one computed afresh,
and every sample with an energy takes them from the record."""

import numpy as np
import pytest

import rigidiff as rd

KINDS = ["corotated", "volume", ("corotated", "volume"), "neohookean", "corotated_hyperelastic",
         ("corotated_hyperelastic", "volume")]


def _world(kind, threads=1):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, threads=threads)
    mesh = rd.HexMesh.box((0.2, 0.05, 0.05), (4, 1, 1))
    world.add_deformable(mesh, rd.ProjectiveMaterial(2e4, 0.3, 1000.0, kind=kind), name="beam",
                         fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world, len(mesh.elements)


def _deformed(world, seed=3):
    rng = np.random.default_rng(seed)
    return world.q + 1e-2 * rng.standard_normal(world.nq), rng.standard_normal(world.nq)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("threads", [1, 2])
def test_hessian_after_the_energy_reuses_its_svds_exactly(kind, threads):
    world, elements = _world(kind, threads=threads)
    q, z = _deformed(world)
    fresh = world._pw_hessian_product(q, z)
    reused_product, reused = world._pw_hessian_product(q, z, after_energy=True)
    assert np.array_equal(reused_product, fresh)
    assert reused == 8 * elements  # every sample of every hexahedron (2 x 2 x 2 points)
    assert np.abs(fresh).max() > 0.0


def test_hessian_reuse_on_a_rotated_and_stretched_body():
    # far from rest (rotated a quarter turn, stretched): the SVDs' rotations and the volume projection's
    # iteration matter, and must come out the same
    world, elements = _world(("corotated", "volume"))
    x = world.q.reshape(-1, 3)
    rotated = (x @ np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]).T) * np.array([1.3, 0.8, 1.1])
    q = rotated.reshape(-1) + 1e-3 * np.random.default_rng(5).standard_normal(world.nq)
    z = np.random.default_rng(6).standard_normal(world.nq)
    product, reused = world._pw_hessian_product(q, z, after_energy=True)
    assert np.array_equal(product, world._pw_hessian_product(q, z))
    assert reused == 8 * elements

"""The neo-Hookean energy in projective worlds: linear elasticity at small strain (the same sag as the
corotated energy at nu = 0), no inverted element under a crushing load, and the three solvers agreeing."""

import numpy as np
import pytest

import rigidiff as rd


def _beam(kind, nu=0.0, method="newton", E=5e4):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, method=method, max_iterations=5000)
    mesh = rd.HexMesh.box((0.2, 0.04, 0.04), (10, 2, 2))
    world.add_deformable(mesh, rd.ProjectiveMaterial(E, nu, 1000.0, kind=kind), name="beam",
                         fixed=np.flatnonzero(mesh.vertices[:, 0] == 0.0))
    return world


def _sag(world, steps=150):
    q, v = world.q, world.v
    for _ in range(steps):
        q, v = world.step(q, v)
    return world.positions(q, "beam")[:, 2].min()


def test_small_strain_matches_the_corotated_energy():
    neo, corotated = _sag(_beam("neohookean")), _sag(_beam("corotated"))
    assert neo < -1e-4  # it sags
    assert neo == pytest.approx(corotated, rel=2e-2)


def _tets(mesh):
    """The hexahedra of a box mesh cut into 6 tetrahedra each around their main diagonal."""
    split = [[0, 1, 3, 7], [0, 1, 7, 5], [0, 5, 7, 4], [0, 3, 2, 7], [0, 2, 6, 7], [0, 6, 4, 7]]
    tets = np.concatenate([mesh.elements[:, s] for s in split])
    x = mesh.vertices[tets]
    flip = np.einsum("ij,ij->i", np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), x[:, 3] - x[:, 0]) < 0
    tets[flip] = tets[flip][:, [0, 2, 1, 3]]
    return rd.TetMesh(mesh.vertices, tets)


def test_no_element_inverts_under_a_crushing_load():
    # tetrahedra: one sample each, so det F > 0 at the sample is the element's orientation
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-8)
    mesh = _tets(rd.HexMesh.box((0.05, 0.05, 0.05), (2, 2, 2)))
    world.add_deformable(mesh, rd.ProjectiveMaterial(1e4, 0.3, 1000.0, kind="neohookean"), name="cube",
                         fixed=np.flatnonzero(mesh.vertices[:, 2] == 0.0))  # standing on a rigid floor
    top = np.flatnonzero(mesh.vertices[:, 2] == 0.05)
    f = np.zeros(world.nv)
    f[3 * top + 2] = -20.0  # 180 N on a 5 cm cube whose stiffness is 1e4 Pa (25 N would halve it linearly)
    q, v = world.q, world.v
    for _ in range(40):
        q, v = world.step(q, v, f)
        x = world.positions(q, "cube")
        assert mesh.element_volumes(x).min() > 0.0
    assert x[top, 2].max() < 0.02  # crushed to under 40 % of its height, every element the right way out


@pytest.mark.parametrize("kind", ["neohookean", ("neohookean", "volume")])
def test_the_solvers_agree(kind):
    finals = []
    for method in ("newton", "pd", "newton-cholesky"):
        world = _beam(kind, nu=0.4, method=method)
        q, v = world.q, world.v
        for _ in range(5):
            q, v = world.step(q, v)
        finals.append(q)
    scale = np.abs(finals[0] - world.q).max()
    for other in finals[1:]:
        assert np.abs(other - finals[0]).max() < 1e-7 * scale


def test_a_step_does_not_jump_through_an_inversion():
    # a tetrahedron launched towards its own image turned 180 degrees about z: the straight path there passes
    # through a flat tetrahedron (det F = (1 - 2t)^2 = 0 halfway), and the image is the minimiser of the step's
    # potential (no elastic energy, no inertia left). The inversion-free line search keeps the step on this
    # side of the flat state; without it the step would land on the image.
    world = rd.World(dt=1e-2, solver="projective", gravity=(0.0, 0.0, 0.0), tolerance=1e-8, max_iterations=5000)
    vertices = np.array([[0.0, 0.0, 0.0], [0.05, 0.0, 0.0], [0.0, 0.05, 0.0], [0.0, 0.0, 0.05]])
    world.add_deformable(rd.TetMesh(vertices, [[0, 1, 2, 3]]), rd.ProjectiveMaterial(1e4, 0.3, 1000.0,
                                                                                   kind="neohookean"), name="tet")
    centre = vertices.mean(axis=0)
    image = (vertices - centre) * np.array([-1.0, -1.0, 1.0]) + centre
    v = ((image - vertices) / world.dt).ravel()
    q1, _ = world.step(world.q, v)
    x = q1.reshape(-1, 3)
    assert world.mesh("tet").element_volumes(x).min() > 0.0
    assert np.abs(x - image).max() > 0.01  # not the image
    # on this side of the flat state: vertex 1 still lies on the +x side of vertex 0
    assert x[1, 0] > x[0, 0]


def _tet_on_the_ground():
    world = rd.World(dt=1e-2, solver="projective", contact_stiffness=1e5)
    world.add_ground()
    vertices = 0.1 * np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    world.add_deformable(rd.TetMesh(vertices, np.array([[0, 1, 2, 3]])),
                         rd.ProjectiveMaterial(1e5, 0.3, 1000.0, kind="neohookean"), name="tet")
    return world, vertices


def test_the_energy_near_rest_is_accurate_to_its_own_size():
    # 0.5 (|F|^2 - 3) - log J near F = I cancels parts of order one: computed from them, the energy of a strain of
    # 1e-6 carried their rounding (1e-16 of mu V) and a line search near the solution compared noise
    world, X = _tet_on_the_ground()
    mu, lam = 1e5 / (2 * 1.3), 1e5 * 0.3 / (1.3 * 0.4)
    volume = 1e-3 / 6
    rng = np.random.default_rng(4)
    for scale in (1e-6, 1e-4):
        G = scale * rng.normal(size=(3, 3))
        x = X @ (np.eye(3) + G).T + 0.05  # lifted off the ground: the elastic energy alone
        # the reference in extended precision (64-bit mantissa: 2e3 times finer than the parts' rounding)
        H = G.astype(np.longdouble)
        F = np.eye(3, dtype=np.longdouble) + H
        J = (F[0, 0] * (F[1, 1] * F[2, 2] - F[1, 2] * F[2, 1]) - F[0, 1] * (F[1, 0] * F[2, 2] - F[1, 2] * F[2, 0])
             + F[0, 2] * (F[1, 0] * F[2, 1] - F[1, 1] * F[2, 0]))
        logJ = np.log(J)
        reference = float(volume * (mu * (0.5 * (np.sum(F * F) - 3) - logJ) + 0.5 * lam * logJ * logJ))
        energy, _ = world.energy(x.ravel())
        assert abs(energy - reference) <= 1e-6 * reference, (scale, energy, reference)


def test_a_tetrahedron_comes_to_rest_on_the_ground():
    # it stalled at 1.5e-8 of its force scale on its seventh step (the energy's rounding above), then raised
    world, _ = _tet_on_the_ground()
    q, v = world.q, world.v
    for _ in range(100):
        q, v = world.step(q, v)
    assert world.last_step["converged"] and np.abs(v).max() < 1e-3
    assert world.positions(q, "tet")[:, 2].min() > -1e-4  # on the ground, the penalty's depth

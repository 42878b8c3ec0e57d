"""Islands of many redundant rows: the clamping system's minimum-norm solution (pivoted Cholesky when its rank
is clear-cut, docs/contact.md) against numpy's pseudo-inverse of the LCP the step returns, and the step
Jacobians of such an island against central differences of the step."""

import numpy as np
import pytest

import rigidiff as rd


def grid_world(n: int, layers: int, overlap: float = 1e-5):
    """n x n columns of `layers` 0.2 m cubes on the ground, neighbours overlapping by `overlap` so that
    every cube touches its neighbours (one island), settled for 50 steps."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    q = []
    for i in range(n * n * layers):
        layer, cell = divmod(i, n * n)
        a, b = divmod(cell, n)
        shape = rd.Box((0.2, 0.2, 0.2))
        sk = rd.Skeleton(f"box{i}")
        body = sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"), inertia=rd.Inertia.from_shape(shape, mass=1.0))
        body.add_shape(shape, friction=0.6)
        world.add_skeleton(sk)
        q += [(0.2 - overlap) * a, (0.2 - overlap) * b, 0.1 + 0.2 * layer, 0.0, 0.0, 0.0, 1.0]
    q, v = np.array(q), np.zeros(world.nv)
    for _ in range(50):
        q, v = world.step(q, v, np.zeros(world.nv))
    return world, q, v


def pinv_impulses(world):
    """The clamped rows' impulses from numpy's pseudo-inverse of the last step's clamping block."""
    A, b, lo, hi, x, findex = world._core_last_lcp()
    classes = np.array(world.last_contacts().row_classes)
    assert not np.isin(classes, ("upper_bound", "lower_bound")).any()  # a symmetric clamping system
    C = classes == "clamping"
    x_ref = np.zeros_like(x)
    x_ref[C] = -np.linalg.pinv(A[np.ix_(C, C)], rcond=1e-10, hermitian=True) @ b[C]
    return x, x_ref, C


@pytest.fixture(scope="module")
def grid():
    return grid_world(1, 5)  # the 5-box stack: 60 rows of rank 30


def test_a_large_island_gets_the_pseudo_inverse_solution(grid):
    world, q, v = grid
    world.step(q, v, np.zeros(world.nv))
    x, x_ref, C = pinv_impulses(world)
    assert C.sum() == 60
    A = world._core_last_lcp()[0]
    assert np.linalg.matrix_rank(A[np.ix_(C, C)], tol=1e-10 * np.abs(A).max()) < C.sum()  # redundant rows
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-9 * np.abs(x_ref).max())
    # the weight is carried: 5 kg on the ground
    assert world.last_contacts().normal_impulses[np.array(world.last_contacts().body_b) == "ground"].sum() == \
        pytest.approx(5 * 9.81e-3, rel=1e-6)


def test_a_resting_box_on_four_corners_gets_the_least_squares_answer():
    world, q, v = grid_world(1, 1)
    world.step(q, v, np.zeros(world.nv))
    x, x_ref, C = pinv_impulses(world)
    assert C.sum() == 12  # 4 corners, 2 friction rows each: rank 6
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-12)
    normals = world.last_contacts().normal_impulses
    np.testing.assert_allclose(normals, normals.mean(), rtol=1e-12)


def check_step_jacobians(world, q, v, directions: int, seed: int, warm: bool = False):
    """dv_dv and dv_dtau along random directions against central differences of the cold step; with
    `warm`, the Jacobians come from a warm-started step (the clamping system read from the factors)."""
    tau = np.zeros(world.nv)
    if warm:
        q, v = world.step(q, v, tau)
        jac = world.step_jacobians(q, v, tau)  # starts where the step before ended
        assert world.last_contacts().solver == "warm_start"
    world.contact_options(warm_start=False)
    try:
        if not warm:
            jac = world.step_jacobians(q, v, tau)
        rng = np.random.default_rng(seed)
        eps = 1e-7
        for _ in range(directions):
            d = rng.standard_normal(world.nv)
            vp = world.step(q, v + eps * d, tau)[1]
            vm = world.step(q, v - eps * d, tau)[1]
            np.testing.assert_allclose((vp - vm) / (2 * eps), jac.dv_dv @ d, rtol=1e-6, atol=1e-7)
            tp = world.step(q, v, tau + eps * d)[1]
            tm = world.step(q, v, tau - eps * d)[1]
            np.testing.assert_allclose((tp - tm) / (2 * eps), jac.dv_dtau @ d, rtol=0, atol=1e-7)
    finally:
        world.contact_options(warm_start=True)


def test_step_jacobians_of_a_large_island_match_central_differences(grid):
    check_step_jacobians(*grid, directions=3, seed=0)


def pyramid_world(copies: int = 1, pendulum: bool = False, masses=(1.0, 1.0)):
    """`copies` pyramids of 15 cubes in rows of 5, 4, 3, 2, 1, 2 m apart, the cubes of copy c of mass
    masses[c], settled for 100 steps: each one island of 300 rows on 90 dofs. With `pendulum`, each top cube
    carries a pendulum that touches nothing: a dof the rows leave free, whose step Jacobians go through the
    pile's clamping system."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    q = []
    for copy in range(copies):
        for level, n in enumerate(range(5, 0, -1)):
            for i in range(n):
                name = f"box{copy}_{level}_{i}"
                shape = rd.Box((0.2, 0.2, 0.2))
                sk = rd.Skeleton(name)
                body = sk.add_body(name, joint=rd.FreeJoint(f"{name}_free"),
                                   inertia=rd.Inertia.from_shape(shape, mass=masses[copy]))
                body.add_shape(shape, friction=0.6)
                q += [0.22 * (i - (n - 1) / 2), 2.0 * copy, 0.1 + 0.2 * level, 0.0, 0.0, 0.0, 1.0]
                if pendulum and n == 1:
                    sk.add_body(f"bob{copy}", joint=rd.RevoluteJoint(f"swing{copy}", axis=(1.0, 0.0, 0.0)),
                                parent=body, joint_origin=rd.Transform(translation=(0.0, 0.0, 0.3)),
                                inertia=rd.Inertia.from_shape(rd.Sphere(0.05), mass=0.3))
                    q += [0.0]
                world.add_skeleton(sk)
    q, v = np.array(q), np.zeros(world.nv)
    for _ in range(100):
        q, v = world.step(q, v, np.zeros(world.nv))
    return world, q, v


@pytest.fixture(scope="module")
def pyramid():
    """One pyramid: an island above the size from which the LCP reads A from its factors and the clamping
    solve runs in the dofs (docs/contact.md)."""
    return pyramid_world()


def test_a_pyramid_gets_the_pseudo_inverse_solution(pyramid):
    world, q, v = pyramid
    world.step(q, v, np.zeros(world.nv))
    assert world.last_contacts().solver == "warm_start"
    x, x_ref, C = pinv_impulses(world)
    assert C.sum() > world.nv
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-9 * np.abs(x_ref).max())
    ground = np.array(world.last_contacts().body_b) == "ground"
    assert world.last_contacts().normal_impulses[ground].sum() == pytest.approx(15 * 9.81e-3, rel=1e-6)


def test_a_cold_pyramid_step_equals_the_warm_one(pyramid):
    """Solved cold (pivoting on A formed from the factors) and warm (A read row by row), the step is the same."""
    world, q, v = pyramid
    tau = np.zeros(world.nv)
    q1, v1 = world.step(q, v, tau)
    warm = world.step(q1, v1, tau)  # starts at the end of the step before: warm-started
    assert world.last_contacts().solver == "warm_start"
    world.clear_warm_start()
    cold = world.step(q1, v1, tau)
    assert world.last_contacts().solver == "pivoting"
    for a, b in zip(warm, cold):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("warm", [False, True])
def test_step_jacobians_of_a_pyramid_match_central_differences(pyramid, warm):
    check_step_jacobians(*pyramid, directions=2, seed=1, warm=warm)


def test_two_large_islands_differentiate_each_with_its_own_clamping_system():
    """A warm-started step of a resting pile solves in the dofs and leaves each island's clamping system to be
    formed when the derivatives ask for it, from that island's own factors. Two pyramids whose top cubes
    carry pendulums: each pyramid's Jacobian blocks are those of the pyramid alone (the pendulum's through
    its pile's clamping system), the blocks between them zero, and they match central differences."""
    masses = (1.0, 2.5)  # two different clamping systems
    world2, q2, v2 = pyramid_world(copies=2, pendulum=True, masses=masses)
    tau2 = np.zeros(world2.nv)
    q2, v2 = world2.step(q2, v2, tau2)
    jac2 = world2.step_jacobians(q2, v2, tau2)
    assert world2.last_contacts().solver == "warm_start"
    for copy in range(2):
        world = pyramid_world(copies=1, pendulum=True, masses=(masses[copy],))[0]
        n, nq = world.nv, world.nq
        assert world2.nv == 2 * n == 2 * 91
        swing = world.layout("box0_4_0").v.stop - 1  # the pendulum's dof
        qc = q2[copy * nq:(copy + 1) * nq].copy()
        for b in range(15):  # the copy moved onto the first one's place
            qc[7 * b + 1] -= 2.0 * copy
        vc = v2[copy * n:(copy + 1) * n]
        jac = world.step_jacobians(qc, vc, np.zeros(n))  # solved cold: the same classes, another path
        block = slice(copy * n, (copy + 1) * n)
        other = slice((1 - copy) * n, (2 - copy) * n)
        scale = np.abs(jac.dv_dtau).max()
        assert abs(jac.dv_dtau[swing, swing]) > 0.5 * scale > 0.1  # the pendulum answers its torque
        np.testing.assert_allclose(jac2.dv_dtau[block, block], jac.dv_dtau, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(jac2.dv_dv[block, block], jac.dv_dv, rtol=0, atol=1e-9)
        assert np.abs(jac2.dv_dtau[block, other]).max() < 1e-12 * scale
    check_step_jacobians(world2, q2, v2, directions=1, seed=2, warm=True)


def test_rows_that_leave_a_dof_free_get_the_pseudo_inverse_solution():
    """A box on four corners (12 rows) carrying a pendulum that touches nothing (7 dofs): the rows outnumber
    the dofs but leave the pendulum's dof unconstrained, so the dofs' system is singular and its rank
    decides; the impulses must still be those of the rows' pseudo-inverse, and the pendulum keeps swinging."""
    world = rd.World(dt=1e-3)
    world.add_ground(friction=0.6)
    shape = rd.Box((0.4, 0.4, 0.2))
    sk = rd.Skeleton("cart")
    base = sk.add_body("base", joint=rd.FreeJoint("free"), inertia=rd.Inertia.from_shape(shape, mass=2.0))
    base.add_shape(shape, friction=0.6)
    sk.add_body("bob", joint=rd.RevoluteJoint("swing", axis=(1.0, 0.0, 0.0)), parent=base,
                joint_origin=rd.Transform(translation=(0.0, 0.0, 0.3)),
                inertia=rd.Inertia.from_shape(rd.Sphere(0.05), mass=0.3))
    world.add_skeleton(sk)
    q = world.neutral_configuration()
    q[2] = 0.1
    lay = world.layout("cart")
    v = np.zeros(world.nv)
    for _ in range(30):
        q, v = world.step(q, v, np.zeros(world.nv))
    v[lay.v.stop - 1] = 2.0  # the pendulum swings
    world.step(q, v, np.zeros(world.nv))
    x, x_ref, C = pinv_impulses(world)
    assert C.sum() == 12 and world.nv == 7
    np.testing.assert_allclose(x, x_ref, rtol=0, atol=1e-9 * np.abs(x_ref).max())


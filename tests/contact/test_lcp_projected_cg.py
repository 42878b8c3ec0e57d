"""Projected conjugate gradients (MPRGP on the Jacobi-scaled program, friction bounds by rounds): the first
stage of a cold large island, on its factors. Its answers must pass the validity check of the LCP, agree
with the dense pipeline where both standardise to one classification, and carry a bin of boxes through its
landing without dropping friction."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff import _testing

from test_lcp_factors import random_island
from test_lcp_iterative import _check_valid, _dense, with_duplicates

CG = int(rd.lcp.LcpSolver.PROJECTED_CONJUGATE_GRADIENTS)


def heavy_and_light(island, ratio: float):
    """The island with body 0 `ratio` times heavier (its columns of K = M^-1 J^T scaled down): rows of very
    different stiffness, the case Jacobi scaling is for."""
    J, K, blocks, b, lo, hi, findex = island
    K = K.copy()
    K[:, :6] /= ratio
    return J, K, blocks, b, lo, hi, findex


@pytest.mark.parametrize("seed, mu, slide, duplicates, ratio", [
    (20, 0.0, 0.0, 0, 1.0), (21, 0.0, 0.0, 15, 1.0), (22, 0.0, 0.0, 0, 1e4),  # frictionless
    (0, 0.5, 0.0, 0, 1.0), (1, 0.5, 0.0, 10, 1.0), (2, 0.5, 0.0, 0, 1e4),  # sticking
    (8, 0.8, 2.0, 0, 1.0), (11, 0.8, 2.0, 0, 1e3),  # sliding
])
def test_conjugate_gradients_answer_a_cold_island_from_its_factors(seed, mu, slide, duplicates, ratio):
    """Redundant rows (duplicates) and a body 1000-10000 times heavier than the rest (ratio) included."""
    island = random_island(seed, bodies=10, contacts=20, mu=mu, slide=slide)
    J, K, blocks, b, lo, hi, findex = heavy_and_light(with_duplicates(island, duplicates), ratio)
    x, w, classes, status, _ = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, sweeps_work=0.0)
    assert status[2] == 1 and status[0] == CG and status[1] == 0  # answered by the gradients, A never formed
    np.testing.assert_allclose(w, J @ (K.T @ x) + b, rtol=0, atol=1e-9 * (1 + np.abs(b).max()))
    _check_valid(x, w, b, lo, hi, findex)
    dense = _dense(J, K, b, lo, hi, findex)
    if status[3] == 1 and dense.standardised and [int(c) for c in dense.classes] == list(classes):
        np.testing.assert_allclose(x, dense.x, rtol=0, atol=1e-8 * np.abs(dense.x).max())


@pytest.mark.parametrize("mu, slide, least", [(0.0, 0.0, 30), (0.5, 0.0, 18), (0.8, 2.0, 5)])
def test_the_gradients_answer_most_islands_and_no_island_loses_its_friction(mu, slide, least):
    """Over 30 random islands: the gradients answer at least `least` (friction rounds do not always settle;
    sliding rows are the hardest), and the stages after them (sweeps, pivoting, Gauss-Seidel) drop the
    friction rows of no island that the pipeline without the gradients solves with friction."""
    frictionless = int(rd.lcp.LcpSolver.FRICTIONLESS_PGS)
    answered = 0
    for seed in range(30):
        J, K, blocks, b, lo, hi, findex = random_island(seed, bodies=10, contacts=20, mu=mu, slide=slide)
        x, w, _, status, _ = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, sweeps_work=0.0)
        assert status[2] == 1
        if status[0] == frictionless:
            assert _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex)[3][0] == frictionless, seed
        else:
            _check_valid(x, w, b, lo, hi, findex)
        answered += status[0] == CG
    assert answered >= least


def test_a_warm_start_from_the_answer_is_immediate():
    J, K, blocks, b, lo, hi, findex = random_island(27, bodies=10, contacts=20, mu=0.5)
    x, w, classes, status, _ = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, sweeps_work=0.0)
    assert status[2] == 1
    again = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, classes, sweeps_work=0.0)
    assert again[3][0] == int(rd.lcp.LcpSolver.WARM_START) and again[3][1] == 0
    np.testing.assert_allclose(again[0], x, rtol=0, atol=1e-6 * (1 + np.abs(x).max()))


def _bin_of_boxes(n=30, cell=0.1, dt=0.01, spheres=False, touching_walls=False):
    """n cubes in layers of 3 x 3 in a walled bin, each layer dropped from 2 mm above the one below: one
    island of about a thousand rows once landed (past the sweeps-first threshold). With spheres, every other
    body of the 3-D checkerboard is a sphere of the cell's diameter; with touching_walls, the walls touch the
    outer bodies (as in benchmarks/bench_contact.py's bins) instead of leaving them 20 um."""
    world = rd.World(dt=dt)
    ground = world.add_ground(friction=0.6)
    inner, h, t = 1.5 * cell - (2e-5 if touching_walls else 0.0), cell * (n // 9 + 1), 0.01
    for i, (half, centre) in enumerate([((t, inner + 2 * t, h), (s * (inner + t), 0.0, h)) for s in (-1, 1)] +
                                       [((inner + 2 * t, t, h), (0.0, s * (inner + t), h)) for s in (-1, 1)]):
        ground.add_body(f"wall{i}").add_shape(rd.Box(tuple(2 * e for e in half)),
                                              origin=rd.Transform(translation=centre), friction=0.6)
    world.rebuild()
    q = []
    for i in range(n):
        layer, cell_index = divmod(i, 9)
        a, c = divmod(cell_index, 3)
        sphere = spheres and (a + c + layer) % 2 == 1
        shape = rd.Sphere(cell / 2) if sphere else rd.Box((cell,) * 3)
        sk = rd.Skeleton(f"box{i}")
        sk.add_body(f"box{i}", joint=rd.FreeJoint(f"free{i}"),
                    inertia=rd.Inertia.from_shape(shape, mass=0.3 if sphere else 0.5)).add_shape(shape, friction=0.6)
        world.add_skeleton(sk)
        q += [(cell - 2e-5) * (a - 1), (cell - 2e-5) * (c - 1), cell * (0.5 + layer) + 2e-3 * layer, 0, 0, 0, 1]
    return world, np.array(q)


def test_a_bin_of_boxes_lands_without_dropping_friction():
    world, q = _bin_of_boxes()
    v = zero = np.zeros(world.nv)
    solvers, most_rows = set(), 0
    for _ in range(120):
        q, v = world.step(q, v, zero)
        contacts = world.last_contacts()
        assert contacts.solver != "none" and not contacts.friction_dropped
        solvers.add(contacts.solver)
        most_rows = max(most_rows, len(contacts.row_classes))
    assert most_rows > 800 and "projected_conjugate_gradients" in solvers
    assert np.abs(v).max() < 0.05  # landed and at rest
    z = q[2::7]
    assert z.min() > 0.05 - 1e-3 and np.sort(z)[-1] < 0.1 * (30 // 9 + 1)  # no box sank or jumped out


def test_a_settled_bin_rests_its_load_on_few_contacts():
    # Cubes and spheres settling in a bin: once at rest the load sits on few of the redundant face contacts
    # (at most one clamped row per dof), so each warm step solves that small clamping system once. Answers
    # that spread the load over every face contact (800 of the 1000 rows) have a minimum-norm solution that
    # breaks a bound, and every warm step then solved twice.
    world, q = _bin_of_boxes(dt=1e-3, spheres=True, touching_walls=True)
    v = zero = np.zeros(world.nv)
    for _ in range(300):
        q, v = world.step(q, v, zero)
        assert not world.last_contacts().friction_dropped
    for _ in range(10):
        q, v = world.step(q, v, zero)
        contacts = world.last_contacts()
        assert contacts.solver == "warm_start" and len(contacts.row_classes) > 800
        assert np.sum(np.asarray(contacts.row_classes) == "clamping") <= world.nv
    assert np.abs(v).max() < 1e-3


def _particle_lcp(p, v, radius, dt, mu, reach=1e-3):
    """The boxed LCP (J, K, blocks, b, lo, hi, findex) of unit-mass particles at p (N, 3) moving at v: a normal
    and two friction rows (bounds +-mu) for each pair of spheres and each sphere and the ground within `reach`,
    velocities after a step of gravity, a fifth of each overlap removed per step."""
    n, v_free = len(p), v + dt * np.array([0.0, 0.0, -9.81])
    J, b, findex = [], [], []

    def contact(i, j, normal, gap):
        t1 = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
        t1 /= np.linalg.norm(t1)
        relative, first = v_free[i] - (v_free[j] if j >= 0 else 0.0), len(b)
        for k, d in enumerate((normal, t1, np.cross(normal, t1))):
            row = np.zeros(3 * n)
            row[3 * i:3 * i + 3] = d
            if j >= 0:
                row[3 * j:3 * j + 3] = -d
            J.append(row)
            b.append(d @ relative + (0.2 * min(gap, 0.0) / dt if k == 0 else 0.0))
            findex.append(-1 if k == 0 else first)

    for i in range(n):
        if p[i, 2] - radius < reach:
            contact(i, -1, np.array([0.0, 0.0, 1.0]), p[i, 2] - radius)
        for j in range(i + 1, n):
            gap = np.linalg.norm(p[i] - p[j]) - 2 * radius
            if gap < reach:
                contact(i, j, (p[i] - p[j]) / (gap + 2 * radius), gap)
    J, findex = np.array(J), np.array(findex)
    lo, hi = np.where(findex < 0, 0.0, -mu), np.where(findex < 0, np.inf, mu)
    return J, J.copy(), np.arange(0, 3 * n + 1, 3), np.array(b), lo, hi, findex


def test_the_gradients_give_up_early_on_a_landing_heap_and_the_pipeline_answers_with_friction():
    # 125 spheres dropped in staggered layers collapse into a heap. On its impact steps the gradients circle far
    # from an answer (the friction bounds of their rounds, as redundant contacts share the load differently
    # from round to round, or the active set of one round's program): their budget, 300 sqrt(rows) products,
    # is twice what any run that answered needed on heaps and bins; with 1000 sqrt(rows) such a run spent all
    # of it. The pipeline answers the step with friction (to the tolerance, or within a hundred times it).
    radius, dt, k = 0.05, 0.01, 5
    rng = np.random.default_rng(0)
    cells = np.stack(np.meshgrid(*[np.arange(k)] * 3, indexing="ij"), -1).reshape(-1, 3).astype(float)
    start = cells * [2 * radius, 2 * radius, 2.3 * radius] + radius + 0.02
    start[:, :2] += np.where(cells[:, 2:3] % 2 == 1, radius, 0.0) + rng.uniform(-0.2, 0.2, (len(cells), 2)) * radius
    world = rd.World(dt)
    world.add_ground(friction=0.5)
    world.add_particles(start, masses=1.0, radius=radius, friction=0.5)
    q, v = world.neutral_configuration(), np.zeros(world.nv)
    for _ in range(18):
        q, v = world.step(q, v, np.zeros(world.nv))
    J, K, blocks, b, lo, hi, findex = _particle_lcp(q.reshape(-1, 3), v.reshape(-1, 3), radius, dt, 0.5)
    assert len(b) > 600
    x, w, valid, products = _testing.projected_cg_from_factors(J, K, blocks, b, lo, hi, findex, np.zeros(len(b)))
    assert not valid and products <= 300 * np.sqrt(len(b))
    x, w, _, status, _ = _testing.boxed_lcp_from_factors(J, K, blocks, b, lo, hi, findex, sweeps_work=0.0)
    approximate = status[0] == int(rd.lcp.LcpSolver.APPROXIMATE_FRICTION)
    assert status[2] == 1 and status[0] <= int(rd.lcp.LcpSolver.APPROXIMATE_FRICTION)
    _check_valid(x, w, b, lo, hi, findex, tol=1e-4 if approximate else 1e-6)

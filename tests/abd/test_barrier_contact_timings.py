"""The benchmark-only binding that times a barrier world's contact parts in C++ (bench_abd_sheets.py) reports
the same pairs, barrier sum and collision-free step as the world's own queries."""

import numpy as np
import pytest

import rigidiff as rd

DHAT = 1e-3


def _two_cubes():
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, gravity=(0.0, 0.0, 0.0))
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), name="low")
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), pose=rd.Transform((0.01, 0.02, 0.1 + 0.5 * DHAT), rpy=(0, 0, 0.3)),
                          name="high")
    dq = np.zeros(world.nq)
    dq[world.layout("high").q.start + 2] = -0.75 * DHAT  # 1.5 gaps down
    return world, world.q, dq


def test_contact_timings_report_the_world_s_pairs_barrier_and_step():
    world, q, dq = _two_cubes()
    out = world._bw_contact_timings(q, dq, 3)
    assert out.shape == (8,)
    assert np.all(out[:4] >= 0.0)
    value, _, _ = world._bw_barrier_potential(q)
    assert out[5] > 0 and out[4] >= out[5]  # pairs within dhat among the candidates
    assert out[7] == pytest.approx(value, rel=1e-12)
    assert out[6] == pytest.approx(world._bw_collision_free_step(q, dq), rel=1e-12)
    assert 0.0 < out[6] < 1.0  # the move would close the gap


def test_contact_timings_refuse_no_rounds():
    world, q, dq = _two_cubes()
    with pytest.raises(ValueError, match="repeat"):
        world._bw_contact_timings(q, dq, 0)

"""The per-element work of a projective world on several threads: the same results bit for bit whatever the
thread count (each element writes its own slot, reduced in element order), and bad counts refused."""

import numpy as np
import pytest

import rigidiff as rd


def _block(threads, method="pd"):
    world = rd.World(dt=1e-2, solver="projective", tolerance=1e-10, threads=threads, method=method)
    world.add_ground(height=-0.005)
    mesh = rd.HexMesh.box((0.16, 0.08, 0.04), (8, 4, 2))  # 64 elements: enough to be split
    world.add_deformable(mesh, rd.ProjectiveMaterial(5e4, 0.4, 1000.0, kind=("corotated", "volume")), name="block")
    return world


@pytest.mark.parametrize("method", ["pd", "newton"])
def test_results_do_not_depend_on_the_thread_count(method):
    out = []
    for threads in (1, 2, 3):
        world = _block(threads, method)
        assert world.threads == threads
        q = world.q + 1e-3 * np.random.default_rng(0).standard_normal(world.nq)
        v = 0.1 * np.random.default_rng(1).standard_normal(world.nv)
        q1, v1 = world.step(q, v)
        q2, v2 = world.step(q1, v1)
        g = world.step_vjp(q1, v1, None, np.ones(world.nq), np.zeros(world.nv))
        e, grad = world.energy(q2)
        out.append((q2, v2, g.q, g.v, g.parameter("youngs_modulus:block"), e, grad,
                    world._pw_hessian_product(q2, np.arange(world.nq, dtype=float))))
    for other in out[1:]:
        for a, b in zip(out[0], other):
            np.testing.assert_array_equal(a, b)


def test_threads_setting():
    world = _block(None)
    assert world.threads >= 1
    world.threads = 2
    assert world.threads == 2
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="threads"):
            world.threads = bad
    with pytest.raises(ValueError, match="threads"):
        rd.World(solver="projective", threads=0)

"""States and inputs a barrier world cannot step are refused with the reason, never stepped into nonsense."""

import numpy as np
import pytest

import rigidiff as rd
from rigidiff.barrier_world import MAX_STRAIN, MIN_VOLUME_RATIO


def _two_cubes():
    w = rd.World(dt=1e-2, solver="barrier")
    w.add_ground()
    w.add_affine_body(rd.Box([0.2, 0.2, 0.2]), pose=rd.Transform((0.0, 0.0, 0.1 + 0.5 * w.dhat)), name="low")
    w.add_affine_body(rd.Box([0.2, 0.2, 0.2]), pose=rd.Transform((0.03, 0.0, 0.35)), name="high")
    return w


def _refused_by_every_call(w, q, message):
    """step, step_jacobians, check_state, step_vjp and rollout all raise ValueError matching `message`."""
    for call in (lambda: w.step(q, w.v), lambda: w.step_jacobians(q, w.v), lambda: w.check_state(q),
                 lambda: w.step_vjp(q, w.v, None, np.ones(w.nq), np.ones(w.nv))):
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(ValueError, match=r"rollout step 0 \(from q0, v0\): " + message):
        w.rollout(q, w.v, np.zeros((2, w.nv)))


def test_an_affine_map_far_from_a_rotation_is_refused_naming_the_body():
    w = _two_cubes()
    q = w.q.copy()
    q[w.layout("high").q][3] = 1e20  # an entry of A
    _refused_by_every_call(w, q, r"q: the affine map A of 'high' is far from a rotation")
    # a strain just inside the bound is a state like any other
    q = w.q.copy()
    q[w.layout("high").q][3:6] *= 1.0 + 0.3 * MAX_STRAIN
    w.step(q, w.v)


def test_a_mirrored_affine_map_is_refused_naming_the_body():
    # diag(1, 1, -1) keeps A A^T = I (no strain) but turns the cube inside out
    w = _two_cubes()
    q = w.q.copy()
    q[w.layout("high").q][9:12] *= -1.0  # the third row of A
    _refused_by_every_call(w, q, r"q: the affine map A of 'high' is a reflection \(det A = -1\)")
    q[w.layout("high").q][9:12] *= -1.0  # a rotation by pi about z instead (det +1) steps
    q[w.layout("high").q][3:9] *= -1.0
    w.step(q, w.v)


def test_a_force_that_would_stretch_a_body_far_from_a_rotation_raises():
    w = _two_cubes()
    tau = np.zeros(w.nv)
    tau[w.layout("high").v][6] = 1e20
    with pytest.raises(RuntimeError, match=r"stretched 'high' far from a rotation"):
        w.step(w.q, w.v, tau)
    tau[w.layout("high").v][6] = 1e300  # a move with no collision-free part
    with pytest.raises(RuntimeError):
        w.step(w.q, w.v, tau)


@pytest.mark.parametrize("speed", [3e4, 1e6])
def test_a_fall_that_would_crush_a_body_raises_in_the_step_that_crushes_it(speed):
    # at 300 m per step onto the ground the cube is flattened within the strain bound (||A A^T - I||_F = 1 with
    # det A -> 0); before, that state was returned and the next step turned the cube inside out
    w = rd.World(dt=1e-2, solver="barrier")
    w.add_ground()
    w.add_affine_body(rd.Box((0.2, 0.2, 0.2)), pose=rd.Transform((0.0, 0.0, 0.5)), velocity=(0.0, 0.0, -speed),
                      name="b")
    with pytest.raises(RuntimeError, match=rf"crushed 'b' to .* of its volume \(det A < {MIN_VOLUME_RATIO}\)"):
        w.step(w.q, w.v)
    # a fall of 1e4 m/s is survivable at this step: the cube lands as a cube
    w = rd.World(dt=1e-2, solver="barrier")
    w.add_ground()
    w.add_affine_body(rd.Box((0.2, 0.2, 0.2)), pose=rd.Transform((0.0, 0.0, 0.5)), velocity=(0.0, 0.0, -1e4),
                      name="b")
    q, _ = w.step(w.q, w.v)
    assert np.linalg.det(w.affine_map(q, "b")[0]) > 0.5


def test_non_finite_cotangents_and_badly_typed_forces_are_named():
    w = _two_cubes()
    g = np.ones(w.nq)
    g[0] = np.nan
    with pytest.raises(ValueError, match="dL_dq_next must be finite"):
        w.step_vjp(w.q, w.v, None, g, np.ones(w.nv))
    with pytest.raises(ValueError, match="taus must be"):
        w.rollout(w.q, w.v, np.zeros((2, w.nv), dtype=complex))
    with pytest.raises(ValueError, match="velocity must be"):
        w.add_affine_body(rd.Sphere(0.05), pose=rd.Transform((1.0, 0.0, 1.0)), velocity=["a", "b", "c"])

"""Armature columns of the step Jacobians against their closed form.

Without contact the step solves M~ (v' - v) = r with M~ = M + A + dt D + dt^2 K, and r does not depend on
the armature A. Adding a to entry k of A is a rank-one change of M~, so d v'/d a_k = -M~^-1 e_k (v'_k - v_k)
(Sherman-Morrison), for the armature of a joint other than a free or ball one. This is an oracle that needs no finite differences: on the floating Alex with Psyonic
hands a thumb's armature of 0 has a free-dof inertia of 2e-5 kg m^2, where one-sided differences of the base's
rows cannot get below 1e-2 relative error (docs/conventions.md, the check-grad sweep), and the closed form
agrees with the analytic column to 1e-8."""

from __future__ import annotations

import numpy as np
import pytest

import rigidiff as rd

from rdsupport import load_urdf_quiet, with_passive_terms, world_of


def _passive(world, kind: str) -> np.ndarray:
    """(nv,) the joints' damping or stiffness, by dof."""
    p = world.parameters()
    out = np.zeros(world.nv)
    for name in world.joint_names:
        j = world.joint(name)
        for i in range(j.nv):
            key = f"{name}/{kind}" if j.nv == 1 else f"{name}/{kind}_{i}"
            if key in p.names:
                out[j.v_index + i] = p[key]
    return out


def _check_armature_columns(world, q, v, tau, rtol, rows=slice(None)):
    J = world.step_jacobians(q, v, tau, wrt="armature")
    names = list(J.parameter_names)
    assert names, "the world has armature parameters"
    dt = world.dt
    Mt = world.mass_matrix(q) + dt * np.diag(_passive(world, "damping")) + dt**2 * np.diag(_passive(world, "stiffness"))
    Mt_inv = np.linalg.inv(Mt)
    dv = J.v_next - v
    checked = 0
    for c, name in enumerate(names):
        j = world.joint(name[: name.index("/armature")])
        if j.type in ("free", "ball"):
            continue  # the implicit gyroscopic update of a free or ball joint is not a linear solve in M~
        k = j.v_index
        expected = (-Mt_inv[:, k] * dv[k])[rows]
        scale = np.abs(expected).max()
        err = np.abs(J.dv_dp[rows, c] - expected).max()
        assert err <= rtol * max(scale, 1e-12), f"{name}: {err:.3e} > {rtol} * {scale:.3e}"
        checked += 1
    return checked


def test_alex_floating_armature_columns(robots_dir):
    path = robots_dir / "alex_description/urdf/alex_psyonic_hands.urdf"
    if not path.exists():
        pytest.skip("example-robot-data has no alex_description")
    # the explicit gyroscopic step keeps the base's update a linear solve in M~ (the implicit one is a
    # nonlinear map of the base's velocity, which a rank-one change of M~ also moves)
    world = rd.World(dt=1e-3, gyroscopic="explicit")
    world.add_skeleton(load_urdf_quiet(path, True, package_dirs=[robots_dir], strict=False))
    rng = np.random.default_rng(1)
    for _ in range(2):
        q = world.random_configuration(rng)
        v = rng.normal(size=world.nv)
        tau = world.gravity_forces(q) + 0.01 * rng.normal(size=world.nv)
        # rows 0-2, the base's linear velocity in its own frame, also turn with the step's rotation of the base
        assert _check_armature_columns(world, q, v, tau, rtol=1e-10, rows=slice(3, None)) == world.nv - 6


def test_panda_with_springs_armature_columns(robots_dir):
    path = robots_dir / "panda_description/urdf/panda.urdf"
    world = with_passive_terms(world_of(load_urdf_quiet(path, False, package_dirs=[robots_dir])), seed=3)
    rng = np.random.default_rng(2)
    q = world.random_configuration(rng)
    v = rng.normal(size=world.nv)
    tau = rng.normal(size=world.nv)
    assert _check_armature_columns(world, q, v, tau, rtol=1e-8) == world.nv

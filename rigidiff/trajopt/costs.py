"""Cost terms of a trajectory problem: value, gradient and Gauss-Newton Hessian over a whole trajectory.

Every term sees the states q_t (coordinates), v_t for t = 0..T and the torques tau_t for t = 0..T-1.
Gradients with respect to q are tangent-space cotangents (nv per knot), as everywhere in rigidiff;
the Gauss-Newton Hessians (J^T W J of each residual) feed iLQR.

Each built-in term also hands itself to C++ (``to_native``; cpp/include/rigidiff/trajopt/cost_terms.hpp),
where a Problem evaluates all of them along the trajectory in one call; ``add`` stays the definition the
C++ terms are tested against, and runs when a problem has a cost written in Python.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_array, real_array
from ..inertia import _skew
from ..transform import _as_rotation

# joint types whose coordinates add: integrate(q, dv) = q + dv
ADDITIVE = ("fixed", "revolute", "continuous", "prismatic", "translational", "universal")

__all__ = ["CostDerivatives", "StateCost", "ControlCost", "BodyTarget", "UserCost", "weight_matrix"]


class CostDerivatives:
    """Accumulated cost of a trajectory: value, gq, gv (T+1, nv), gtau (T, nv), and with hessians the
    per-knot blocks hxx (T+1, 2nv, 2nv) over (q tangent, v) and huu (T, nv, nv) over tau."""

    def __init__(self, T: int, nv: int, hessians: bool):
        self.value = 0.0
        self.gq = np.zeros((T + 1, nv))
        self.gv = np.zeros((T + 1, nv))
        self.gtau = np.zeros((T, nv))
        self.hxx = np.zeros((T + 1, 2 * nv, 2 * nv)) if hessians else None
        self.huu = np.zeros((T, nv, nv)) if hessians else None


def weight_matrix(weight, n: int, name: str) -> np.ndarray:
    """(n, n) symmetric positive semi-definite weight from a scalar, an (n,) diagonal or an (n, n) matrix."""
    W = real_array(weight, name, f"a scalar, ({n},) or ({n}, {n})")
    if W.ndim > 2 or (W.ndim >= 1 and W.shape not in ((n,), (n, n))):
        raise ValueError(f"{name} must be a scalar, ({n},) or ({n}, {n}), got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be finite")
    if W.ndim < 2:  # a diagonal: semi-definite when no entry is negative
        if np.any(W < 0):
            raise ValueError(f"{name} must be positive semi-definite")
        return np.eye(n) * W
    W = 0.5 * (W + W.T)
    if np.linalg.eigvalsh(W).min() < -1e-12 * max(1.0, np.abs(W).max()):
        raise ValueError(f"{name} must be positive semi-definite")
    return W


def time_indices(time, n_knots: int, name: str = "time") -> np.ndarray:
    """Knot indices from an int (negative counts from the end), a sequence of ints, or "all"."""
    if isinstance(time, str):
        if time != "all":
            raise ValueError(f"{name} must be an int, a sequence of ints or 'all', got {time!r}")
        return np.arange(n_knots)
    idx = np.atleast_1d(np.asarray(time))
    if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"{name} must be an int, a sequence of ints or 'all', got {time!r}")
    if np.any(idx >= n_knots) or np.any(idx < -n_knots):
        raise ValueError(f"{name} {time!r} is outside the {n_knots} knots 0..{n_knots - 1}")
    return np.unique(np.where(idx < 0, idx + n_knots, idx))


def _per_knot(target, n_knots: int, width: int, name: str) -> np.ndarray:
    """(n_knots, width) targets from one (width,) target or a (n_knots, width) sequence."""
    arr = real_array(target, name, f"({width},) or ({n_knots}, {width})")
    if arr.shape == (width,):
        arr = np.broadcast_to(arr, (n_knots, width))
    elif arr.shape != (n_knots, width):
        raise ValueError(f"{name} must have shape ({width},) or ({n_knots}, {width}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _check_configurations(world, Q, name: str) -> None:
    """Raises ValueError naming `name` (and the knot, for per-knot targets) when a row of Q is no
    configuration of the world, such as a quaternion that is not of unit norm."""
    rows, first = np.unique(Q, axis=0, return_index=True)
    for row, t in zip(rows, first):
        try:
            world.difference(row, row)
        except ValueError as err:  # the core names its own argument, q0: name the caller's
            where = name if len(rows) == 1 else f"{name}[{t}]"
            message = str(err)
            raise ValueError(where + message[2:] if message.startswith("q0") else f"{where}: {message}") from None


class StateCost:
    """0.5 |difference(q_target_t, q_t)|^2_Wq + 0.5 |v_t - v_target_t|^2_Wv at the chosen knots."""

    native = True  # to_native hands it to C++ (trajopt/cost_terms.hpp), which evaluates it as add does

    def __init__(self, world, T, q_target, v_target, q_weight, v_weight, final_only):
        nq, nv = world.nq, world.nv
        self.knots = np.array([T]) if final_only else np.arange(T + 1)
        self.q_target = None if q_target is None else _per_knot(q_target, T + 1, nq, "q_target")
        if self.q_target is not None:
            _check_configurations(world, self.q_target, "q_target")
        self.v_target = None if v_target is None else _per_knot(v_target, T + 1, nv, "v_target")
        self.Wq = weight_matrix(q_weight, nv, "q_weight")
        self.Wv = weight_matrix(v_weight, nv, "v_weight")
        for target, W, name in ((self.q_target, self.Wq, "q"), (self.v_target, self.Wv, "v")):
            with np.errstate(over="ignore"):  # the test itself: does the largest cost overflow?
                overflows = target is not None and not np.isfinite(0.5 * np.abs(target).max() ** 2 * np.abs(W).max())
            if overflows:
                raise ValueError(f"{name}_target and {name}_weight give costs beyond double precision "
                                 f"(|{name}_target| up to {np.abs(target).max():.3g}): rescale them")
        self._world = world
        # joints whose coordinates add (difference = subtraction, its Jacobian the identity): vectorised
        self.additive = nq == nv and all(body.joint.type in ADDITIVE for _, body, _, _ in world._joint_table)

    def to_native(self, core) -> None:
        core.add_state(self.knots, self.q_target, self.v_target, self.Wq, self.Wv)

    def add(self, acc: CostDerivatives, Q, V, TAU, derivatives: bool) -> None:
        world, nv = self._world, self._world.nv
        if self.additive:
            k = self.knots
            for X, target, W, g, block in ((Q, self.q_target, self.Wq, acc.gq, slice(0, nv)),
                                           (V, self.v_target, self.Wv, acc.gv, slice(nv, 2 * nv))):
                if target is None:
                    continue
                R = X[k] - target[k]
                WR = R @ W
                acc.value += 0.5 * float(np.sum(R * WR))
                if derivatives:
                    g[k] += WR
                    if acc.hxx is not None:
                        acc.hxx[k, block, block] += W
            return
        for t in self.knots:
            if self.q_target is not None:
                r = world.difference(self.q_target[t], Q[t])
                Wr = self.Wq @ r
                acc.value += 0.5 * r @ Wr
                if derivatives:
                    J = world.difference_jacobians(self.q_target[t], Q[t])[1]
                    acc.gq[t] += J.T @ Wr
                    if acc.hxx is not None:
                        acc.hxx[t, :nv, :nv] += J.T @ self.Wq @ J
            if self.v_target is not None:
                r = V[t] - self.v_target[t]
                Wr = self.Wv @ r
                acc.value += 0.5 * r @ Wr
                if derivatives:
                    acc.gv[t] += Wr
                    if acc.hxx is not None:
                        acc.hxx[t, nv:, nv:] += self.Wv


class ControlCost:
    """0.5 |tau_t - tau_target_t|^2_W summed over t = 0..T-1."""

    native = True

    def __init__(self, world, T, weight, tau_target):
        nv = world.nv
        self.W = weight_matrix(weight, nv, "weight")
        self.target = np.zeros((T, nv)) if tau_target is None else _per_knot(tau_target, T, nv, "tau_target")

    def to_native(self, core) -> None:
        core.add_control(self.target, self.W)

    def add(self, acc: CostDerivatives, Q, V, TAU, derivatives: bool) -> None:
        R = TAU - self.target
        WR = R @ self.W
        acc.value += 0.5 * float(np.sum(R * WR))
        if derivatives:
            acc.gtau += WR
            if acc.huu is not None:
                acc.huu += self.W


def rotation_log(R) -> np.ndarray:
    """Rotation vector of a rotation matrix (angle in [0, pi])."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_rotvec()


def right_jacobian_inverse(r) -> np.ndarray:
    """Inverse of SO(3)'s right Jacobian at the rotation vector r: d log(R) = J^-1 (R^T d omega_world)."""
    angle = np.linalg.norm(r)
    S = _skew(r)
    if angle < 1e-6:
        return np.eye(3) + 0.5 * S + S @ S / 12.0
    coef = 1.0 / angle**2 - (1.0 + np.cos(angle)) / (2.0 * angle * np.sin(angle))
    return np.eye(3) + 0.5 * S + coef * S @ S


class BodyTarget:
    """0.5 |p_t - position|^2_W for a point fixed in a body, and optionally
    0.5 |log(R_target^T R_t)|^2_Wr for the body's orientation, at the chosen knots."""

    native = True

    def __init__(self, world, T, body, position, weight, time, point, orientation, orientation_weight):
        self.body = world.body_index(body)
        self.knots = time_indices(time, T + 1)
        self.position = None if position is None else as_array(position, (3,), "position")
        self.point = np.zeros(3) if point is None else as_array(point, (3,), "point")
        self.W = weight_matrix(weight, 3, "weight")
        self.orientation = None
        if orientation is not None:
            # a (3, 3) rotation matrix or an (x, y, z, w) unit quaternion
            self.orientation = _as_rotation(orientation)
        self.Wr = weight_matrix(orientation_weight, 3, "orientation_weight")
        if self.position is None and self.orientation is None:
            raise ValueError("a body target needs a position, an orientation or both")
        self._world = world

    def to_native(self, core) -> None:
        core.add_body(self.body, self.knots, self.point, self.position, self.W, self.orientation, self.Wr)

    def add(self, acc: CostDerivatives, Q, V, TAU, derivatives: bool) -> None:
        nv, k = self._world.nv, self.knots
        poses, J = self._world._core_body_along(Q[k], self.body, derivatives)  # one C++ call for all knots
        R = poses[:, :3, :3]
        if self.position is not None:
            arm = R @ self.point
            r = poses[:, :3, 3] + arm - self.position
            Wr = r @ self.W
            acc.value += 0.5 * float(np.sum(r * Wr))
            if derivatives:
                # velocity of the point: v_origin + omega x arm = (J_lin - [arm]x J_ang) v
                Jp = J[:, :3] - np.cross(arm[:, :, None], J[:, 3:], axis=1)
                acc.gq[k] += np.einsum("kin,ki->kn", Jp, Wr)
                if acc.hxx is not None:
                    acc.hxx[k, :nv, :nv] += np.einsum("kin,ij,kjm->knm", Jp, self.W, Jp)
        if self.orientation is not None:
            for i, t in enumerate(k):
                r = rotation_log(self.orientation.T @ R[i])
                Wr = self.Wr @ r
                acc.value += 0.5 * r @ Wr
                if derivatives:
                    Jr = right_jacobian_inverse(r) @ R[i].T @ J[i, 3:]
                    acc.gq[t] += Jr.T @ Wr
                    if acc.hxx is not None:
                        acc.hxx[t, :nv, :nv] += Jr.T @ self.Wr @ Jr


class UserCost:
    """A cost written in Python: fn(Q, V, TAU) -> (value, dQ, dV, dTAU).

    dQ is the gradient with respect to the configurations in q's coordinates ((T+1, nq), converted to
    the tangent space here), dV (T+1, nv), dTAU (T, nv); any of them may be None (zero). iLQR uses
    its gradient only (no Hessian), plus its own regularisation.
    """

    native = False  # Python: a problem with one runs its costs (and iLQR) in Python

    def __init__(self, world, T, fn):
        if not callable(fn):
            raise TypeError(f"add_cost needs a callable fn(Q, V, TAU) -> (value, dQ, dV, dTAU), got {fn!r}")
        self.fn = fn
        self._world = world
        self._T = T

    def add(self, acc: CostDerivatives, Q, V, TAU, derivatives: bool) -> None:
        out = self.fn(Q.copy(), V.copy(), TAU.copy())
        if not isinstance(out, tuple) or len(out) != 4:
            raise TypeError("a user cost must return (value, dQ, dV, dTAU); use None for a zero gradient")
        value, dQ, dV, dT = out
        value = float(value)
        if not np.isfinite(value):
            raise ValueError(f"the user cost returned a non-finite value {value}")
        acc.value += value
        if not derivatives:
            return
        world, T = self._world, self._T
        if dQ is not None:
            dQ = as_array(dQ, (T + 1, world.nq), "user cost dQ")
            acc.gq += world._core_tangent_gradients(Q, dQ)
        if dV is not None:
            acc.gv += as_array(dV, (T + 1, world.nv), "user cost dV")
        if dT is not None:
            acc.gtau += as_array(dT, (T, world.nv), "user cost dTAU")

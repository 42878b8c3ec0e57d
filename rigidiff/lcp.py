"""The contact solver core from Python: a boxed linear complementarity problem (LCP) with friction.

The problem, independent of bodies (cpp/include/rigidiff/contact/boxed_lcp.hpp)::

    w = A x + b,            A (n, n) symmetric positive semi-definite (the Delassus matrix J M^-1 J^T),
                            b the constraint velocity before the impulse, w the velocity after it,
    l_i <= x_i <= u_i,      (l_i, u_i) = (lo_i, hi_i), or (lo_i, hi_i) * x[findex[i]] if findex[i] >= 0,
    x_i = l_i => w_i >= 0,  x_i = u_i => w_i <= 0,  l_i < x_i < u_i => w_i = 0.

A normal contact row has ``lo = 0, hi = inf``; its friction rows have ``lo = -mu, hi = mu`` and ``findex``
pointing at the normal row. Every row needs ``lo <= 0 <= hi``.

The solve tries, in order: the ``warm_start`` classification (one linear solve), principal pivoting with
friction bounds updated from the normal impulses, projected conjugate gradients, projected Gauss-Seidel,
and the normal-only problem with friction dropped. The accepted answer is then standardised: the
clamping rows take the least-squares minimum-norm solution of their linear system, so redundant
contacts (four corners of a box on a plane) get a unique, symmetric answer, and the derivatives
(``dx_db``, ``vjp``) are those of that answer with the classification held fixed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from rigidiff import _core
from rigidiff._validate import real_array

__all__ = ["LcpClass", "LcpSolver", "BoxedLcpResult", "solve_boxed_lcp", "boxed_lcp_vjp"]


class LcpClass(enum.IntEnum):
    """Class of an LCP row in a solution (thresholds in contact/lcp_classification.hpp)."""

    SEPARATING = 0  #: x at a zero bound (a normal that does not push, friction of a separating contact)
    CLAMPING = 1  #: w = 0, x strictly inside its bounds (a pushing normal, sticking friction)
    UPPER_BOUND = 2  #: x at its non-zero upper bound (sliding friction at +mu x_normal)
    LOWER_BOUND = 3  #: x at its non-zero lower bound (sliding friction at -mu x_normal)


class LcpSolver(enum.IntEnum):
    """The stage of the solve that produced the answer."""

    NONE = 0  #: every stage failed; x = 0
    WARM_START = 1  #: the warm-start classification solved the problem
    PIVOTING = 2  #: principal pivoting (Dantzig's method for box bounds)
    PROJECTED_CONJUGATE_GRADIENTS = 3  #: projected conjugate gradients (MPRGP), friction bounds by rounds
    PROJECTED_GAUSS_SEIDEL = 4  #: projected Gauss-Seidel on the slightly regularised problem
    #: no stage met the tolerance: the closest answer with friction of pivoting and Gauss-Seidel, within 100
    #: times the tolerance, is kept (not standardised)
    APPROXIMATE_FRICTION = 5
    FRICTIONLESS_PGS = 6  #: projected Gauss-Seidel with the friction rows dropped


@dataclass
class BoxedLcpResult:
    """Answer of :func:`solve_boxed_lcp`.

    Attributes:
        x: (n,) impulses. w: (n,) post-impulse velocities A x + b.
        classes: tuple of n :class:`LcpClass` (pass it back as ``warm_start`` for the next solve).
        solver: the :class:`LcpSolver` stage that succeeded. success: False if every stage failed (x = 0).
        friction_dropped: the friction rows were dropped to find a solution (x = 0 on them).
        standardised: x is the least-squares minimum-norm solution of the clamping system.
        dx_db: (n, n) Jacobian dx/db with the classification fixed, if requested (zero when the answer
            is not standardised: a failed solve, or a solver answer whose clamping system was rejected).
    """

    x: np.ndarray
    w: np.ndarray
    classes: tuple
    solver: LcpSolver
    success: bool
    friction_dropped: bool
    standardised: bool
    dx_db: np.ndarray | None = None


def _classes_in(warm_start, n: int):
    if warm_start is None:
        return None
    if isinstance(warm_start, (str, LcpClass)) or np.ndim(warm_start) != 1:
        raise ValueError(f"warm_start must be a sequence of {n} classes, got {warm_start!r}")
    codes = []
    for c in warm_start:
        if isinstance(c, str):
            try:
                c = LcpClass[c.upper()]
            except KeyError:
                raise ValueError(f"warm_start: unknown class {c!r}; use one of {[m.name for m in LcpClass]}") from None
        codes.append(int(c))
    return np.asarray(codes, dtype=np.int64)


def _findex_in(findex):
    if findex is None:
        return None
    arr = np.asarray(findex)
    if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
        arr = arr.astype(np.int64)
    return arr


def _unit_scale(A, b):
    """(A / s, b / s, s): s = 1, or the largest |entry| of A and b when it lies outside [1e-100, 1e100].
    The problem (A / s, b / s) has the same solution x (w scales by 1 / s, dx/db by s), and products of
    entries near 1e300 would overflow, so extreme scales are solved at unit scale. Arrays that are not
    numbers pass unchanged to the core, whose checks name them."""
    # real_array, not np.asarray(dtype=float): a complex A must reach the core's check, not lose its imaginary part
    try:
        a, v = real_array(A, "A"), real_array(b, "b")
        s = max(np.abs(a).max(initial=0.0), np.abs(v).max(initial=0.0))
    except (TypeError, ValueError):
        return A, b, 1.0
    if not np.isfinite(s) or s == 0.0 or 1e-100 <= s <= 1e100:
        return A, b, 1.0
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.size:  # the core's check, named with the caller's values
        bad = np.argwhere(np.triu(np.abs(a - a.T) > 1e-9 * np.abs(a).max(), 1))
        if len(bad):
            i, j = bad[0]
            raise ValueError(f"A must be symmetric: A[{i}, {j}] = {a[i, j]:g} but A[{j}, {i}] = {a[j, i]:g}")
    return a / s, v / s, s


def solve_boxed_lcp(A, b, lo, hi, findex=None, warm_start=None, *, tolerance: float = 1e-6,
                    jacobian: bool = False) -> BoxedLcpResult:
    """Solve the boxed LCP ``w = A x + b``, ``lo <= x <= hi`` with friction rows scaled by ``x[findex]``.

    Args:
        A: (n, n) symmetric positive semi-definite matrix (not checked for definiteness).
        b: (n,) velocities before the impulse. lo, hi: (n,) bounds with ``lo <= 0 <= hi`` (``inf`` allowed
            on rows without findex); friction rows hold the coefficients, e.g. ``-mu`` and ``mu``.
        findex: (n,) integers, -1 for an unscaled row, else the index of the normal row (which must
            have findex -1 and lo 0) whose impulse scales this row's bounds. None: no friction rows.
        warm_start: a guessed classification (n classes as :class:`LcpClass`, their integer codes or
            names), typically the previous step's ``result.classes``; accepted if it solves the problem.
        tolerance: validity tolerance, relative: impulses to ``tolerance * (1 + max|x|)``, velocities to
            ``tolerance * (1 + max|b|)``.
        jacobian: also return ``dx_db`` (n, n).

    A and b may have any scale: (s A, s b) has the same x, and beyond 1e100 (or below 1e-100) the problem
    is solved at unit scale and w and dx_db scaled back; ``success`` is False if w then exceeds double
    precision's range (``inf``).

    Returns:
        :class:`BoxedLcpResult`. Never NaN: if every stage fails, x = 0 and ``success`` is False.

    Raises:
        ValueError: wrong shapes, non-finite A or b, A not symmetric, bounds excluding 0, findex out of
            range or not pointing at a normal row, unknown warm-start classes (the message names the argument).
    """
    n = np.shape(b)[0] if np.ndim(b) == 1 else -1
    A, b, scale = _unit_scale(A, b)
    x, w, classes, status, dx_db, _, _ = _core._solve_boxed_lcp(
        A, b, lo, hi, _findex_in(findex), _classes_in(warm_start, n), float(tolerance), bool(jacobian), None)
    success = bool(status[2])
    if scale != 1.0:
        with np.errstate(over="ignore"):
            w = w * scale
        dx_db = None if dx_db is None else dx_db / scale
        success = success and bool(np.all(np.isfinite(w)))  # a velocity beyond double precision's range
    return BoxedLcpResult(x=x, w=w, classes=tuple(LcpClass(int(c)) for c in classes), solver=LcpSolver(int(status[0])),
                          success=success, friction_dropped=bool(status[1]), standardised=bool(status[3]),
                          dx_db=dx_db)


def boxed_lcp_vjp(A, b, lo, hi, g, findex=None, *, tolerance: float = 1e-6):
    """Reverse mode of :func:`solve_boxed_lcp`: given ``g = dL/dx`` (n,), return ``(dL/db, dL/dA)``.

    The classification of the solution is held fixed. ``dL/dA`` (n, n) treats the entries of A as
    independent (it is not symmetrised), so it chains directly through ``A = J M^-1 J^T``; when the
    clamping system is singular it includes the derivative of the pseudo-inverse (constant rank). Both are
    zero when the answer is not standardised (see :class:`BoxedLcpResult`).
    """
    if g is None:  # the core reads g=None as "no reverse pass"
        raise TypeError("g (dL/dx, shape (n,)) is required, got None")
    A, b, scale = _unit_scale(A, b)
    _, _, _, _, _, grad_b, grad_A = _core._solve_boxed_lcp(A, b, lo, hi, _findex_in(findex), None, float(tolerance),
                                                          False, g)
    return grad_b / scale, grad_A / scale

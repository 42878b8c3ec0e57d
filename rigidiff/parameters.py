"""Physical parameters of a World as one named vector, and the linear maps between them and the core's.

A world's parameters (``world.parameters()``), one scalar per name, in this order:

* per moving body (body order of ``world.body_names``; bodies welded to the world have no effect on
  the dynamics and are left out): ``<body>/mass``, ``<body>/com_x``, ``com_y``, ``com_z`` (centre of
  mass in the body frame) and ``<body>/inertia_xx``, ``inertia_xy``, ``inertia_xz``, ``inertia_yy``,
  ``inertia_yz``, ``inertia_zz`` (rotational inertia about the centre of mass, body axes): the
  values of ``rd.Inertia``;
* per moving joint (``world.joint_names`` order): ``<joint>/damping``, then all ``<joint>/stiffness``,
  then all ``<joint>/armature`` -- one name per dof, with a suffix ``_0``, ``_1``, ... on joints of
  several dofs (``ball/damping_2``);
* ``gravity_x``, ``gravity_y``, ``gravity_z``;
* per colliding shape (the collision model's order: bodies in ``world.body_names`` order, shapes in
  the order they were added): ``<shape>/friction``, then all ``<shape>/restitution``, with the
  shape's name (``"<body>/shape<i>"`` unless named; prefixed by ``"<skeleton>/"`` when two skeletons
  have shapes of the same name). They act through contacts only.

The core differentiates with respect to the standard inertial parameters of each joint's merged
body (mass, first moment m c and rotational inertia about the joint origin, in the joint frame),
in which the dynamics are linear; :class:`ParameterMap` carries the chain rule to the names above.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rigidiff._validate import as_array
from rigidiff.errors import UnknownNameError

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["Parameters", "GROUPS", "INERTIAL_FIELDS", "inertial_parameter_jacobian", "theta_transform_matrix"]

INERTIAL_FIELDS = ("mass", "com_x", "com_y", "com_z", "inertia_xx", "inertia_xy", "inertia_xz", "inertia_yy",
                   "inertia_yz", "inertia_zz")
JOINT_FIELDS = ("damping", "stiffness", "armature")
# parameter groups: keyword -> the core's group bit (cpp/include/rigidiff/world/step_parameter_derivatives.hpp)
GROUPS = {"inertia": 1, "armature": 2, "damping": 4, "stiffness": 8, "gravity": 16, "friction": 32, "restitution": 64}
CONTACT_FIELDS = ("friction", "restitution")
_SYM = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


@dataclass(frozen=True)
class Parameters:
    """A world's physical parameters: ``names`` (one per scalar), ``values``, ``lower`` and ``upper``
    bounds (lower bounds 0 for masses, principal inertias and passive coefficients; the triangle
    inequalities of inertias are not box bounds and are not implied). Index it by name: ``p["link3/mass"]``."""

    names: tuple
    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __len__(self) -> int:
        return len(self.names)

    def index(self, name: str) -> int:
        """Position of ``name`` in ``names`` (UnknownNameError, a KeyError, naming close matches if unknown)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownNameError(unknown_message(name, self.names)) from None

    def __getitem__(self, name: str) -> float:
        return float(self.values[self.index(name)])

    def as_dict(self) -> dict:
        """{name: value}."""
        return dict(zip(self.names, self.values.tolist()))

    def __repr__(self) -> str:
        return f"Parameters({len(self.names)} values: {', '.join(self.names[:4])}{', ...' if len(self) > 4 else ''})"


def wrt_entries(wrt) -> list:
    """The entries of a ``wrt`` specification (one string, or an iterable of strings) as a list of strings;
    ValueError for anything else. The worlds resolve each entry against their own parameter names."""
    if isinstance(wrt, str):
        return [wrt]
    if not isinstance(wrt, Iterable):
        raise ValueError(f"wrt must be a parameter name, a group or a list of them, got {wrt!r}")
    entries = list(wrt)
    for item in entries:
        if not isinstance(item, str):
            raise ValueError(f"wrt entries must be strings, got {item!r}")
    return entries


def parameter_updates(values, names) -> dict:
    """{name: value} of a set_parameters argument: a {name: value} dict of some of names (UnknownNameError for
    another), or a full vector ordered as names (ValueError naming it otherwise)."""
    if isinstance(values, dict):
        for name in values:
            if name not in names:
                raise UnknownNameError(unknown_message(name, names))
        return dict(values)
    return dict(zip(names, as_array(values, (len(names),), "parameter values").tolist()))


def unknown_message(name, names) -> str:
    import difflib

    close = difflib.get_close_matches(str(name), list(names), n=3)
    hint = f"; did you mean {close}?" if close else ""
    return f"no parameter named {name!r}{hint} (world.parameters().names lists them)"


def _sym6(M: np.ndarray) -> np.ndarray:
    return np.array([M[i, j] for i, j in _SYM])


def _from6(x) -> np.ndarray:
    M = np.empty((3, 3))
    for k, (i, j) in enumerate(_SYM):
        M[i, j] = M[j, i] = x[k]
    return M


def standard_parameters(mass: float, com, Ic) -> np.ndarray:
    """(10,) m, m c, rotational inertia about the frame origin (xx, xy, xz, yy, yz, zz)."""
    c = np.asarray(com, dtype=float)
    Io = np.asarray(Ic, dtype=float) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, _sym6(Io)])


def inertial_parameter_jacobian(mass: float, com) -> np.ndarray:
    """(10, 10) derivative of standard_parameters with respect to (mass, com, inertia about the com)."""
    c = np.asarray(com, dtype=float)
    J = np.zeros((10, 10))
    J[0, 0] = 1.0
    J[1:4, 0] = c
    J[4:, 0] = _sym6(c @ c * np.eye(3) - np.outer(c, c))
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        J[1 + k, 1 + k] = mass
        J[4:, 1 + k] = mass * _sym6(2.0 * c[k] * np.eye(3) - np.outer(e, c) - np.outer(c, e))
    J[4:, 4:] = np.eye(6)
    return J


def theta_transform_matrix(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(10, 10) map of standard parameters from a body frame to the frame in which (R, p) places it."""
    T = np.empty((10, 10))
    for k in range(10):
        th = np.zeros(10)
        th[k] = 1.0
        m, h, Io = th[0], th[1:4], _from6(th[4:])
        Rh = R @ h
        Io2 = R @ Io @ R.T + m * (p @ p * np.eye(3) - np.outer(p, p)) + 2.0 * (p @ Rh) * np.eye(3) \
            - np.outer(Rh, p) - np.outer(p, Rh)
        T[:, k] = np.concatenate([[m], Rh + m * p, _sym6(Io2)])
    return T


@dataclass
class ParameterLayout:
    """Where each named parameter lives: built by World._compile, refreshed after set_parameters."""

    names: tuple
    # per name: ("body", slot, field) | ("joint", dof, field) | ("gravity", axis) | ("contact", geometry, field)
    kinds: list
    body_joint: list  # per parameter body: core joint index (>= 1)
    body_pose: list  # per parameter body: Transform of the body in its core joint's frame
    njoints: int  # core joints, world included
    nv: int
    ngeometries: int = 0
    version: int = 0


def group_of(kind) -> str:
    """The group keyword of a parameter kind (a ParameterLayout.kinds entry)."""
    return "inertia" if kind[0] == "body" else "gravity" if kind[0] == "gravity" else kind[2]


def core_offsets(layout: ParameterLayout, groups: int) -> dict:
    """{group keyword: column offset} for the core vector of `groups` (inertia, armature, damping,
    stiffness, gravity, friction, restitution in that order)."""
    sizes = {"inertia": 10 * (layout.njoints - 1), "armature": layout.nv, "damping": layout.nv,
             "stiffness": layout.nv, "gravity": 3, "friction": layout.ngeometries, "restitution": layout.ngeometries}
    out, col = {}, 0
    for key in ("inertia", "armature", "damping", "stiffness", "gravity", "friction", "restitution"):
        if groups & GROUPS[key]:
            out[key] = col
            col += sizes[key]
    out["_size"] = col
    return out


def selection_map(layout: ParameterLayout, selected: list[int], body_jacobians: list) -> tuple[int, sp.csr_matrix]:
    """Core groups and the sparse (n_core, n_selected) matrix mapping core parameter derivatives to
    those of the selected names (columns in the given order). body_jacobians[b] is the (10, 10)
    d(joint-frame standard parameters) / d(named parameters of body b)."""
    groups = 0
    for i in selected:
        kind = layout.kinds[i]
        groups |= GROUPS[group_of(kind)]
    off = core_offsets(layout, groups)
    rows, cols, vals = [], [], []
    for c, i in enumerate(selected):
        kind = layout.kinds[i]
        if kind[0] == "body":
            b, field = kind[1], INERTIAL_FIELDS.index(kind[2])
            base = off["inertia"] + 10 * (layout.body_joint[b] - 1)
            column = body_jacobians[b][:, field]
            for r in np.flatnonzero(column):
                rows.append(base + r)
                cols.append(c)
                vals.append(column[r])
        elif kind[0] in ("joint", "contact"):
            rows.append(off[kind[2]] + kind[1])
            cols.append(c)
            vals.append(1.0)
        else:
            rows.append(off["gravity"] + kind[1])
            cols.append(c)
            vals.append(1.0)
    import scipy.sparse as sp  # here: importing rigidiff does not pay for scipy.sparse

    M = sp.csr_matrix((vals, (rows, cols)), shape=(off["_size"], len(selected)))
    return groups, M


def skeleton_parameter_table(world) -> list:
    """[(name, kind, index into world.parameters())] of the lcp World ``world``'s skeleton parameters: its bodies'
    inertial parameters and its joints' damping, stiffness and armature, in its order (not gravity nor the
    shapes' contact parameters). Worlds that compile their skeletons with an inner lcp World name theirs so."""
    layout = world._parameter_layout()
    return [(name, kind, i) for i, (name, kind) in enumerate(zip(layout.names, layout.kinds))
            if kind[0] in ("body", "joint")]


def skeleton_core_map(world, table: list) -> np.ndarray:
    """The (10 (njoints - 1) + 3 nv, len(table)) matrix taking derivatives with respect to the core's skeleton
    parameters of the lcp World ``world`` (each core joint's standard inertial parameters in its joint frame, then
    every dof's damping, stiffness and armature) to those of the named ones of ``table``
    (skeleton_parameter_table): the chain rule through each body's placement in its joint frame."""
    layout = world._parameter_layout()
    jacobians = world._body_jacobians()  # d(joint-frame parameters) / d(named ones), per body
    ni, nv = 10 * (layout.njoints - 1), layout.nv
    M = np.zeros((ni + len(JOINT_FIELDS) * nv, len(table)))
    for c, (_, kind, _) in enumerate(table):
        if kind[0] == "body":
            base = 10 * (layout.body_joint[kind[1]] - 1)
            M[base:base + 10, c] = jacobians[kind[1]][:, INERTIAL_FIELDS.index(kind[2])]
        else:
            M[ni + JOINT_FIELDS.index(kind[2]) * nv + kind[1], c] = 1.0
    return M

"""The skeletons' joint limits and own parameters in projective worlds (mixed into rigidiff.ProjectiveWorld;
docs/deformable.md, "Robots").

The parameters are named as the lcp World names them (``"<body>/mass"``, ``"<body>/com_x"``,
``"<body>/inertia_xy"``, ``"<joint>/damping"``, ...): the lcp World that compiles the skeletons
(``_articulated``) lists them and maps the core's cotangents of each joint's merged inertial parameters back to
the named ones. ``"joint_limit_stiffness"`` follows them."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_scalar
from rigidiff.parameters import skeleton_core_map, skeleton_parameter_table

LIMIT_STIFFNESS = "joint_limit_stiffness"


class ProjectiveSkeletonParameters:
    """Joint limits and the skeletons' parameters of ProjectiveWorld."""

    @property
    def joint_limits(self) -> bool:
        """Whether the skeletons' joint position limits act (settable; False by default, as in the lcp world's
        ``contact_options`` and the barrier world). On, each joint coordinate beyond its lower or upper limit
        adds the penalty ``joint_limit_stiffness / 2 * gap**2`` to the step's potential, like the contacts'
        penalty: a joint pressed into its limit rests beyond it by its load over the stiffness, and a state
        beyond a limit is pushed back (no error)."""
        return self._pw_joint_limits()[0]

    @joint_limits.setter
    def joint_limits(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"joint_limits must be True or False, got {value!r}")
        self._pw_set_joint_limits(bool(value), self.joint_limit_stiffness)

    @property
    def joint_limit_stiffness(self) -> float:
        """The joint-limit penalty's stiffness, in N/m for a prismatic coordinate and N m/rad for a revolute one
        (> 0; settable; a parameter, ``"joint_limit_stiffness"``)."""
        return self._pw_joint_limits()[1]

    @joint_limit_stiffness.setter
    def joint_limit_stiffness(self, value):
        self._pw_set_joint_limits(self.joint_limits,
                                  as_scalar(value, "joint_limit_stiffness", minimum=0.0, strict=True))

    # ------------------------------------------------------------------ parameters
    def _skeleton_parameter_kinds(self) -> list:
        """[(name, kind, index into the inner world's parameters())]: the bodies' inertial parameters and the
        joints' damping, stiffness and armature, as the lcp world orders them (none without skeletons)."""
        return [] if self._articulated is None else skeleton_parameter_table(self._articulated)

    def _skeleton_parameter_names(self) -> tuple:
        table = self._skeleton_parameter_kinds()
        return tuple(name for name, _, _ in table) + ((LIMIT_STIFFNESS,) if table else ())

    def _skeleton_parameter_values(self) -> tuple:
        """(values, lower, upper) of _skeleton_parameter_names."""
        table = self._skeleton_parameter_kinds()
        if not table:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        p = self._articulated.parameters()
        idx = [i for _, _, i in table]
        return (np.append(p.values[idx], self.joint_limit_stiffness), np.append(p.lower[idx], 0.0),
                np.append(p.upper[idx], np.inf))

    def _skeleton_parameters(self) -> np.ndarray:
        """The last adjoint's cotangents in the order of _skeleton_parameter_names."""
        table = self._skeleton_parameter_kinds()
        if not table:
            return np.zeros(0)
        core = self._pw_skeleton_parameter_gradients()
        return np.append(core[:-1] @ skeleton_core_map(self._articulated, table), core[-1])

    def _set_skeleton_parameters(self, values: dict) -> None:
        """Set skeleton parameters {name: value} (names of _skeleton_parameter_names) and recompile them."""
        values = dict(values)
        if LIMIT_STIFFNESS in values:
            self.joint_limit_stiffness = values.pop(LIMIT_STIFFNESS)
        if values:
            self._articulated.set_parameters(values)  # validates, and writes them into the skeletons' objects
            self._install_skeletons(self._skeletons)

"""What the worlds of another kind share (the barrier world's affine bodies, the projective world's deformable
ones): named bodies in state order, dt and gravity and an options vector held by their C++ core, the stored
state (q, v) that ``advance`` steps, and rigidiff.viz's view of them (DrawnBySurfaces).

A subclass names its core's accessors as class attributes (``_core_dt``, ``_core_set_dt``, ``_core_gravity``,
``_core_set_gravity``, ``_core_options``, ``_core_set_options``), its solver (``_solver_name``) and what its
bodies are called in messages (``_body_word``), and keeps ``_names``, ``_q0``, ``_v0`` and ``time``."""

from __future__ import annotations

import numpy as np

from rigidiff._not_copyable import NotCopyable
from rigidiff._surface_drawing import DrawnBySurfaces
from rigidiff._validate import as_array, as_scalar
from rigidiff.errors import UnknownNameError


class BodyWorld(DrawnBySurfaces, NotCopyable):
    """Base of rigidiff.BarrierWorld and rigidiff.ProjectiveWorld (see the module docstring)."""

    _solver_name = ""
    _body_word = "body"

    @property
    def solver(self) -> str:
        """The world's solver: "barrier" or "projective"."""
        return self._solver_name

    @property
    def dt(self) -> float:
        """Time step in seconds; settable."""
        return self._core_dt()

    @dt.setter
    def dt(self, value):
        self._core_set_dt(as_scalar(value, "dt", minimum=0.0, strict=True))

    @property
    def gravity(self) -> np.ndarray:
        """(3,) gravity acceleration in m/s^2; settable."""
        return self._core_gravity()

    @gravity.setter
    def gravity(self, value):
        self._core_set_gravity(as_array(value, (3,), "gravity"))

    def _set_option(self, index: int, value) -> None:
        options = list(self._core_options())
        options[index] = value
        self._core_set_options(*options)

    @property
    def body_names(self) -> list[str]:
        """The bodies' names in state order."""
        return list(self._names)

    def _index(self, name) -> int:
        try:
            return self._names.index(name)
        except ValueError:
            raise UnknownNameError(f"no {self._body_word} named {name!r}; bodies: {self._names}") from None

    @property
    def q(self) -> np.ndarray:
        """The stored configuration (starts where the bodies were placed); settable."""
        return self._q0.copy()

    @q.setter
    def q(self, value):
        self._q0 = as_array(value, (self.nq,), "q").copy()

    @property
    def v(self) -> np.ndarray:
        """The stored velocity (starts at the bodies' initial velocities); settable."""
        return self._v0.copy()

    @v.setter
    def v(self, value):
        self._v0 = as_array(value, (self.nv,), "v").copy()

    def __repr__(self) -> str:
        return f"World(dt={self.dt}, solver='{self._solver_name}', bodies={self._names})"

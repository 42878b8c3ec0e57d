"""The result of ``World.step_jacobians``: one step and its Jacobians, named what / with respect to what."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["StepJacobians"]


@dataclass(frozen=True)
class StepJacobians:
    """Jacobians of one step (q, v, tau) -> (q_next, v_next), each (nv, nv).

    ``dv_dq`` is d v_next / d q, and so on; q and q_next are taken in the tangent space (perturbations
    through integrate, changes measured by difference), so quaternion joints have nv rows and columns.
    ``A`` = [[dq_dq, dq_dv], [dv_dq, dv_dv]] (2nv, 2nv) and ``B`` = [[dq_dtau], [dv_dtau]] (2nv, nv).
    """

    q_next: np.ndarray
    v_next: np.ndarray
    dq_dq: np.ndarray
    dq_dv: np.ndarray
    dq_dtau: np.ndarray
    dv_dq: np.ndarray
    dv_dv: np.ndarray
    dv_dtau: np.ndarray

    @property
    def A(self) -> np.ndarray:
        """(2nv, 2nv) state Jacobian [[dq_dq, dq_dv], [dv_dq, dv_dv]]."""
        return np.block([[self.dq_dq, self.dq_dv], [self.dv_dq, self.dv_dv]])

    @property
    def B(self) -> np.ndarray:
        """(2nv, nv) control Jacobian [[dq_dtau], [dv_dtau]]."""
        return np.vstack([self.dq_dtau, self.dv_dtau])

"""Results of the derivative calls: ``World.step_jacobians`` (one step and its Jacobians, named what /
with respect to what) and the gradients of the reverse mode (``step_vjp``, ``Trajectory.backward``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidiff.errors import UnknownNameError

__all__ = ["StepJacobians", "Gradients"]


@dataclass  # not frozen: a frozen dataclass takes twice as long to build, and this one is built per step
class StepJacobians:
    """Jacobians of one step (q, v, tau) -> (q_next, v_next), each (nv, nv).

    ``dv_dq`` is d v_next / d q, and so on; q and q_next are taken in the tangent space (perturbations
    through integrate, changes measured by difference), so quaternion joints have nv rows and columns.
    ``A`` = [[dq_dq, dq_dv], [dv_dq, dv_dv]] (2nv, 2nv) and ``B`` = [[dq_dtau], [dv_dtau]] (2nv, nv).
    With parameters (``wrt=``): ``dq_dp``, ``dv_dp`` (nv, n_params), columns named by ``parameter_names``,
    and their stack ``P`` (2nv, n_params). ``contacts``: the step's StepContacts in a world with
    constraints (None otherwise); its ``row_classes`` are the contact mode the Jacobians hold fixed.
    From ``World.step_jacobians_batch`` every array has a leading batch dimension (N, ...), and
    ``contacts`` is None.
    """

    q_next: np.ndarray
    v_next: np.ndarray
    dq_dq: np.ndarray
    dq_dv: np.ndarray
    dq_dtau: np.ndarray
    dv_dq: np.ndarray
    dv_dv: np.ndarray
    dv_dtau: np.ndarray
    parameter_names: tuple = ()
    dq_dp: np.ndarray | None = None
    dv_dp: np.ndarray | None = None
    _contacts: object = None  # a StepContacts, or (world, raw arrays) until first asked for

    @property
    def contacts(self):
        """The step's StepContacts (world with constraints), built on first access; else None."""
        if isinstance(self._contacts, tuple):
            world, raw = self._contacts
            self._contacts = world._step_contacts_from(raw)
        return self._contacts

    @property
    def A(self) -> np.ndarray:
        """(2nv, 2nv) state Jacobian [[dq_dq, dq_dv], [dv_dq, dv_dv]]."""
        return np.block([[self.dq_dq, self.dq_dv], [self.dv_dq, self.dv_dv]])

    @property
    def B(self) -> np.ndarray:
        """(2nv, nv) control Jacobian [[dq_dtau], [dv_dtau]]."""
        return np.concatenate([self.dq_dtau, self.dv_dtau], axis=-2)

    @property
    def P(self) -> np.ndarray:
        """(2nv, n_params) parameter Jacobian [[dq_dp], [dv_dp]] (n_params = 0 without wrt)."""
        if self.dq_dp is None:
            return np.zeros((*self.dq_dq.shape[:-2], 2 * self.dq_dq.shape[-1], 0))
        return np.concatenate([self.dq_dp, self.dv_dp], axis=-2)


@dataclass(frozen=True)
class Gradients:
    """Gradients of a loss from the reverse mode: with respect to the initial configuration ``q`` (tangent
    space (nv,), or coordinates (nq,) when asked for), velocity ``v``, torques ``tau`` ((nv,) for one
    step, (T, nv) for a rollout) and the parameters named by ``parameter_names`` (``parameters``).
    ``q_next`` and ``v_next`` hold the step's result (step_vjp only); ``activation`` the gradient with respect
    to the muscles' activations of a projective world ((muscles,) for one step, (T, muscles) for a rollout)."""

    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    parameters: np.ndarray
    parameter_names: tuple
    q_next: np.ndarray | None = None
    v_next: np.ndarray | None = None
    activation: np.ndarray | None = None

    def parameter(self, name: str) -> float:
        """Gradient with respect to one parameter named in parameter_names."""
        try:
            return float(self.parameters[self.parameter_names.index(name)])
        except ValueError:
            raise UnknownNameError(
                f"{name!r} is not among the differentiated parameters {self.parameter_names}") from None

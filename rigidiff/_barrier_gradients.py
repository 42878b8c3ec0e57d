"""Derivatives of barrier worlds (rigidiff.BarrierWorld): step Jacobians, the reverse mode of a step and of a
recorded rollout, with respect to the state, the generalised forces and the physical parameters.

The parameters are named as the lcp World names its own (``"<body>/<field>"`` for a body's or joint's, a bare
name for the world's), in the lcp World's order: the skeletons' (each link's ``"<body>/mass"``, ``com_x``, ...,
``inertia_xx``, ..., then each joint's ``"<joint>/damping"``, ``"<joint>/stiffness"``, ``"<joint>/armature"``),
then ``"<body>/density"`` and ``"<body>/stiffness"`` (the orthogonality kappa) of every affine body (not of static
meshes), then the world's ``"gravity_x"``, ``"gravity_y"``, ``"gravity_z"``, ``"friction"`` (mu) and ``"dhat"``.
``wrt`` takes a name, a group (``"inertia"``, ``"damping"``, ``"stiffness"`` (the joints' springs and the
bodies' kappa), ``"armature"``, ``"density"``, ``"gravity"``, ``"friction"``, ``"dhat"``), a body's or joint's
name (its own), ``"all"``, or a list of those. The C++ core computes them all in its own order (each body's
density, each body's stiffness, friction, dhat, gravity, then each core joint's inertial parameters in its frame
and every dof's damping, stiffness and armature); this module maps and selects them.
"""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array, as_scalar
from rigidiff.errors import UnknownNameError
from rigidiff.parameters import (group_of, parameter_updates, skeleton_core_map, skeleton_parameter_table,
                                 unknown_message, wrt_entries)

_SKELETON = "skeleton"  # the owner of the skeletons' parameters in _parameter_table's rows
GROUPS = ("inertia", "damping", "stiffness", "armature", "density", "gravity", "friction", "dhat")


class BarrierGradients:
    """Derivative methods of rigidiff.BarrierWorld (see the module docstring)."""

    # ------------------------------------------------------------------ parameters
    def _parameter_table(self) -> tuple:
        """(rows, C): rows [(name, group, owner)] in the order of parameters().names (owner: _SKELETON for the
        skeletons' parameters, the body's name for an affine body's, None for the world's), C the (core parameters,
        names) matrix taking the core's derivatives to the named ones."""
        bodies = len(self._names)
        rows, cols = [], []  # per name: its core column, or a column vector over the skeletons' core block
        skeletons = [] if self._articulated is None else skeleton_parameter_table(self._articulated)
        if skeletons:
            block = skeleton_core_map(self._articulated, skeletons)
            for c, (name, kind, _) in enumerate(skeletons):
                rows.append((name, group_of(kind), _SKELETON))
                cols.append(block[:, c])
        for i, name in enumerate(self._names):
            if name in self._static:
                continue
            rows += [(f"{name}/density", "density", name), (f"{name}/stiffness", "stiffness", name)]
            cols += [i, bodies + i]
        rows += [(f"gravity_{axis}", "gravity", None) for axis in "xyz"]
        rows += [("friction", "friction", None), ("dhat", "dhat", None)]
        cols += [2 * bodies + 2, 2 * bodies + 3, 2 * bodies + 4, 2 * bodies, 2 * bodies + 1]
        world = 2 * bodies + 5
        C = np.zeros((self._bw_parameter_count(), len(rows)))
        for c, col in enumerate(cols):
            if isinstance(col, np.ndarray):
                C[world:, c] = col
            else:
                C[col, c] = 1.0
        return rows, C

    def parameters(self):
        """The world's differentiable parameters as one named vector (rigidiff.Parameters), named and ordered as the
        lcp world's (see rigidiff._barrier_gradients): the skeletons' inertial parameters (about each link's centre
        of mass, body axes) and their joints' damping, stiffness and armature, each affine body's density (kg/m^3)
        and orthogonality stiffness (Pa), gravity's components, friction and dhat; lower bounds 0 but for the
        skeletons' off-diagonal inertias, centres of mass and gravity."""
        from rigidiff.parameters import Parameters

        rows, _ = self._parameter_table()
        inner = None if self._articulated is None else self._articulated.parameters()
        values, lower = [], []
        for name, group, owner in rows:
            if owner == _SKELETON:
                values.append(inner[name])
                lower.append(inner.lower[inner.index(name)])
                continue
            if owner is not None:
                values.append(self._body_parameters[owner][group])
            elif group == "gravity":
                values.append(self.gravity["xyz".index(name[-1])])
            else:
                values.append(getattr(self, group))
            lower.append(-np.inf if group == "gravity" else 0.0)
        n = len(values)
        return Parameters(tuple(row[0] for row in rows), np.array(values, dtype=float), np.array(lower),
                          np.full(n, np.inf))

    def set_parameters(self, values, check_inertia: bool = True) -> None:
        """Set physical parameters: a full vector ordered as ``parameters().names``, or a {name: value} dict of some
        of them. The skeletons' are written into their bodies and joints as the lcp world's set_parameters writes
        them (``check_inertia`` as there) and recompiled, a body's density and stiffness change its mass matrix and
        orthogonality energy, and gravity, friction and dhat set the world's; the state is kept. Every value is
        checked before any is set: UnknownNameError for an unknown name, ValueError naming the parameter for a value
        that is not finite or out of range (a density, stiffness or dhat <= 0, a negative friction, mass or passive
        coefficient, an inertia that is not positive semi-definite)."""
        updates = parameter_updates(values, self.parameters().names)
        rows = {name: (group, owner) for name, group, owner in self._parameter_table()[0]}
        skeleton, bodies, world = {}, {}, {}
        for name, value in updates.items():
            group, owner = rows[name]
            if owner == _SKELETON:
                skeleton[name] = value
            elif owner is not None:
                bodies.setdefault(owner, {})[group] = as_scalar(value, f"parameter {name!r}", minimum=0.0, strict=True)
            else:
                world[name] = as_scalar(value, f"parameter {name!r}", minimum=None if group == "gravity" else 0.0,
                                        strict=group == "dhat")
        if skeleton:  # the lcp world checks every value before it writes any
            self._articulated.set_parameters(skeleton, check_inertia)
            self._bw_update_skeletons(self._articulated)  # the same joints and surfaces
        for body, changes in bodies.items():
            fields = {**self._body_parameters[body], **changes}
            self._bw_set_body_parameters(self._names.index(body), fields["density"], fields["stiffness"])
            self._body_parameters[body] = fields
        gravity = self.gravity
        for name, value in world.items():
            if name.startswith("gravity_"):
                gravity["xyz".index(name[-1])] = value
            else:
                setattr(self, name, value)
        self.gravity = gravity

    def _resolve_wrt(self, wrt) -> tuple:
        """(names, C): the names of a wrt specification in parameters().names order, and the (core parameters,
        names) matrix taking the core's derivatives to theirs."""
        rows, C = self._parameter_table()
        if wrt is None:
            return (), C[:, :0]
        chosen = set()
        for item in wrt_entries(wrt):
            hits = [k for k, (name, group, _) in enumerate(rows)
                    if item in ("all", name, group) or name.startswith(item + "/")]
            if not hits:
                raise UnknownNameError(unknown_message(item, [row[0] for row in rows]) +
                                       f"; groups: {list(GROUPS)} or 'all'; a body's or joint's name selects its own")
            chosen.update(hits)
        idx = sorted(chosen)
        return tuple(rows[k][0] for k in idx), C[:, idx]

    # ------------------------------------------------------------------ one step
    def step_jacobians(self, q, v, tau=None, wrt=None):
        """The step and its Jacobians, by the implicit function theorem at the converged Newton solution q'.

        There the incremental potential is stationary, so with H its exact Hessian at q' (mass,
        orthogonality, barrier and friction terms, not projected) and C the derivative of the friction's
        gradient with respect to the start state (through its slip and through the normal forces, closest
        points and tangents frozen there): dq'/dq = H^-1 (M - C), dq'/dv = dt H^-1 M, dq'/dtau = dt^2 H^-1,
        dq'/dtheta = -H^-1 dr/dtheta, and v' = (q' - q) / dt. The barrier stiffness is held fixed (the step
        keeps it piecewise constant). As accurate as the Newton solve: tighten newton_tolerance (e.g. 1e-10)
        for derivatives to ~1e-6. A static mesh's coordinates are inputs but not unknowns: its rows are
        q' = q and v' = 0, and its columns say how moving it pushes the bodies.

        With skeletons H also holds their M(q) + dt D + dt^2 K, the joint-limit barrier's exact second derivative
        and the curvature of the link surfaces' pose maps against the contact forces on them; the start state
        enters through M(q) and the bias forces (RNEA derivatives) and through the link surfaces' friction
        frames, and a torque clipped to its joint's effort limit has zero derivative. With free or ball joints
        (floating bases) q's perturbations and changes are in the tangent: q (+) e with SE(3)'s exponential, q'
        measured by difference(q', q'_perturbed), as the lcp world's step_jacobians take them (docs/affine.md,
        "Floating bases"); dq_dq and its kin are then (nv, nv) while q has nq entries.

        Args:
            q, v: the start state (nq,), (nv,).
            tau: generalised forces (nv,), zero if None.
            wrt: parameters to differentiate with respect to as well (see parameters(); a name, a group
                "inertia", "damping", "stiffness", "armature", "density", "gravity", "friction" or "dhat", a
                body's or joint's name, "all", or a list), None for none.
        Returns a StepJacobians (q_next, v_next, dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau; each (nv, nv)),
        with parameter_names, dq_dp and dv_dp (nv, n_params) for wrt.
        """
        from rigidiff.jacobians import StepJacobians

        names, C = self._resolve_wrt(wrt)
        tau = np.zeros(self.nv) if tau is None else tau
        qn, vn, J, P = self._bw_step_jacobians(self._affine_state(q, "q"), v, tau)
        if wrt is None:
            return StepJacobians(qn, vn, *J)
        return StepJacobians(qn, vn, *J, parameter_names=names, dq_dp=P[0] @ C, dv_dp=P[1] @ C)

    def step_vjp(self, q, v, tau, dL_dq_next, dL_dv_next, wrt=None):
        """Gradients of a loss L(q_next, v_next) of one step with respect to q, v, tau and the parameters of wrt
        (as in step_jacobians) from the cotangents of q_next and v_next: the transposed Jacobians of
        step_jacobians times them, with one solve by the Hessian's factors and no Jacobian formed; dL_dq_next (nv,)
        is the cotangent of q_next in the tangent (as step_jacobians' rows). Returns
        Gradients (q, v, tau, parameters, parameter_names, q_next, v_next); ``.parameter(name)`` reads one."""
        from rigidiff.jacobians import Gradients

        names, C = self._resolve_wrt(wrt)
        tau = np.zeros(self.nv) if tau is None else tau
        dL_dq_next = as_array(dL_dq_next, (self.nv,), "dL_dq_next")
        dL_dv_next = as_array(dL_dv_next, (self.nv,), "dL_dv_next")
        qn, vn, gq, gv, gt, gp = self._bw_step_vjp(self._affine_state(q, "q"), v, tau, dL_dq_next, dL_dv_next)
        return Gradients(gq, gv, gt, gp @ C, names, qn, vn)

    # ------------------------------------------------------------------ rollouts
    def rollout(self, q0, v0, taus, record: bool = False):
        """T steps from (q0, v0) under the generalised forces taus (T, nv): Q (T+1, nq) and V (T+1, nv),
        starting with q0 and v0; with record=True a Trajectory holding them (traj.q, traj.v, traj.tau) whose
        ``backward(dL_dQ, dL_dV, wrt=...)`` runs the reverse pass (each step linearised at its recorded
        solution, not solved again)."""
        from rigidiff.trajectory import Trajectory

        taus = as_array(taus, (-1, self.nv), "taus")
        Q, V = np.empty((len(taus) + 1, self.nq)), np.empty((len(taus) + 1, self.nv))
        Q[0], V[0] = as_array(q0, (self.nq,), "q0"), as_array(v0, (self.nv,), "v0")
        # each step's barrier stiffness at its start (the friction's) and end: the reverse pass holds them
        kappas = np.empty((len(taus), 2))
        for t, tau in enumerate(taus):
            try:
                Q[t + 1], V[t + 1] = self.step(Q[t], V[t], tau)
            except ValueError as exc:  # the start state is the caller's q0, v0; later ones come from the steps
                raise ValueError(f"rollout step {t}{' (from q0, v0)' if t == 0 else ''}: {exc}") from None
            stats = self._bw_stats()
            kappas[t] = stats[14], stats[1]
        if not record:
            return Q, V
        return Trajectory(self, Q, V, taus.copy(), modes=(kappas, self._signature()))

    def _signature(self) -> tuple:
        """What the steps' linearisations depend on beyond the recorded states."""
        return (self.nq, tuple(self.parameters().values.tolist()), tuple(np.asarray(self.gravity).tolist()),
                self.friction_velocity, self.joint_limits)

    def _rollout_backward(self, traj, dL_dQ, dL_dV, wrt, coordinates: bool = False,
                          explore_contact_modes: bool = False):
        """Trajectory.backward of a barrier world: q's coordinates are its tangent space (coordinates changes
        nothing) and there are no contact modes to explore (the barrier is smooth)."""
        from rigidiff.jacobians import Gradients

        kappas, signature = traj._modes
        if signature != self._signature():
            raise RuntimeError("the world changed (its bodies, parameters, gravity, friction_velocity or joint_limits) "
                               "since the rollout was recorded; record it again")
        names, C = self._resolve_wrt(wrt)
        T = len(traj)
        GQ = np.zeros((T + 1, self.nv)) if dL_dQ is None else as_array(dL_dQ, (T + 1, self.nv), "dL_dQ")
        GV = np.zeros((T + 1, self.nv)) if dL_dV is None else as_array(dL_dV, (T + 1, self.nv), "dL_dV")
        gq, gv, gtaus, gp = self._bw_rollout_backward(traj.q, traj.v, traj.tau, kappas, GQ, GV)
        return Gradients(gq, gv, gtaus, gp @ C, names)

"""The World's derivative methods: parameters, step Jacobians, the inverse-dynamics regressor and
reverse mode (step_vjp, recorded rollouts). Mixed into rigidiff.World.

Cotangents and gradients of configurations are in the tangent space (nv entries, as the rows of
step_jacobians) unless ``coordinates=True``, which takes and returns gradients with respect to the nq
coordinates of q (quaternions normalised: the gradient of f(normalise(q))).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rigidiff._validate import as_array, as_bool, as_scalar, as_threads
from rigidiff.errors import UnknownNameError
from rigidiff.inertia import Inertia
from rigidiff.jacobians import Gradients, StepJacobians
from rigidiff.parameters import (
    CONTACT_FIELDS,
    GROUPS,
    INERTIAL_FIELDS,
    JOINT_FIELDS,
    ParameterLayout,
    Parameters,
    _from6,
    _sym6,
    group_of,
    inertial_parameter_jacobian,
    selection_map,
    standard_parameters,
    theta_transform_matrix,
    unknown_message,
    wrt_entries,
)
from rigidiff.trajectory import Trajectory

__all__ = ["GradientMethods"]


def _inertia10_placed(I: Inertia, pose, own: bool):
    """The core's 10 numbers of inertia I placed by pose in its joint frame (the arithmetic of
    Inertia.transformed, without its checks); a joint's own body is in the joint frame already."""
    if own:
        return np.concatenate([[I.mass], I.com, _sym6(I.rotational_inertia)])
    R = pose.rotation
    return np.concatenate([[I.mass], pose.apply(I.com), _sym6(R @ I.rotational_inertia @ R.T)])


class GradientMethods:
    """Derivative methods of rigidiff.World (see the module docstring)."""

    # ------------------------------------------------------------------ layout
    def _parameter_layout(self) -> ParameterLayout:
        self._ensure_compiled()
        if getattr(self, "_param_layout", None) is not None:
            return self._param_layout
        names, kinds, body_joint, body_pose, bodies = [], [], [], [], []
        display = self.body_names
        # a particle has a mass only: no rotation, no joint damping, stiffness or armature
        particles = {id(p.skeleton) for p in self._particle_sets}
        for f, (sk, body) in enumerate(self._frames):
            j, pose = self._frame_support[f]
            if j == 0:
                continue  # welded to the world: no effect on the dynamics
            slot = len(bodies)
            bodies.append(body)
            body_joint.append(j)
            body_pose.append(pose)
            for field in INERTIAL_FIELDS[:1] if id(sk) in particles else INERTIAL_FIELDS:
                names.append(f"{display[f]}/{field}")
                kinds.append(("body", slot, field))
        moving_joints = [(sk, b) for sk, b, _, _ in self._joint_table if b.joint.nv > 0]
        for field in JOINT_FIELDS:
            for jn, (sk, _) in zip(self.joint_names, moving_joints):
                if id(sk) in particles:
                    continue
                info = self.joint(jn)
                for k in range(info.nv):
                    names.append(f"{jn}/{field}" if info.nv == 1 else f"{jn}/{field}_{k}")
                    kinds.append(("joint", info.v_index + k, field))
        for axis, c in enumerate("xyz"):
            names.append(f"gravity_{c}")
            kinds.append(("gravity", axis))
        shape_names = self._geometry_parameter_names()
        for field in CONTACT_FIELDS:
            for g, name in enumerate(shape_names):
                names.append(f"{name}/{field}")
                kinds.append(("contact", g, field))
        layout = ParameterLayout(tuple(names), kinds, body_joint, body_pose, self._core_njoints, self.nv,
                                 len(shape_names))
        self._param_layout = layout
        self._param_bodies = bodies
        self._param_transforms = [theta_transform_matrix(T.rotation, T.translation) for T in body_pose]
        self._param_maps = {}
        self._param_body_jac = None
        return layout

    def _body_jacobians(self) -> list:
        """Per parameter body: d(joint-frame standard parameters) / d(its named parameters), (10, 10)."""
        if self._param_body_jac is None:
            self._param_body_jac = [T @ inertial_parameter_jacobian(b.inertia.mass, b.inertia.com)
                                    for T, b in zip(self._param_transforms, self._param_bodies)]
        return self._param_body_jac

    def _resolve_wrt(self, wrt) -> list[int]:
        """Indices into parameters().names of a wrt specification, in names order."""
        layout = self._parameter_layout()
        if wrt is None:
            return []
        chosen = set()
        for item in wrt_entries(wrt):
            if item == "all":
                chosen.update(range(len(layout.names)))
            elif item in GROUPS:
                for i, kind in enumerate(layout.kinds):
                    if group_of(kind) == item:
                        chosen.add(i)
            elif item in layout.names:
                chosen.add(layout.names.index(item))
            else:
                prefix = [i for i, n in enumerate(layout.names) if n.startswith(item + "/")]
                if not prefix:
                    raise UnknownNameError(unknown_message(item, layout.names) + f"; groups: {sorted(GROUPS)} or "
                                           "'all'; a body or joint name selects all of its own")
                chosen.update(prefix)
        return sorted(chosen)

    def _selection(self, wrt):
        """(indices, core groups, sparse core->selected map), cached per wrt while parameters are unchanged."""
        idx = self._resolve_wrt(wrt)
        key = tuple(idx)
        hit = self._param_maps.get(key)
        if hit is None:
            groups, M = selection_map(self._param_layout, idx, self._body_jacobians())
            hit = (idx, groups, M)
            self._param_maps[key] = hit
        return hit

    def _invalidate_parameters(self):
        self._changed()
        self._param_layout = None
        self._param_body_jac = None
        self._param_maps = {}

    def _quaternion_slices(self) -> list[tuple[int, int]]:
        """(start, end) of every quaternion in q (ball joints, and the rotation of free joints)."""
        self._ensure_compiled()
        out = []
        for _, body, qi, _ in self._joint_table:
            if body.joint.type == "ball":
                out.append((qi, qi + 4))
            elif body.joint.type == "free":
                out.append((qi + 3, qi + 7))
        return out

    # ------------------------------------------------------------------ parameters
    def parameters(self) -> Parameters:
        """The world's physical parameters as one named vector (see rigidiff.parameters for the names)."""
        layout = self._parameter_layout()
        values, lower, upper = [], [], []
        g = self.gravity
        dofs = self._dof_joints()  # one pass over the joints, not one per parameter (finite differences call often)
        inertias = {}  # slot -> (mass, com, rotational inertia), each read once
        for kind in layout.kinds:
            if kind[0] == "body":
                if kind[1] not in inertias:
                    I = self._param_bodies[kind[1]].inertia
                    inertias[kind[1]] = (I.mass, I.com, I.rotational_inertia)
                mass, com, rot = inertias[kind[1]]
                field = kind[2]
                if field == "mass":
                    values.append(mass)
                elif field.startswith("com_"):
                    values.append(com["xyz".index(field[-1])])
                else:
                    a, b = ("xyz".index(field[-2]), "xyz".index(field[-1]))
                    values.append(rot[a, b])
                diagonal = field == "mass" or (field.startswith("inertia_") and field[-1] == field[-2])
                lower.append(0.0 if diagonal else -np.inf)
            elif kind[0] == "joint":
                joint, k = dofs[kind[1]]
                values.append(float(getattr(joint, kind[2])[k]))
                lower.append(0.0)
            elif kind[0] == "contact":
                values.append(float(getattr(self._geometry_shapes[kind[1]], kind[2])))
                lower.append(0.0)
            else:
                values.append(g[kind[1]])
                lower.append(-np.inf)
            upper.append(1.0 if kind[0] == "contact" and kind[2] == "restitution" else np.inf)
        arrs = [np.array(x, dtype=float) for x in (values, lower, upper)]
        for a in arrs:
            a.flags.writeable = False
        return Parameters(layout.names, *arrs)

    def _dof_joints(self) -> dict:
        """{velocity coordinate: (Joint object, its dof index)} of every joint dof."""
        return {vi + k: (body.joint, k) for _, body, _, vi in self._joint_table for k in range(body.joint.nv)}

    def set_parameters(self, values, check_inertia: bool = True) -> None:
        """Set physical parameters: a full vector ordered as ``parameters().names``, a {name: value}
        dict of some of them, or a Parameters object (as ``parameters()`` returns it, or a subset of one). The new values are written into the skeletons' bodies and joints (so the
        world and its skeletons stay in agreement) and into the compiled model; the state is kept.

        Raises ValueError (naming the parameter) for unknown names, non-finite values, a negative mass
        (a particle's must be > 0) or passive coefficient, or an inertia that is not positive
        semi-definite (the triangle inequalities are not enforced here). ``check_inertia=False``
        accepts rotational inertias that are not positive semi-definite: the dynamics stay defined,
        which finite differences at the edge of the physical set (a body with zero inertia) rely on;
        such a model is not physical.
        """
        with self._core_changing():  # no rollout in another thread sees half of the new values
            self._set_parameters(values, check_inertia)

    def _set_parameters(self, values, check_inertia: bool) -> None:
        layout = self._parameter_layout()
        self._changed()
        if isinstance(values, Parameters):
            values = dict(zip(values.names, values.values.tolist()))
        if isinstance(values, dict):
            updates = {}
            if getattr(self, "_param_index", (None,))[0] is not layout:  # name -> index, once per layout
                self._param_index = (layout, {name: i for i, name in enumerate(layout.names)})
            index = self._param_index[1]
            for name, val in values.items():
                if name not in index:
                    raise UnknownNameError(unknown_message(name, layout.names))
                updates[index[name]] = val
        else:
            arr = as_array(values, (len(layout.names),), "parameter values")
            updates = dict(enumerate(arr.tolist()))
        new_inertia, joint_values, contact_values, gravity = {}, {}, {}, None
        mass_index = {}  # body slot -> its mass parameter's index (the messages name it)
        for i, val in updates.items():
            val = as_scalar(val, f"parameter {layout.names[i]!r}")  # a real number: no strings, no complex
            kind = layout.kinds[i]
            if kind[0] == "body":
                slot = kind[1]
                if slot not in new_inertia:
                    I = self._param_bodies[slot].inertia
                    new_inertia[slot] = [I.mass, I.com.copy(), _sym6(I.rotational_inertia)]
                entry, field = new_inertia[slot], kind[2]
                if field == "mass":
                    entry[0] = val
                    mass_index[slot] = i
                elif field.startswith("com_"):
                    entry[1]["xyz".index(field[-1])] = val
                else:
                    entry[2][INERTIAL_FIELDS.index(field) - 4] = val
            elif kind[0] == "joint":
                if val < 0:
                    raise ValueError(f"parameter {layout.names[i]!r} must be >= 0, got {val}")
                joint_values[(kind[1], kind[2])] = val
            elif kind[0] == "contact":
                top = 1.0 if kind[2] == "restitution" else np.inf
                if not 0.0 <= val <= top:
                    raise ValueError(f"parameter {layout.names[i]!r} must be in [0, {top}], got {val}")
                # only changed values: the parts of a decomposed mesh share one value, and an unchanged
                # part's entry must not undo a change made through another part's
                if val != getattr(self._geometry_shapes[kind[1]], kind[2]):
                    contact_values[(kind[1], kind[2])] = val
            else:
                if gravity is None:
                    gravity = self.gravity
                gravity[kind[1]] = val
        built = {}
        for slot, (m, c, i6) in new_inertia.items():
            body = self._param_bodies[slot]
            if m < 0:
                raise ValueError(f"body {body.name!r}: mass must be >= 0, got {m}")
            owner = next((p for p in getattr(self, "_particle_sets", ()) if body in p.skeleton.bodies), None)
            if m == 0 and owner is not None:  # a point mass has no other inertia: its step would be singular
                raise ValueError(f"parameter {layout.names[mass_index[slot]]!r}: a particle's mass must be > 0 "
                                 f"(particle set {owner.name!r}), got {m}")
            try:
                built[slot] = (Inertia(m, c, _from6(i6), check_triangle=False) if check_inertia
                               else Inertia._unchecked(m, c, _from6(i6)))
            except ValueError as exc:
                raise ValueError(f"body {body.name!r}: {exc}") from None
        # each changed body's 10 numbers placed in its joint frame, as World._compile gives them; the core
        # sums a joint's bodies again
        placed = {slot: _inertia10_placed(I, layout.body_pose[slot], own=self._param_bodies[slot].joint.nv > 0)
                  for slot, I in built.items()}
        # everything is valid: apply
        for slot, inertia in built.items():
            self._param_bodies[slot].inertia = inertia
        touched_joints = set()
        dofs = self._dof_joints() if joint_values else {}
        for (dof, field), val in joint_values.items():
            joint, k = dofs[dof]
            getattr(joint, field)[k] = val
            touched_joints.add(id(joint))
        for core_j, (joint, dofs) in self._core_joint_objects.items():
            if id(joint) in touched_joints:
                self._set_core_joint_parameters(core_j, joint, dofs)
        for slot, values in placed.items():
            self._core_set_body_inertia(slot, values)
        for g in sorted({g for g, _ in contact_values}):
            old = self._geometry_shapes[g]
            changes = {field: val for (h, field), val in contact_values.items() if h == g}
            self._replace_shape_instance(g, replace(old, **changes))
        if gravity is not None:
            self.gravity = gravity
        if built:
            self._param_body_jac = None
            self._param_maps = {}

    # ------------------------------------------------------------------ regressor
    def _regressor_columns(self) -> tuple[list[int], list[int]]:
        """What the columns of inverse_dynamics_regressor stand for: per parameter body, how many (10, or 1 for a
        particle: its mass; a point mass has no first moment or rotational inertia), then the dofs that have an
        armature parameter (a particle's have none)."""
        layout = self._parameter_layout()
        counts = [0] * len(layout.body_joint)
        for k in layout.kinds:
            if k[0] == "body":
                counts[k[1]] += 1
        return counts, [k[1] for k in layout.kinds if k[0] == "joint" and k[2] == "armature"]

    def regressor_parameters(self) -> Parameters:
        """The parameters theta of inverse_dynamics_regressor: per moving body (as in parameters()) its
        standard inertial parameters in the body frame, "<body>/mass", "<body>/first_moment_x|y|z" (m c)
        and "<body>/inertia_origin_xx|xy|xz|yy|yz|zz" (rotational inertia about the body origin), or for a
        particle its "<particle>/mass" alone, then "<joint>/armature" per dof that has one. The dynamics are
        linear in these."""
        layout = self._parameter_layout()
        counts, _ = self._regressor_columns()
        names, values, masses = [], [], []
        fields = ("mass", "first_moment_x", "first_moment_y", "first_moment_z", "inertia_origin_xx",
                  "inertia_origin_xy", "inertia_origin_xz", "inertia_origin_yy", "inertia_origin_yz",
                  "inertia_origin_zz")
        p = self.parameters()
        mass_names = {k[1]: layout.names[i] for i, k in enumerate(layout.kinds) if k[:1] == ("body",) and k[2] == "mass"}
        for slot, body in enumerate(self._param_bodies):
            prefix = mass_names[slot].rsplit("/", 1)[0]
            masses.append(len(names))
            names += [f"{prefix}/{f}" for f in fields[:counts[slot]]]
            I = body.inertia
            values.append(standard_parameters(I.mass, I.com, I.rotational_inertia)[:counts[slot]])
        arm = [i for i, k in enumerate(layout.kinds) if k[0] == "joint" and k[2] == "armature"]
        names += [layout.names[i] for i in arm]
        values.append(p.values[arm])
        vals = np.concatenate(values) if values else np.zeros(0)
        lower = np.full(len(names), -np.inf)
        lower[masses] = 0.0
        lower[len(names) - len(arm):] = 0.0
        return Parameters(tuple(names), vals, lower, np.full(len(names), np.inf))

    def inverse_dynamics_regressor(self, q, v, a) -> np.ndarray:
        """(nv, len(regressor_parameters())) matrix Y with inverse_dynamics(q, v, a) = Y @ theta, theta =
        regressor_parameters().values (rigid-body terms with gravity, and armature; no external wrenches)."""
        self._parameter_layout()
        counts, arm_dofs = self._regressor_columns()
        Yj = self._core_regressor(q, v, a)
        layout = self._param_layout
        blocks = [(Yj[:, 10 * (j - 1):10 * j] @ T)[:, :n]
                  for j, T, n in zip(layout.body_joint, self._param_transforms, counts)]
        blocks.append(np.diag(as_array(a, (self.nv,), "a"))[:, arm_dofs])
        return np.hstack(blocks)

    # ------------------------------------------------------------------ kinematic derivatives
    def body_velocity_derivatives(self, q, v, body, frame: str = "world"):
        """Derivatives of a body's spatial velocity (as body_velocities) with respect to q (tangent space)
        and v: (dv_dq, dv_dv), each (6, nv), rows (linear, angular); dv_dv is body_jacobian(q, body, frame).

        dv_dq is also the derivative of the product body_jacobian(q) @ x with respect to q, for x = v.
        With frame="world" the velocity is that of the moving body origin, so dv_dq includes w x dp/dq
        (Pinocchio's LOCAL_WORLD_ALIGNED derivatives hold the origin still and leave that term out).
        """
        return self._core_body_velocity_derivatives(q, v, self.body_index(body), self._frame(frame))

    def body_jacobian_derivative_product(self, q, body, x, frame: str = "world") -> np.ndarray:
        """(6, nv) derivative with respect to q (tangent space) of body_jacobian(q, body, frame) @ x."""
        x = as_array(x, (self.nv,), "x")  # checked here: the core names its vector v
        return self._core_body_velocity_derivatives(q, x, self.body_index(body), self._frame(frame))[0]

    def body_acceleration_derivatives(self, q, v, a, body, frame: str = "world"):
        """Derivatives of a body's spatial acceleration (as body_accelerations: gravity excluded) with
        respect to q (tangent space), v and a: (da_dq, da_dv, da_da), each (6, nv); da_da is the body
        Jacobian."""
        return self._core_body_acceleration_derivatives(q, v, a, self.body_index(body), self._frame(frame))

    def center_of_mass_velocity_derivatives(self, q, v):
        """Derivatives of the centre-of-mass velocity J_com(q) v: (dvcom_dq (3, nv), tangent space, and
        dvcom_dv = center_of_mass_jacobian(q))."""
        return self._core_com_velocity_derivatives(q, v), self.center_of_mass_jacobian(q)

    # ------------------------------------------------------------------ forward mode
    def step_jacobians(self, q, v, tau, wrt=None, f_ext=None) -> StepJacobians:
        """One step (as step()) and its analytic Jacobians.

        Args:
            q, v, tau: the state and the torques.
            f_ext: external body wrenches as in step() (world axes at the body origins; they keep their
                world components while the bodies move, and are held fixed by the derivatives).
            wrt: parameters to differentiate with respect to as well: None (none), "all", a group
                ("inertia", "damping", "stiffness", "armature", "gravity"), a parameter name, a body or
                joint name (all of its parameters), or a list of these. Columns follow parameters().names.
        Returns:
            a StepJacobians with q_next, v_next, dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau (each
            (nv, nv), q in the tangent space), the stacked A (2nv, 2nv) and B (2nv, nv), and for wrt:
            parameter_names, dq_dp and dv_dp (nv, n_params) and their stack P (2nv, n_params). In a world
            with contacts, joint limits or joint friction, ``contacts`` holds the step's contacts and
            the classes of its constraint rows (as ``last_contacts()``).

        Through constraints the Jacobians are those of the step with the class of every constraint row
        held fixed (clamping, at a friction bound, separating: ``contacts.row_classes``), including the
        motion of the contact points, normals and friction directions (docs/contact.md).
        """
        self._ensure_compiled()
        if wrt is None:
            qn, vn, jac = self._core_step_jacobians(q, v, tau, f_ext)
            t = jac.transpose(0, 2, 1)  # the core writes column-major blocks
            return StepJacobians(qn, vn, t[0], t[1], t[2], t[3], t[4], t[5], _contacts=self._step_contacts())
        idx, groups, M = self._selection(wrt)
        qn, vn, jac, pjac = self._core_step_param_jacobians(q, v, tau, groups, f_ext)
        nv = self.nv
        P = (M.T @ pjac.reshape(2 * nv, -1).T).T if idx else np.zeros((2 * nv, 0))
        names = tuple(self._param_layout.names[i] for i in idx)
        t = jac.transpose(0, 2, 1)
        return StepJacobians(qn, vn, t[0], t[1], t[2], t[3], t[4], t[5], parameter_names=names,
                             dq_dp=np.ascontiguousarray(P[:nv]), dv_dp=np.ascontiguousarray(P[nv:]),
                             _contacts=self._step_contacts())

    def step_jacobians_batch(self, qs, vs, taus, threads: int | None = None) -> StepJacobians:
        """step_jacobians at N states at once: rows of qs (N, nq), vs (N, nv), taus (N, nv), on ``threads``
        C++ threads (default: every core, or RIGIDIFF_THREADS) with the GIL released.

        Row i equals, bit for bit, ``step_jacobians(qs[i], vs[i], taus[i])`` from a world whose last step
        did not end at (qs[i], vs[i]), whatever the thread count: every row solves its contacts cold, as
        step_batch does (a chain of single calls warm-starts where rows continue each other, so where
        several contact modes are valid it may keep another one; docs/contact.md). Changing this world
        from another thread meanwhile raises RuntimeError (docs/reliability.md).

        Returns:
            a StepJacobians whose arrays have a leading batch dimension: q_next (N, nq), v_next (N, nv),
            dq_dq ... dv_dtau (N, nv, nv), A (N, 2nv, 2nv), B (N, 2nv, nv); ``contacts`` is None.
        """
        self._ensure_compiled()
        qn, vn, jac = self._core_step_jacobians_batch(qs, vs, taus, as_threads(threads))
        t = jac.transpose(1, 0, 3, 2)  # the core writes column-major blocks
        return StepJacobians(qn, vn, t[0], t[1], t[2], t[3], t[4], t[5])

    def _step_contacts(self):
        """The step's contacts for StepJacobians: raw arrays now, objects when asked for."""
        return (self, self._last_contacts_raw()) if self._core_is_constrained() else None

    # ------------------------------------------------------------------ reverse mode
    def step_vjp(self, q, v, tau, dL_dq_next, dL_dv_next, wrt=None, coordinates: bool = False,
                 f_ext=None, explore_contact_modes: bool = False) -> Gradients:
        """Gradients of a loss L(q_next, v_next) of one step with respect to q, v, tau and parameters,
        from the cotangents of q_next and v_next. Equals J^T g for the Jacobians of step_jacobians. In
        O(n) without forming any Jacobian when the step solves no constraint; through contacts, limits
        and joint friction it pulls the cotangent through the clamped rows' factors, still without
        forming the Jacobians (parameters and explored contact modes included).

        Args:
            dL_dq_next: (nv,) cotangent of q_next in the tangent space, or (nq,) coordinate gradient
                with coordinates=True. dL_dv_next: (nv,).
            wrt: parameters, as in step_jacobians (None: no parameter gradients).
            coordinates: take and return configuration gradients in q's coordinates.
            f_ext: external body wrenches as in step_jacobians.
            explore_contact_modes: DiffDART's complementarity-aware backward (docs/contact.md): also
                differentiate the contact mode the loss asks for (a contact whose impulse would lower
                the loss separates, the others clamp) and keep whichever mode gives the larger gradients
                with respect to v and tau. It lets a loss lift a resting body off the ground, where
                the solved mode's gradient is zero. Parameter gradients always use the solved mode.
        Returns:
            Gradients with q, v, tau, parameters (ordered as parameter_names) and q_next, v_next.
        """
        self._ensure_compiled()
        idx, groups, M = self._selection(wrt) if wrt is not None else ([], 0, None)
        if coordinates:
            qn, _ = self.step(q, v, tau, f_ext)
            gq = self._core_tangent_gradients(qn[None], as_array(dL_dq_next, (self.nq,), "dL_dq_next")[None])[0]
        else:
            gq = dL_dq_next
        qn, vn, gs, gt, gp = self._core_step_vjp(q, v, tau, gq, dL_dv_next, groups, f_ext,
                                                 bool(explore_contact_modes))
        nv = self.nv
        gq0 = gs[:nv]
        if coordinates:
            gq0 = self._core_coordinate_gradients(np.asarray(q, dtype=float)[None], gq0[None])[0]
        params = M.T @ gp if idx else np.zeros(0)
        names = tuple(self._param_layout.names[i] for i in idx)
        return Gradients(gq0, gs[nv:], gt, params, names, q_next=qn, v_next=vn)

    def rollout(self, q0, v0, taus, record: bool = False):
        """T steps in one C++ call, with the GIL released (changing this world from another thread
        meanwhile raises RuntimeError: docs/reliability.md).

        Args:
            q0: (nq,), v0: (nv,), taus: (T, nv) torques per step.
            record: return a Trajectory that can run the reverse pass (traj.backward).
        Returns:
            Q (T+1, nq) and V (T+1, nv), starting with q0 and v0; with record=True a Trajectory holding
            them (traj.q, traj.v, traj.tau).
        """
        if not as_bool(record, "record"):
            return super().rollout(q0, v0, taus)
        self._record_modes = True  # each step's contact mode, re-solved by the reverse pass
        try:
            Q, V = super().rollout(q0, v0, taus)
        finally:
            self._record_modes = False
        rows = self._last_rollout_rows
        constrained = [] if rows is None else np.flatnonzero(rows).tolist()
        modes = None if rows is None else (rows.copy(), self._last_rollout_modes)
        self._last_rollout_modes = None
        return Trajectory(self, Q, V, np.array(taus, dtype=float, copy=True), constrained, modes)

    def _rollout_backward(self, traj: Trajectory, dL_dQ, dL_dV, wrt, coordinates: bool,
                          explore_contact_modes: bool = False) -> Gradients:
        nv, T = self.nv, traj.tau.shape[0]
        if dL_dQ is None:
            GQ = np.zeros((T + 1, nv))
        elif coordinates:
            GQ = self._core_tangent_gradients(traj.q, as_array(dL_dQ, (T + 1, self.nq), "dL_dQ"))
        else:
            GQ = dL_dQ
        GV = np.zeros((T + 1, nv)) if dL_dV is None else dL_dV
        idx, groups, M = self._selection(wrt) if wrt is not None else ([], 0, None)
        rows, modes = traj._modes if traj._modes is not None else (None, None)
        gtaus, gs, gp = self._core_rollout_backward(traj.q, traj.v, traj.tau, GQ, GV, groups,
                                                    bool(explore_contact_modes), rows, modes)
        gq0 = gs[:nv]
        if coordinates:
            gq0 = self._core_coordinate_gradients(traj.q[:1], gq0[None])[0]
        params = M.T @ gp if idx else np.zeros(0)
        names = tuple(self._param_layout.names[i] for i in idx)
        return Gradients(gq0, gs[nv:], gtaus, params, names)

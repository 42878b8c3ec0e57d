"""Contacts of a world: the collision model built from the bodies' shapes, and ``World.collide``.

    contacts = world.collide(q)
    contacts.points, contacts.normals, contacts.distances, contacts.body_a, contacts.types

Conventions (docs/architecture.md): each contact's normal is a unit vector from body B to body A, its
distance is signed (< 0 in penetration) and its point is the midpoint of the two witness points. Each
contact names the features that touch ("point_face": a vertex or sphere of A on a face of B, ...), from
which its point and normal follow as functions of the two body poses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from rigidiff._validate import as_scalar
from rigidiff.collision import check_reach, pose_data, shape_data, triangle_mesh_data
from rigidiff.shapes import Mesh
from rigidiff.warm_start import WarmStart

__all__ = ["ContactSet", "StepContacts", "ContactOptions", "CONTACT_TYPES"]

#: contact types in the order of the core's codes (collision/feature.hpp)
CONTACT_TYPES = ("point_face", "face_point", "point_point", "point_segment", "segment_point", "segment_segment",
                 "face_edge", "edge_face")


@dataclass(frozen=True)
class ContactSet:
    """Contacts of one collision query (n contacts; arrays are row-aligned).

    Attributes:
        points: (n, 3) world contact points.
        normals: (n, 3) world unit normals, from body B to body A.
        distances: (n,) signed distances (< 0: penetration).
        body_a, body_b: body names as in ``World.body_names``.
        shape_a, shape_b: shape names.
        types: feature pair of each contact, one of CONTACT_TYPES.
        geometry_a, geometry_b: (n,) indices of the two shapes in the world's collision model.
    """

    points: np.ndarray
    normals: np.ndarray
    distances: np.ndarray
    body_a: list
    body_b: list
    shape_a: list
    shape_b: list
    types: list
    geometry_a: np.ndarray
    geometry_b: np.ndarray

    def __len__(self) -> int:
        return len(self.distances)

    def __repr__(self) -> str:
        rows = [f"ContactSet({len(self)} contacts)"]
        for k in range(len(self)):
            rows.append(f"  {self.body_a[k]} / {self.body_b[k]}: {self.types[k]}, distance {self.distances[k]:.3g}, "
                        f"point {np.round(self.points[k], 4).tolist()}, normal {np.round(self.normals[k], 4).tolist()}")
        return "\n".join(rows)


#: combination rules of two shapes' coefficients (codes of the core)
COMBINE = {"geometric_mean": 0, "min": 1, "max": 2, "mean": 3}
_COMBINE_NAMES = {code: name for name, code in COMBINE.items()}
LCP_CLASSES = ("separating", "clamping", "upper_bound", "lower_bound")
ROW_KINDS = ("normal", "friction", "lower_limit", "upper_limit", "joint_friction")
LCP_SOLVERS = ("none", "warm_start", "pivoting", "projected_conjugate_gradients", "projected_gauss_seidel",
               "approximate_friction", "frictionless_pgs")


@dataclass(frozen=True)
class ContactOptions:
    """Settings of the constraint solve (see ``World.contact_options``)."""

    friction_directions: int = 2
    friction_combine: str = "geometric_mean"
    restitution_combine: str = "max"
    restitution_threshold: float = 0.1
    erp: float = 0.0
    penetration_allowance: float = 1e-4
    max_correction_velocity: float = 1.0
    joint_limits: bool = False
    joint_friction: bool = False
    tolerance: float = 1e-6
    margin: float = 0.0
    max_penetration: float = 0.03
    bounce_correction: bool = True
    warm_start: bool = True
    speculative: bool = True
    rest_depth: float = 5e-5


@dataclass(frozen=True)
class StepContacts(ContactSet):
    """Contacts of the last step with their impulses (N s).

    Attributes (besides those of ContactSet):
        normal_impulses: (n,) impulse along each normal (>= 0).
        friction_impulses: (n, 3) friction impulse of each contact, world axes.
        classes: per contact, the class of its normal row: "clamping" (pushing), "separating", ...
        solver: the solver stage that produced the impulses ("warm_start", "pivoting", ...); "none" when
            the step solved no constraint, or when an island of rows defeated every stage (its impulses
            are then zero: its bodies moved without contact forces, and may pass through each other).
            "approximate_friction": no stage met the tolerance on some island, which kept the closest
            answer with friction (within 100 times the tolerance) rather than dropping friction.
        friction_dropped: True if friction was dropped to find a solution.
        row_kinds: the kind of every constraint row of the step, in row order: "normal", "friction"
            (contact rows), "lower_limit", "upper_limit" (joint limits) or "joint_friction".
        row_index: (m,) the contact of each contact row, the velocity index of each joint row.
        row_classes: the LCP class of every row ("separating", "clamping", "upper_bound",
            "lower_bound"): the contact mode the step's Jacobians hold fixed.
    """

    normal_impulses: np.ndarray = None
    friction_impulses: np.ndarray = None
    classes: list = None
    solver: str = "none"
    friction_dropped: bool = False
    row_kinds: list = None
    row_index: np.ndarray = None
    row_classes: list = None


class ContactMethods:
    """Collision queries and constraint settings of rigidiff.World (mixed into it)."""

    def contact_options(self, **changes) -> ContactOptions:
        """Read or change the contact settings; returns the settings in force.

        Keywords:
            friction_directions: 2 (a four-sided friction pyramid) or 4 (eight-sided).
            friction_combine: how two shapes' friction coefficients combine: "geometric_mean" (default),
                "min", "max" or "mean".
            restitution_combine: the same for restitution (default "max").
            restitution_threshold: approach speed (m/s) below which contacts do not bounce (0.1).
            erp: fraction of a penetration removed per step (0: off, the default); penetration_allowance
                (m) is left uncorrected and max_correction_velocity (m/s) caps the correction.
            joint_limits: joint position limits act as unilateral constraints (False by default: a
                loaded robot then steps like Pinocchio's and MuJoCo's unconstrained dynamics).
            joint_friction: joint Coulomb friction (the joints' ``friction``) acts as a boxed constraint
                (False by default).
            tolerance: LCP validity tolerance (relative, 1e-6).
            margin: contacts are detected while their distance is below this (m, 0) plus, with
                ``speculative``, the distance the two shapes can cover in the step; a contact with a
                positive gap lets the gap close within the step, no more.
            speculative: speculative contacts (True, the default): each step looks for contacts within
                dt times a bound on the speed of each shape's points (from the velocity the step would
                reach without contact), so that a falling or thrown body stops at the surface it reaches
                instead of sinking into it by up to one step's travel, and a bouncing one bounces where it
                reaches the surface. Resting bodies then rest at the surface whatever they fell from.
                False detects contacts only within ``margin``.
            rest_depth: a contact with a gap d above rest_depth / 50 lets it close and go this much
                further (m, 5e-5; target -(d + rest_depth) / dt); a closer one holds like a closed
                contact. A body that reaches a surface thus rests rest_depth inside it, and one placed
                at zero gap rests there: both inside their contact mode, where the step is smooth, not
                at the switch between the two targets (a gap of rest_depth / 50), where the step and
                its Jacobians jump. Keep it below ``penetration_allowance`` when erp > 0.
            max_penetration: a step whose deepest contact is deeper than this (m, 0.03) warns once
                (RuntimeWarning). Deep contacts are always solved, never dropped.
            bounce_correction: position Jacobians of a bouncing step follow the bounce's time of impact
                (True, the default; docs/contact.md), so that lowering a ball that bounces raises it
                after the bounce; False gives the exact derivatives of the discrete step.
            warm_start: a step that continues the previous one (its q, v are bitwise the q_next,
                v_next that step returned, as in a loop of step() or a rollout) first tries the
                previous step's contact mode (True, the default: one small solve instead of the
                pivoting solver when the mode persists); any other step solves cold, so a step never
                depends on unrelated calls before it. Along a chain, a problem with several valid
                modes (a box resting on four corners after sliding: its friction rows may stay at
                their bounds) keeps the previous one, so impulses, row classes, Jacobians and, where
                the friction problem has several solutions, velocities depend on the steps before (a
                sliding box coming to rest: about 1e-3 m/s). False makes ``step`` and
                ``step_jacobians`` pure functions of (q, v, tau) along chains too. A recorded
                rollout's backward pass always re-solves each step in its recorded mode.
                ``warm_start()`` / ``set_warm_start()`` save and restore what a chain carries.
        """
        if not changes:  # a read changes nothing (nor the world's change count)
            return self._read_contact_options()
        unknown = set(changes) - set(ContactOptions.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown contact option(s) {sorted(unknown)}; known: "
                             f"{sorted(ContactOptions.__dataclass_fields__)}")
        for key in ("friction_combine", "restitution_combine"):
            if key in changes and changes[key] not in COMBINE:
                raise ValueError(f"{key} must be one of {sorted(COMBINE)}, got {changes[key]!r}")
        if "friction_directions" in changes:
            fd = changes["friction_directions"]
            if isinstance(fd, bool) or not isinstance(fd, (int, np.integer)) or fd not in (2, 4):
                raise ValueError(f"friction_directions must be the int 2 or 4, got {fd!r}")
            changes["friction_directions"] = int(fd)
        for key in ("joint_limits", "joint_friction", "bounce_correction", "warm_start", "speculative"):
            if key in changes:
                if not isinstance(changes[key], (bool, np.bool_)):
                    raise ValueError(f"{key} must be True or False, got {changes[key]!r}")
                changes[key] = bool(changes[key])
        for key in ("restitution_threshold", "erp", "penetration_allowance", "max_correction_velocity", "tolerance",
                    "margin", "max_penetration", "rest_depth"):
            if key in changes:
                changes[key] = as_scalar(changes[key], key, minimum=0.0)
        with self._core_changing():
            o = replace(self._read_contact_options(), **changes)
            self._changed()
            self._core_set_contact_options(o.friction_directions, COMBINE[o.friction_combine],
                                           COMBINE[o.restitution_combine], o.restitution_threshold, o.erp,
                                           o.penetration_allowance, o.max_correction_velocity, o.joint_limits,
                                           o.joint_friction, o.tolerance, o.bounce_correction, o.warm_start,
                                           o.speculative, o.rest_depth, o.margin, o.max_penetration)
        return self._read_contact_options()

    def _read_contact_options(self) -> ContactOptions:
        """The contact settings in force, read from the world's options in the core (their only copy)."""
        flags, values = self._core_contact_options()
        fd, fc, rc, limits, joint_friction, bounce, warm, speculative = (int(f) for f in flags)
        threshold, erp, allowance, max_correction, tolerance, rest_depth, margin, max_penetration = (
            float(x) for x in values)
        return ContactOptions(fd, _COMBINE_NAMES[fc], _COMBINE_NAMES[rc], threshold, erp, allowance, max_correction,
                              bool(limits), bool(joint_friction), tolerance, margin, max_penetration, bool(bounce),
                              bool(warm), bool(speculative), rest_depth)

    # ---------------------------------------------------------------- the warm-start cache
    def warm_start(self) -> WarmStart:
        """The contact warm start as a value: the constraint rows, classes and impulses of the last single
        constrained step (``step``, ``step_jacobians``, ``step_vjp``, ``advance``'s last step) and its end
        state, which the next step uses only if it starts bitwise there (``contact_options(warm_start=...)``).

        Returns:
            a WarmStart (opaque, immutable, picklable); ``set_warm_start`` puts it back, in this world or
            in another with the same model (a ``World._copy()``, a world built the same way).

        Example::

            q1, v1 = world.step(q0, v0, tau0)
            ws = world.warm_start()
            ...                                  # other steps, checks, finite differences
            world.set_warm_start(ws)
            q2, v2 = world.step(q1, v1, tau1)    # as if it had followed the first step at once
        """
        self._ensure_compiled()
        keys, classes, impulses, end = self._core_warm_start()
        return WarmStart(keys, classes, end, self._model_signature(), impulses)

    def set_warm_start(self, warm_start: WarmStart) -> None:
        """Restore a warm start taken by ``warm_start()``: the next single step that starts bitwise at its
        end state is solved exactly as the step taken right after the one that left it.

        Raises:
            ValueError: if ``warm_start`` is not a WarmStart, or was taken from a world with another
                model (other bodies, joints or shapes).
        """
        if not isinstance(warm_start, WarmStart):
            raise ValueError(f"set_warm_start expects a rigidiff.WarmStart (from world.warm_start()), got "
                             f"{type(warm_start).__name__}")
        self._ensure_compiled()
        if warm_start._model != self._model_signature():
            raise ValueError("this warm start was taken from a world with a different model (other bodies, joints "
                             "or shapes); it applies only to worlds with the model of the world that made it")
        self._core_set_warm_start(warm_start._keys, warm_start._classes, warm_start._impulses, warm_start._state)

    def clear_warm_start(self) -> None:
        """Empty the warm start: the next constrained step solves cold, as in a new world."""
        self._core_clear_warm_start()

    def _model_signature(self) -> str:
        """What a warm start's row keys refer to: sizes, bodies, joints and shapes of the compiled model. Kept
        per compiled model (its geometries list is rebuilt by each compile), so that restoring a warm start in
        a control loop costs a comparison, not a hash of the model."""
        cached = getattr(self, "_signature_cache", None)
        if cached is not None and cached[0] is self._geometries:
            return cached[1]
        text = repr((self.nq, self.nv, self.body_names, self.joint_names, self._geometries))
        signature = hashlib.sha256(text.encode()).hexdigest()[:16]
        self._signature_cache = (self._geometries, signature)
        return signature

    def _build_collision(self) -> None:
        """Collision model of the compiled world: one geometry per colliding shape."""
        geometries, shapes, owners = [], [], []
        skeletons = self._compiled_skeletons()
        skeleton_index = {id(sk): i for i, sk in enumerate(skeletons)}
        for frame, (sk, body) in enumerate(self._frames):
            for inst in body.shapes:
                if not inst.collide:
                    continue
                for name, part in _collision_parts(inst):
                    check_reach(part, f"shape {name!r}")  # before any mesh processing
                    if isinstance(part, Mesh) and not part.is_convex:
                        code, params, verts, mesh = triangle_mesh_data(part, f"shape {name!r}")
                    else:
                        (code, params, verts), mesh = shape_data(part, f"shape {name!r}"), None
                    self._core_add_geometry(code, params, verts, frame, skeleton_index[id(sk)],
                                            pose_data(inst.origin, "origin"), inst.friction, inst.restitution,
                                            inst.group, inst.mask, name, mesh)
                    geometries.append((frame, name))
                    shapes.append(inst)
                    owners.append(sk.name)
        for sk in skeletons:
            self._core_set_self_collision(skeleton_index[id(sk)], sk.self_collision)
        self._geometries = geometries
        self._geometry_shapes = shapes
        self._geometry_skeletons = owners
        self._core_finalize_contacts()
        self._changed()

    def _geometry_parameter_names(self) -> list:
        """Per geometry, the name its parameters carry: the shape's, prefixed by its skeleton's where two
        skeletons have shapes of that name."""
        names = [name for _, name in self._geometries]
        counts = {n: names.count(n) for n in names}
        return [n if counts[n] == 1 else f"{sk}/{n}" for n, sk in zip(names, self._geometry_skeletons)]

    def _replace_shape_instance(self, g: int, inst) -> None:
        """Puts a shape instance with new contact coefficients in place of geometry g's (in its body and
        in the collision model)."""
        body = self._frames[self._geometries[g][0]][1]
        old = self._geometry_shapes[g]
        body.shapes[next(i for i, s in enumerate(body.shapes) if s is old)] = inst
        for h, s in enumerate(self._geometry_shapes):  # the parts of a decomposed mesh share one instance
            if s is old:
                self._geometry_shapes[h] = inst
                self._core_set_geometry_coefficients(h, inst.friction, inst.restitution)

    def _contact_set(self, arrays, cls=ContactSet, **extra):
        pts, nrm, dist, ga, gb, types = arrays
        names = self.body_names
        bodies = [names[self._geometries[i][0]] for i in ga], [names[self._geometries[i][0]] for i in gb]
        shapes = [self._geometries[i][1] for i in ga], [self._geometries[i][1] for i in gb]
        return cls(pts, nrm, dist, bodies[0], bodies[1], shapes[0], shapes[1], [CONTACT_TYPES[t] for t in types],
                   np.asarray(ga, dtype=int), np.asarray(gb, dtype=int), **extra)

    def collide(self, q=None) -> ContactSet:
        """Contacts of the world at configuration q (default: the world's current ``q``).

        Pairs tested: shapes on different bodies whose groups and masks match, not both welded to the
        world, and within one skeleton only when its ``self_collision`` is on and the two bodies are not
        parent and child. A resting face gives several contacts (a box on the ground: its 4 corners).
        A contact between a moving and a welded body has the moving body as A.
        """
        self._ensure_compiled()
        q = self.q if q is None else q
        return self._contact_set(self._core_collide(q))

    def last_contacts(self) -> StepContacts:
        """Contacts of the last ``step`` with their impulses (the last step of ``advance``, and the step of
        ``step_jacobians`` or ``step_vjp``, count; ``rollout`` keeps its own); empty before any step."""
        self._ensure_compiled()
        return self._step_contacts_from(self._last_contacts_raw())

    def _last_contacts_raw(self) -> tuple:
        """The last step's contacts, impulses and rows, copied out of the core in two flat buffers (cheap;
        _step_contacts_from builds the StepContacts)."""
        return self._core_last_record()

    def _step_contacts_from(self, raw) -> StepContacts:
        n, m, D, I = raw
        pts, nrm = D[:3 * n].reshape(n, 3), D[3 * n:6 * n].reshape(n, 3)
        dist, fn, ft = D[6 * n:7 * n], D[7 * n:8 * n], D[8 * n:].reshape(n, 3)
        ga, gb, types, classes = I[:n], I[n:2 * n], I[2 * n:3 * n], I[3 * n:4 * n]
        kinds, index, row_classes = I[4 * n:4 * n + m], I[4 * n + m:4 * n + 2 * m], I[4 * n + 2 * m:4 * n + 3 * m]
        status = I[4 * n + 3 * m:]
        return self._contact_set((pts, nrm, dist, ga, gb, types), StepContacts, normal_impulses=fn,
                                 friction_impulses=ft, classes=[LCP_CLASSES[c] for c in classes],
                                 solver=LCP_SOLVERS[status[0]], friction_dropped=bool(status[1]),
                                 row_kinds=[ROW_KINDS[k] for k in kinds], row_index=np.asarray(index, dtype=int),
                                 row_classes=[LCP_CLASSES[c] for c in row_classes])


def _collision_parts(inst) -> list:
    """(geometry name, shape) pairs of a shape instance: a decomposed mesh's convex parts ("name/part0",
    ...), otherwise the shape itself."""
    shape = inst.shape
    if isinstance(shape, Mesh) and shape.decompose:
        return [(f"{inst.name}/part{i}", part) for i, part in enumerate(shape.convex_parts())]
    return [(inst.name, shape)]

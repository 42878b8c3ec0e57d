"""Articulated skeletons in barrier worlds (mixed into rigidiff.BarrierWorld; docs/affine.md, "Skeletons").

A skeleton's generalised coordinates come first in q and v, before the affine bodies (skeletons in the order
they were added). Its model is compiled by an lcp World that holds the skeletons (``_articulated``): the
barrier world's C++ core copies that world's multibody model, and each collision shape of a link becomes a
link surface, a barrier participant placed by forward kinematics (kind Articulated)."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array

from rigidiff._vector_space_skeletons import check_vector_space_skeleton
from rigidiff.errors import UnknownNameError

#: joint types the barrier step integrates on their group (docs/affine.md, "Floating bases", "Planar joints")
FLOATING_JOINTS = ("free", "ball", "planar")

def _check_skeleton(skeleton) -> None:
    """TypeError / ValueError for what a barrier world cannot hold."""
    from rigidiff.shapes import Plane

    def check_shape(body, shape):
        if isinstance(shape, Plane):
            raise ValueError(f"skeleton {skeleton.name!r}: body {body.name!r} has a plane shape; a barrier world's "
                             f"ground is world.add_ground()")

    check_vector_space_skeleton(skeleton, "barrier", check_shape, also=FLOATING_JOINTS)


class SkeletonParticipants:
    """The skeleton half of BarrierWorld: adding skeletons, their layouts and their link surfaces."""

    def _init_skeletons(self) -> None:
        self._skeletons: list = []
        self._articulated = None  # the lcp World that compiles the skeletons
        self._link_meshes: list = []  # per link surface: (frame index, vertices in the body frame, faces)

    @property
    def skeletons(self) -> list:
        """The skeletons of the world, in the order they were added (their coordinates lead q and v)."""
        return list(self._skeletons)

    @property
    def _nq_skeletons(self) -> int:
        return 0 if self._articulated is None else self._articulated.nq

    @property
    def _nv_skeletons(self) -> int:
        return 0 if self._articulated is None else self._articulated.nv

    def add_skeleton(self, skeleton, q=None):
        """Add an articulated skeleton (a robot arm, a legged robot) and return it.

        Its generalised coordinates join q and v before the affine bodies (after the skeletons added before
        it), starting at rest at ``q`` (its nq coordinates; default its neutral configuration, where a floating
        base sits at the world origin); ``world.layout(skeleton.name)`` gives them. Every
        collision shape of its bodies is a barrier participant placed by forward kinematics: it pushes, and is
        pushed by, the affine bodies, static meshes, ground planes and other skeletons' shapes. Shapes of one
        skeleton collide with each other only when its ``self_collision`` is on, and then never those of one link
        (a body welded to another is part of its link) or of a parent link and its child, as in the lcp world.
        A link's mesh may be open, non-manifold or inconsistently wound (the barrier's distances are unsigned);
        its faces without area are left out with a UserWarning naming the shape.
        The step is implicit Euler in the joint coordinates with the joints' damping, stiffness and effort
        limits, and their position limits when ``joint_limits`` is on (docs/affine.md, "Skeletons"). The
        skeleton is compiled when added: later edits to it are not seen.

        Free and ball joints (a floating base: a quadruped, a humanoid, a thrown object) are stepped in the tangent
        of their rotation group, as the lcp world moves them (docs/affine.md, "Floating bases"); their q holds a
        quaternion, so ``nq > nv``, and the step's derivatives take q's perturbations and cotangents in the tangent
        (``q (+) e``, as the lcp world's do). Planar joints are stepped as a free joint confined to their plane
        (their velocity kept fixed in space while they turn; docs/affine.md, "Planar joints"); with joint_limits on
        the limits of their turn and of their x and y (in the parent frame) act.

        TypeError for a non-Skeleton; ValueError for an empty skeleton, one already added, a name used by a
        body or skeleton, a plane shape, a mesh with no face of non-zero area, or shapes that touch another participant
        (another link of the skeleton with self_collision on) or a ground plane at the start configuration, naming
        both; ValueError for a q of the wrong size, not finite or with a quaternion that is not of unit norm.
        """
        _check_skeleton(skeleton)
        if any(s is skeleton for s in self._skeletons):
            raise ValueError(f"skeleton {skeleton.name!r} is already in this world")
        if skeleton.name in self._names or any(s.name == skeleton.name for s in self._skeletons):
            raise ValueError(f"name {skeleton.name!r} is already used")
        old = (list(self._skeletons), self._q0, self._v0)
        ns, nvs = self._nq_skeletons, self._nv_skeletons
        try:
            self._install_skeletons(old[0] + [skeleton])
            qs = self._articulated.q  # the new skeleton's neutral configuration after the others' coordinates
            qs[:ns] = self._q0[:ns]
            if q is not None:
                qs[ns:] = as_array(q, (len(qs) - ns,), "q")
            q0 = np.concatenate([qs, self._q0[ns:]])
            self._bw_check_state(q0)
        except Exception:
            self._install_skeletons(old[0])
            raise
        self._q0 = q0
        self._v0 = np.concatenate([np.zeros(self._articulated.nv), self._v0[nvs:]])
        return skeleton

    def _install_skeletons(self, skeletons: list) -> None:
        """Compile skeletons into the core (none: remove them)."""
        from rigidiff.world import World

        self._bw_clear_skeletons()
        self._skeletons, self._articulated, self._link_meshes = list(skeletons), None, []
        if not skeletons:
            return
        inner = World(dt=self.dt, gravity=self.gravity)
        for sk in skeletons:
            inner.add_skeleton(sk)
        inner._ensure_compiled()
        self._bw_set_skeletons(inner)
        self._articulated = inner
        from rigidiff.barrier_world import _mesh_of, _warn_faces_left_out

        groups = {id(sk): i for i, sk in enumerate(skeletons)}
        for f, (sk, body) in enumerate(inner._frames):
            # the link of a body is its supporting joint (a welded child counts as its parent); its parent link's
            # joint is the world's (0) for a root
            joint, frame_pose = inner._frame_support[f]
            parent = inner._frame_link_parents[f]
            for inst in body.shapes:
                if not inst.collide:
                    continue
                vertices, faces = _mesh_of(inst.shape)
                vertices = inst.origin.apply(vertices)  # in the body frame
                label = f"skeleton {sk.name!r}: body {body.name!r}: shape {inst.name!r}"
                try:
                    k = self._bw_add_skeleton_surface(f"{sk.name}/{inst.name}", joint, parent, groups[id(sk)],
                                                      sk.self_collision, frame_pose.apply(vertices), faces)
                except ValueError as err:
                    raise ValueError(f"{label}: {err}") from None
                _warn_faces_left_out(label, len(faces), self._bw_skeleton_surface_faces(k)[0])
                self._link_meshes.append((f, vertices, np.asarray(faces, dtype=np.int64)))

    @property
    def joint_limits(self) -> bool:
        """Whether the skeletons' joint position limits act (settable; False by default, as in the lcp world's
        ``contact_options``). On, each limited dof's gap to its limit carries the contact barrier (activation
        distance dhat, in the joint's units) and the line search keeps a tenth of each gap, so that the joints
        stay strictly within their limits; a step from a state at or beyond a limit raises ValueError naming
        the joint."""
        return bool(self._bw_joint_limits())

    @joint_limits.setter
    def joint_limits(self, value):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"joint_limits must be True or False, got {value!r}")
        self._bw_set_joint_limits(bool(value))

    def _skeleton_layout(self, name):
        """The Layout of the skeleton called name (or given as the object), None if there is none."""
        from rigidiff.world import Layout

        for sk in self._skeletons:
            if sk is name or sk.name == name:
                inner = self._articulated.layout(sk.name)
                return Layout(sk.name, "skeleton", inner.q, inner.v)
        return None

    def skeleton_world(self):
        """The lcp World that holds this world's skeletons (their kinematics: ``body_pose``, ``body_poses``,
        Jacobians, ``layout``): its q and v are the first ``skeleton_world().nq`` entries of this world's.
        ValueError if the world has no skeleton."""
        if self._articulated is None:
            raise ValueError("the world has no skeleton: add one with world.add_skeleton(...)")
        self._articulated.gravity = self.gravity  # its gravity_forces use this world's gravity
        return self._articulated

    def _link_surfaces(self, q) -> list:
        """[(frame index, world vertices (n, 3), faces (m, 3))] of every link surface at the state q."""
        if not self._link_meshes:
            return []
        poses = self._articulated.body_poses(q[:self._nq_skeletons])
        return [(f, vertices @ poses[f][:3, :3].T + poses[f][:3, 3], faces) for f, vertices, faces in self._link_meshes]

    def __repr__(self) -> str:
        skeletons = f", skeletons={[sk.name for sk in self._skeletons]}" if self._skeletons else ""
        return f"World(dt={self.dt}, solver='{self._solver_name}'{skeletons}, bodies={self._names})"

    def _unknown(self, name):
        names = [sk.name for sk in self._skeletons] + list(self._names)
        return UnknownNameError(f"no skeleton, {self._body_word} or static mesh named {name!r}; the world has {names}")

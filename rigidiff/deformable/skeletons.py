"""Articulated skeletons in projective worlds (mixed into rigidiff.ProjectiveWorld; docs/deformable.md, "Robots").

A skeleton's generalised coordinates come after the deformable bodies' vertices in q and v (skeletons in the
order they were added), so adding a robot leaves every vertex index, force vector and muscle as it was. Its
model is compiled by an lcp World that holds the skeletons (``_articulated``), whose multibody model the core
copies; the collision shapes of its links (spheres, boxes, capsules, and cylinders and meshes through convex hulls:
link_hulls.py) push and rub on the deformable surface vertices, two-way, in one implicit step, on the world's
ground, balls and boxes (the core's pd_link_obstacles.cpp) and on each other (pd_link_links.cpp; shapes welded to
the world touch the links alone)."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array
from rigidiff._vector_space_skeletons import check_vector_space_skeleton
from rigidiff.deformable.link_hulls import cylinder_hull, mesh_hulls
from rigidiff.errors import UnknownNameError

#: joint types the projective step integrates on their group (docs/deformable.md, "Floating bases", "Planar joints")
FLOATING_JOINTS = ("free", "ball", "planar")


def _shape_parts(skeleton, body, shape) -> list:
    """[(core kind, size (3,), hull)] of a link shape: one part, or a cylinder's prism or a mesh's convex hulls
    (kind 3, hull = (vertices, triangles)); ValueError for a plane."""
    from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Sphere

    if isinstance(shape, Sphere):
        return [(0, np.array([shape.radius, 0.0, 0.0]), None)]
    if isinstance(shape, Box):
        return [(1, np.asarray(shape.half_extents, dtype=np.float64), None)]
    if isinstance(shape, Capsule):
        return [(2, np.array([shape.radius, 0.5 * shape.length, 0.0]), None)]
    if isinstance(shape, Cylinder):
        return [(3, np.zeros(3), cylinder_hull(shape))]
    if isinstance(shape, Mesh):
        where = f"skeleton {skeleton.name!r}: body {body.name!r}"
        return [(3, np.zeros(3), hull) for hull in mesh_hulls(shape, where)]
    if isinstance(shape, Plane):
        raise ValueError(f"skeleton {skeleton.name!r}: body {body.name!r} has a plane shape; a projective world's "
                         f"ground is world.add_ground()")
    raise ValueError(f"skeleton {skeleton.name!r}: body {body.name!r} has a {type(shape).__name__} shape; the links "
                     f"of a projective world's skeletons touch soft bodies with spheres, boxes, capsules, cylinders "
                     f"and meshes only (set collide=False on it)")


def _check_skeleton(skeleton) -> None:
    """TypeError / ValueError for what a projective world cannot hold."""
    def check_shape(body, shape):
        from rigidiff.shapes import Mesh

        if not isinstance(shape, Mesh):  # a mesh's hull is built (and checked) when the skeleton is added
            _shape_parts(skeleton, body, shape)

    check_vector_space_skeleton(skeleton, "projective", check_shape, also=FLOATING_JOINTS)


class ProjectiveSkeletons:
    """The skeleton half of ProjectiveWorld: adding skeletons, their layouts and their link shapes."""

    def _init_skeletons(self) -> None:
        self._skeletons: list = []
        self._articulated = None  # the lcp World that compiles the skeletons
        self._link_shapes: list = []  # per link shape: (skeleton name, frame index, shape, pose in the body frame)

    @property
    def skeletons(self) -> list:
        """The skeletons of the world, in the order they were added (their coordinates follow the vertices')."""
        return list(self._skeletons)

    @property
    def _nq_skeletons(self) -> int:
        return 0 if self._articulated is None else self._articulated.nq

    @property
    def _nv_skeletons(self) -> int:
        return 0 if self._articulated is None else self._articulated.nv

    @property
    def _nq_vertices(self) -> int:
        return self.nq - self._nq_skeletons

    def add_skeleton(self, skeleton, q=None):
        """Add an articulated skeleton (a robot arm, a gripper, a pusher on prismatic joints) and return it.

        Its generalised coordinates join q and v after the deformable bodies' vertices (and the skeletons added
        before it), starting at rest at ``q`` (its nq coordinates; default its neutral configuration, where a
        floating base sits at the world origin); ``world.layout(skeleton.name)`` gives them,
        and the same slice of the step's ``f`` holds its joint forces tau. The collision shapes of its links
        (spheres, boxes, capsules; a mesh through its convex hull, or its convex parts' hulls when made with
        ``decompose=True``; a cylinder through its inscribed 32-sided prism) push the deformable surface vertices
        with the penalty of contact_stiffness (or, under the complementarity contact model, hold them on their
        tangent planes) and rub on them with the world's friction, two-way, and are pushed
        and rubbed the same way by the ground planes, the balls and the boxes (one-way: those are kinematic): one
        implicit-Euler step minimises the deformable bodies' and the skeletons' incremental potential together
        (docs/deformable.md, "Robots"),
        with the joints' damping, stiffness and effort limits and gravity on the links, and their position
        limits when ``joint_limits`` is on (a penalty of stiffness ``joint_limit_stiffness``). The links of
        different skeletons push each other apart with the same penalty and rub with the same friction, and
        those of one skeleton too when its ``self_collision`` is on, except a link and its parent
        (docs/deformable.md, "Links against links"); shapes welded to the world (a table, a wall) touch those links
        alone, not the soft bodies nor the obstacles. The skeleton is compiled when added: later edits to it are
        not seen.

        Free and ball joints (a floating base: a quadruped, a dropped box or hand) are stepped in the tangent of
        their rotation group as the barrier and lcp worlds move them (docs/deformable.md, "Floating bases"): their
        q holds a quaternion (x, y, z, w), so ``nq > nv``, and a step whose predicted turn |w| dt of such a joint
        reaches pi raises ValueError naming the joint. Planar joints are stepped as the barrier world steps them,
        as a free joint confined to its plane (docs/deformable.md, "Planar joints"), with the same limit on their
        turn per step and their x, y and theta limits when ``joint_limits`` is on. The step's derivatives take q's
        cotangents and perturbations in the tangent (``q (+) e``, nv entries), as the lcp and barrier worlds' do.

        TypeError for a non-Skeleton; ValueError for an empty skeleton, one already added, a name used by a body
        or skeleton, a plane link shape or a flat mesh (no convex hull), or a q of the wrong size, not finite or
        with a quaternion off unit norm.
        """
        _check_skeleton(skeleton)
        if any(s is skeleton for s in self._skeletons):
            raise ValueError(f"skeleton {skeleton.name!r} is already in this world")
        if skeleton.name in self._names or any(s.name == skeleton.name for s in self._skeletons):
            raise ValueError(f"name {skeleton.name!r} is already used")
        nx, ns, nvs = self._nq_vertices, self._nq_skeletons, self._nv_skeletons
        q_old, v_old = self._q0.copy(), self._v0.copy()
        old = list(self._skeletons)
        try:
            self._install_skeletons(old + [skeleton])
            qs = self._articulated.q  # the new skeleton's neutral configuration after the others' coordinates
            qs[:ns] = q_old[nx:nx + ns]
            if q is not None:
                qs[ns:] = as_array(q, (len(qs) - ns,), "q")
                self._articulated.q = qs  # ValueError for a quaternion off unit norm
        except Exception:
            self._install_skeletons(old)
            raise
        vs = np.zeros(self._articulated.nv)
        vs[:nvs] = v_old[len(v_old) - nvs:]
        self._q0 = np.concatenate([q_old[:nx], qs])
        self._v0 = np.concatenate([v_old[:len(v_old) - nvs], vs])
        return skeleton

    def _install_skeletons(self, skeletons: list) -> None:
        """Compile skeletons into the core (none: remove them)."""
        from rigidiff.world import World

        self._pw_clear_skeletons()
        self._skeletons, self._articulated, self._link_shapes = [], None, []
        if not skeletons:
            return
        inner = World(dt=self.dt, gravity=self.gravity)
        for sk in skeletons:
            inner.add_skeleton(sk)
        inner._ensure_compiled()
        self._pw_set_skeletons(inner)
        groups = {id(sk): i for i, sk in enumerate(skeletons)}
        for f, (sk, body) in enumerate(inner._frames):
            # which links touch it (the barrier world's rule): a welded child counts as its parent
            joint, frame_pose = inner._frame_support[f]
            parent = inner._frame_link_parents[f]
            for inst in body.shapes:
                if not inst.collide:
                    continue
                placement = frame_pose @ inst.origin
                for kind, size, hull in _shape_parts(sk, body, inst.shape):
                    if hull is None:
                        index = self._pw_add_link_shape(joint, kind, placement.rotation, placement.translation, size)
                    else:
                        index = self._pw_add_link_hull(joint, placement.rotation, placement.translation, *hull)
                    self._pw_set_link_group(index, groups[id(sk)], parent, sk.self_collision)
                self._link_shapes.append((sk.name, f, inst.shape, inst.origin))
        self._skeletons, self._articulated = list(skeletons), inner

    def _link_name(self, f: int) -> str:
        sk, body = self._articulated._frames[f]
        return f"{sk.name}/{body.name}"

    def _skeleton_layout(self, name):
        """The Layout of the skeleton called name (or given as the object), None if there is none."""
        from rigidiff.world import Layout

        for sk in self._skeletons:
            if sk is name or sk.name == name:
                inner = self._articulated.layout(sk.name)
                nx = self._nq_vertices
                return Layout(sk.name, "skeleton", slice(nx + inner.q.start, nx + inner.q.stop),
                              slice(nx + inner.v.start, nx + inner.v.stop))
        return None

    def skeleton_world(self):
        """The lcp World that holds this world's skeletons (their kinematics: ``body_pose``, ``body_poses``,
        Jacobians, ``layout``): its q and v are the last ``skeleton_world().nq`` and ``.nv`` entries of this world's.
        ValueError if the world has no skeleton."""
        if self._articulated is None:
            raise ValueError("the world has no skeleton: add one with world.add_skeleton(...)")
        self._articulated.gravity = self.gravity
        return self._articulated

    def _viz_link_surfaces(self, q) -> list:
        """[(skeleton name, triangles (m, 3, 3) in world coordinates)] of the link shapes at the state q."""
        if not self._link_shapes:
            return []
        from rigidiff.deformable.obstacles import fan_triangles
        from rigidiff.viz._scene import tessellate

        poses = self._articulated.body_poses(np.asarray(q, dtype=np.float64)[self._nq_vertices:])
        out = []
        for name, f, shape, origin in self._link_shapes:
            T = poses[f] @ origin.matrix
            out.append((name, fan_triangles(tessellate(shape)) @ T[:3, :3].T + T[:3, 3]))
        return out

    def _unknown_skeleton_or_body(self, name):
        names = [sk.name for sk in self._skeletons] + list(self._names)
        return UnknownNameError(f"no deformable body named {name!r} (nor a skeleton); the world has {names}")

"""Contacts of a world: the collision model built from the bodies' shapes, and ``World.collide``.

    contacts = world.collide(q)
    contacts.points, contacts.normals, contacts.distances, contacts.body_a, contacts.types

Conventions (DESIGN.md section 2): each contact's normal is a unit vector from body B to body A, its
distance is signed (< 0 in penetration) and its point is the midpoint of the two witness points. Each
contact names the features that touch ("point_face": a vertex or sphere of A on a face of B, ...), from
which its point and normal follow as functions of the two body poses.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from rigidiff import _core
from rigidiff._validate import as_scalar
from rigidiff.collision import pose_data, shape_data
from rigidiff.shapes import Mesh

__all__ = ["ContactSet", "CONTACT_TYPES"]

#: contact types in the order of the core's codes (collision/feature.hpp)
CONTACT_TYPES = ("point_face", "face_point", "point_point", "point_segment", "segment_point", "segment_segment")


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


class ContactMethods:
    """Collision queries of rigidiff.World (mixed into it)."""

    _contact_margin = 0.0

    @property
    def contact_margin(self) -> float:
        """Contacts are reported while their distance is below this margin (m, >= 0; default 0)."""
        return self._contact_margin

    @contact_margin.setter
    def contact_margin(self, value):
        self._contact_margin = as_scalar(value, "contact_margin", minimum=0.0)
        if getattr(self, "_collision", None) is not None:
            self._collision.set_margin(self._contact_margin)

    def _build_collision(self) -> None:
        """Collision model of the compiled world: one geometry per colliding shape."""
        core = _core.CollisionCore()
        geometries = []
        skeleton_index = {id(sk): i for i, sk in enumerate(self._skeletons)}
        for frame, (sk, body) in enumerate(self._frames):
            for inst in body.shapes:
                if not inst.collide:
                    continue
                if isinstance(inst.shape, Mesh) and not inst.shape.is_convex:
                    warnings.warn(f"shape {inst.name!r} of body {sk.name}/{body.name} is a mesh that is not convex: "
                                  "collision with non-convex meshes is not supported yet, so it is left out of "
                                  "contacts (pass its convex hull, rd.Mesh(mesh.to_trimesh().convex_hull), to "
                                  "collide with the hull)", stacklevel=3)
                    continue
                code, params, verts = shape_data(inst.shape)
                core.add_geometry(self, code, params, verts, frame, skeleton_index[id(sk)],
                                  pose_data(inst.origin, "origin"), inst.friction, inst.restitution, inst.group,
                                  inst.mask, inst.name)
                geometries.append((frame, inst.name))
        for sk in self._skeletons:
            core.set_self_collision(skeleton_index[id(sk)], sk.self_collision)
        core.set_margin(self._contact_margin)
        self._collision = core
        self._geometries = geometries

    def collide(self, q=None) -> ContactSet:
        """Contacts of the world at configuration q (default: the world's current ``q``).

        Pairs tested: shapes on different bodies whose groups and masks match, not both welded to the
        world, and within one skeleton only when its ``self_collision`` is on and the two bodies are not
        parent and child. A resting face gives several contacts (a box on the ground: its 4 corners).
        """
        self._ensure_compiled()
        q = self.q if q is None else q
        pts, nrm, dist, ga, gb, types = self._collision.compute(self, q)
        names = self.body_names
        bodies = [names[self._geometries[i][0]] for i in ga], [names[self._geometries[i][0]] for i in gb]
        shapes = [self._geometries[i][1] for i in ga], [self._geometries[i][1] for i in gb]
        return ContactSet(pts, nrm, dist, bodies[0], bodies[1], shapes[0], shapes[1],
                          [CONTACT_TYPES[t] for t in types], np.asarray(ga, dtype=int), np.asarray(gb, dtype=int))

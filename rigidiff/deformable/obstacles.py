"""The obstacles of a projective world: ground planes, and balls and boxes that the caller may move between steps
(kinematic: their motion is prescribed, not simulated). Surface vertices inside one, and the shapes of skeletons'
links (skeletons.py), are pushed out by the penalty k/2 d^2 of the world's contact_stiffness (or, under the
complementarity contact model, the vertices are held on it, see ProjectiveWorld's contact_model) and rub on it with
the world's friction, relative to the obstacle's surface, which its velocity (set_obstacle_pose(..., velocity=)) carries
along during a step; the gradients of a step with respect to a ball's or box's pose come with step_vjp (parameter
names "pose:<name>:x", ":y", ":z", then ":rx", ":ry", ":rz" for a box's rotation about its own origin, in world
axes)."""

from __future__ import annotations

import numpy as np

from rigidiff._validate import as_array, as_name, as_scalar
from rigidiff.errors import UnknownNameError
from rigidiff.transform import Transform

_TRANSLATION = ("x", "y", "z")
_ROTATION = ("rx", "ry", "rz")


class ProjectiveObstacles:
    """The obstacle half of rigidiff.ProjectiveWorld (a mixin over its compiled core)."""

    def _init_obstacles(self) -> None:
        self._planes: list = []  # (normal, height)
        # name -> [kind ("sphere" | "box"), index among its kind, size, Transform, velocity (6,)]
        self._obstacles: dict = {}

    def add_ground(self, height: float = 0.0, normal=(0.0, 0.0, 1.0)) -> None:
        """Add a static ground plane {x : normal . x = height} (normal normalised); surface vertices on the side
        the normal points away from are pushed back by the penalty of stiffness contact_stiffness (or held on it
        by the complementarity contact, see contact_model), and so are the skeletons' link shapes (a sphere by its
        centre, a capsule by its end-spheres, a box by its corners)."""
        n = as_array(normal, (3,), "normal")
        if not np.linalg.norm(n) > 0.0:
            raise ValueError("normal must be non-zero")
        height = as_scalar(height, "height")
        self._pw_add_plane(n / np.linalg.norm(n), height)
        self._planes.append((n / np.linalg.norm(n), height))

    def _new_obstacle_name(self, name, kind: str) -> str:
        name = f"{kind}{sum(k == kind for k, *_ in self._obstacles.values())}" if name is None \
            else as_name(name, "obstacle name")
        if name in self._obstacles:
            raise ValueError(f"obstacle name {name!r} is already used")
        return name

    def add_sphere(self, centre, radius: float, name: str | None = None) -> str:
        """Add a ball of the given centre (3,) and radius (> 0) and return its name ("sphere<i>" if None): surface
        vertices that enter it are pushed out along its normal by the penalty of stiffness contact_stiffness (or
        held on its tangent plane by the complementarity contact, see contact_model) and rub on it with the world's
        friction, and so do the skeletons' link shapes. set_obstacle_pose moves it between
        steps (and sets the velocity its surface has during a step: zero until set)."""
        centre = as_array(centre, (3,), "centre")
        radius = as_scalar(radius, "radius", minimum=0.0, strict=True)
        name = self._new_obstacle_name(name, "sphere")
        self._pw_add_sphere(centre, radius)
        index = sum(k == "sphere" for k, *_ in self._obstacles.values())
        self._obstacles[name] = ["sphere", index, radius, Transform(translation=centre), np.zeros(6)]
        return name

    def add_box(self, size, pose=None, name: str | None = None) -> str:
        """Add a box of edge lengths size (3,) (> 0) centred at pose (an rd.Transform; identity if None) and
        return its name ("box<i>" if None): surface vertices that enter it are pushed out through its nearest
        face by the penalty of stiffness contact_stiffness (or held on it by the complementarity contact, see
        contact_model) and rub on it with the world's friction, and so are the
        skeletons' links (a link's corners and the box's corners probe each other, and edges that cross with no
        corner inside touch through their closest points; docs/deformable.md, "Links on the obstacles" and
        "Edges crossing").
        set_obstacle_pose moves it between steps, e.g. to push a soft body along a prescribed path (and sets the
        velocity its surface has during a step: zero until set)."""
        size = as_array(size, (3,), "size")
        if not (size > 0.0).all():
            raise ValueError(f"size must be > 0, got {size}")
        pose = Transform() if pose is None else pose
        if not isinstance(pose, Transform):
            raise TypeError(f"pose must be an rd.Transform, got {type(pose).__name__}")
        name = self._new_obstacle_name(name, "box")
        self._pw_add_box(size / 2.0, pose.rotation, pose.translation)
        index = sum(k == "box" for k, *_ in self._obstacles.values())
        self._obstacles[name] = ["box", index, size.copy(), pose, np.zeros(6)]
        return name

    @property
    def obstacle_names(self) -> tuple:
        """The balls' and boxes' names, in the order they were added."""
        return tuple(self._obstacles)

    def _obstacle(self, name: str) -> list:
        if name not in self._obstacles:
            raise UnknownNameError(f"no obstacle {name!r}; the obstacles are {list(self._obstacles)}")
        return self._obstacles[name]

    def _core_obstacle_index(self, name: str) -> int:
        # the core orders obstacles planes, then balls, then boxes
        kind, index, *_ = self._obstacle(name)
        n_spheres = sum(k == "sphere" for k, *_ in self._obstacles.values())
        return len(self._planes) + index + (n_spheres if kind == "box" else 0)

    def obstacle_pose(self, name: str) -> Transform:
        """A ball's or box's pose (a ball's rotation is the identity)."""
        return self._obstacle(name)[3]

    def obstacle_velocity(self, name: str) -> np.ndarray:
        """A ball's or box's velocity during a step (6,): linear (of its centre) then angular, world axes."""
        return self._obstacle(name)[4].copy()

    def set_obstacle_pose(self, name: str, pose, velocity=None) -> None:
        """Move a ball or a box to pose (an rd.Transform; a ball takes its translation only) for the next
        steps, with the velocity (6,: linear velocity of its centre, then angular velocity, world axes, in m/s
        and rad/s) its surface has during them: friction measures a vertex's slip against the obstacle's
        material point, which moves by dt (v + w x (x - centre)) over a step. None: zero (a still obstacle). A
        pusher moved by d per step passes velocity (d / dt, 0). The gradients of a step do not include its
        velocity."""
        if not isinstance(pose, Transform):
            raise TypeError(f"pose must be an rd.Transform, got {type(pose).__name__}")
        entry = self._obstacle(name)
        velocity = np.zeros(6) if velocity is None else as_array(velocity, (6,), "velocity")
        if entry[0] == "sphere":
            pose = Transform(translation=pose.translation)
        o = self._core_obstacle_index(name)
        self._pw_set_obstacle_velocity(o, velocity[:3], velocity[3:])
        self._pw_set_obstacle_pose(o, pose.rotation, pose.translation)
        entry[3], entry[4] = pose, velocity.copy()

    def _obstacle_parameter_names(self) -> tuple:
        names = []
        for name, (kind, *_) in self._obstacles.items():
            names += [f"pose:{name}:{c}" for c in _TRANSLATION + (_ROTATION if kind == "box" else ())]
        return tuple(names)

    def _obstacle_parameters(self) -> np.ndarray:
        """The last adjoint's pose cotangents in the order of _obstacle_parameter_names."""
        rows = self._pw_obstacle_gradients()
        out = []
        for name, (kind, *_) in self._obstacles.items():
            row = rows[self._core_obstacle_index(name)]
            out.append(row if kind == "box" else row[:3])
        return np.concatenate(out) if out else np.zeros(0)

    def _viz_obstacle_surfaces(self) -> list:
        """[("obstacles", polygons in world coordinates)] of the balls and boxes."""
        from rigidiff.shapes import Box, Sphere
        from rigidiff.viz._scene import tessellate

        out = []
        for kind, _, size, pose, _ in self._obstacles.values():
            polys = fan_triangles(tessellate(Sphere(size) if kind == "sphere" else Box(size)))
            out.append(("obstacles", polys @ pose.rotation.T + pose.translation))
        return out

    def _viz_planes(self) -> list:
        """[(normal, a point)] in world coordinates of the ground planes rigidiff.viz draws."""
        return [(n, height * n) for n, height in self._planes]


def fan_triangles(polygons: np.ndarray) -> np.ndarray:
    """(m (k - 2), 3, 3) triangles fanned from the first corner of each convex polygon of (m, k, 3) (a box's
    quadrilaterals): rigidiff.viz draws the surfaces of these worlds as triangles."""
    k = polygons.shape[1]
    return np.concatenate([polygons[:, [0, j, j + 1]] for j in range(1, k - 1)]) if k > 3 else polygons

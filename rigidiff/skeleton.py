"""Skeletons: trees of bodies joined by joints, built by hand or by a loader, then added to a World."""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from rigidiff._validate import as_bool, as_name, as_scalar
from rigidiff.errors import UnknownNameError
from rigidiff.inertia import Inertia
from rigidiff.joints import FixedJoint, Joint
from rigidiff.transform import Transform

__all__ = ["Skeleton", "Body", "ShapeInstance"]


@dataclass(frozen=True)
class ShapeInstance:
    """A shape attached to a body: its pose in the body frame and its contact properties."""

    shape: object
    origin: Transform
    name: str
    friction: float = 0.5
    restitution: float = 0.0
    collide: bool = True
    visual: bool = True
    group: int = 1
    mask: int = 0xFFFFFFFF


class Body:
    """A rigid body of a skeleton. Create bodies with :meth:`Skeleton.add_body`."""

    def __init__(self, skeleton: Skeleton, name: str, joint: Joint, parent: Body | None, joint_origin: Transform,
                 inertia: Inertia):
        self.skeleton = skeleton
        self.name = name
        self.joint = joint
        self.parent = parent
        self.joint_origin = joint_origin
        self.inertia = inertia
        self.children: list[Body] = []
        self.shapes: list[ShapeInstance] = []

    @property
    def inertia(self) -> Inertia:
        """The body's inertia in its body frame. Settable (then ``world.rebuild()``): an Inertia, or None for a
        massless body, as in add_body."""
        return self._inertia

    @inertia.setter
    def inertia(self, value):
        value = Inertia.zero() if value is None else value
        if not isinstance(value, Inertia):
            raise ValueError(f"body {self.name!r}: inertia must be a rigidiff.Inertia, got {type(value).__name__}")
        self._inertia = value

    def add_shape(self, shape, origin: Transform | None = None, friction: float = 0.5, restitution: float = 0.0,
                  collide: bool = True, visual: bool = True, name: str | None = None, group: int = 1,
                  mask: int = 0xFFFFFFFF) -> ShapeInstance:
        """Attach ``shape`` at ``origin`` (body frame) for collision and/or drawing.

        Friction and restitution are per shape; the contact solver combines the two shapes of a contact.
        Unnamed shapes are called "<body>/shape<i>". Two shapes may touch only when
        ``(group_a & mask_b) and (group_b & mask_a)`` (32-bit masks; by default everything collides).
        """
        from rigidiff.shapes import Shape

        if not isinstance(shape, Shape):
            raise ValueError(f"shape must be a rigidiff shape (Box, Sphere, ...), got {type(shape).__name__}")
        origin = Transform() if origin is None else origin
        if not isinstance(origin, Transform):
            raise ValueError(f"origin must be a rigidiff.Transform, got {type(origin).__name__}")
        name = f"{self.name}/shape{len(self.shapes)}" if name is None else as_name(name, "shape name")
        if any(s.name == name for s in self.shapes):
            raise ValueError(f"body {self.name!r} already has a shape named {name!r}")
        restitution = as_scalar(restitution, "restitution", minimum=0.0)
        if restitution > 1.0:
            raise ValueError(f"shape {name!r}: restitution must be in [0, 1], got {restitution}")
        inst = ShapeInstance(shape, origin, name, as_scalar(friction, "friction", minimum=0.0), restitution,
                             as_bool(collide, "collide"), as_bool(visual, "visual"), _bits(group, "group"),
                             _bits(mask, "mask"))
        self.shapes.append(inst)
        self.skeleton._edited()
        return inst

    @property
    def is_moving(self) -> bool:
        """False for a body welded (through fixed joints only) to the world."""
        b = self
        while b is not None:
            if b.joint.nv > 0:
                return True
            b = b.parent
        return False

    def __repr__(self) -> str:
        parent = self.parent.name if self.parent is not None else "world"
        return f"Body({self.name!r}, joint={self.joint!r}, parent={parent!r})"


class Skeleton:
    """A named tree of bodies. Bodies are kept in the order they were added (parents first).

    Example::

        sk = rd.Skeleton("pendulum")
        link = sk.add_body("link", joint=rd.RevoluteJoint("hinge", axis=(0, 1, 0)),
                           inertia=rd.Inertia(1.0, com=(0, 0, -0.5)))
    """

    def __init__(self, name: str, self_collision: bool = False):
        self.name = as_name(name, "skeleton name")
        #: may the bodies of this skeleton touch each other (parent-child pairs never do)?
        self.self_collision = as_bool(self_collision, "self_collision")
        self._bodies: dict[str, Body] = {}
        self._joints: dict[str, Joint] = {}
        self.source: str | None = None  # file the skeleton was loaded from, if any
        # the worlds it was added to: a body or shape added later recompiles them (at their next use)
        self._worlds = weakref.WeakSet()

    def _edited(self) -> None:
        for world in list(self._worlds):
            world._skeleton_edited(self)

    def __getstate__(self) -> dict:  # a copy or an unpickled skeleton is in no world yet
        state = self.__dict__.copy()
        state.pop("_worlds", None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._worlds = weakref.WeakSet()

    def add_body(self, name: str, joint: Joint | None = None, parent: Body | str | None = None,
                 joint_origin: Transform | None = None, inertia: Inertia | None = None) -> Body:
        """Add a body connected to ``parent`` (None: the world) by ``joint``.

        Args:
            name: unique body name in this skeleton.
            joint: the joint from the parent to this body (a Joint instance, name unique in the skeleton).
                None welds the body to its parent (to the world without one), as a body without joints
                in MuJoCo: a ``FixedJoint`` named ``"<name>_weld"``.
            parent: parent Body or its name; None attaches the body to the world.
            joint_origin: pose of the joint frame in the parent body frame (identity if None). The body
                frame coincides with the joint frame when the joint is at q = 0.
            inertia: the body's inertia in its body frame (massless if None).
        """
        name = as_name(name, "body name")
        if name in self._bodies:
            raise ValueError(f"skeleton {self.name!r} already has a body named {name!r}")
        if joint is None:
            joint = FixedJoint(f"{name}_weld")
        if not isinstance(joint, Joint):
            raise ValueError(f"body {name!r}: joint must be a rigidiff joint (e.g. rd.RevoluteJoint(...)), "
                             f"got {joint!r}")
        if joint.name in self._joints:
            raise ValueError(f"skeleton {self.name!r} already has a joint named {joint.name!r}")
        if any(b.joint is joint for b in self._bodies.values()):
            raise ValueError(f"joint {joint.name!r} is already used by another body")
        if isinstance(parent, str):
            parent = self.body(parent)
        elif parent is not None and (not isinstance(parent, Body) or self._bodies.get(parent.name) is not parent):
            raise ValueError(f"body {name!r}: parent must be a body of skeleton {self.name!r}, its name, or None")
        joint_origin = Transform() if joint_origin is None else joint_origin
        if not isinstance(joint_origin, Transform):
            raise ValueError(f"body {name!r}: joint_origin must be a rigidiff.Transform")
        inertia = Inertia.zero() if inertia is None else inertia
        if not isinstance(inertia, Inertia):
            raise ValueError(f"body {name!r}: inertia must be a rigidiff.Inertia")
        body = Body(self, name, joint, parent, joint_origin, inertia)
        if parent is not None:
            parent.children.append(body)
        self._bodies[name] = body
        self._joints[joint.name] = joint
        self._edited()
        return body

    @property
    def bodies(self) -> list[Body]:
        """All bodies, in insertion order."""
        return list(self._bodies.values())

    @property
    def body_names(self) -> list[str]:
        """Body names, in insertion order."""
        return list(self._bodies)

    @property
    def joints(self) -> list[Joint]:
        """All joints (fixed ones included), in body insertion order."""
        return [b.joint for b in self._bodies.values()]

    def body(self, name: str) -> Body:
        """The body called ``name``; UnknownNameError (an IndexError) if there is none."""
        try:
            return self._bodies[name]
        except KeyError:
            raise UnknownNameError(
                f"skeleton {self.name!r} has no body named {name!r}; bodies: {list(self._bodies)}") from None

    def joint(self, name: str) -> Joint:
        """The joint called ``name``; UnknownNameError (an IndexError) if there is none."""
        try:
            return self._joints[name]
        except KeyError:
            raise UnknownNameError(
                f"skeleton {self.name!r} has no joint named {name!r}; joints: {list(self._joints)}") from None

    def ordered_bodies(self) -> list[Body]:
        """Bodies depth-first in declaration order (the q / v layout order, docs/conventions.md)."""
        return [b for b, _ in self._depth_first()]

    def _depth_first(self) -> list:
        """(body, depth) pairs, depth-first in declaration order; iterative, so a chain of any length
        (a 10,000-link rope) needs no Python recursion."""
        out = []
        stack = [(b, 0) for b in reversed(list(self._bodies.values())) if b.parent is None]
        while stack:
            b, depth = stack.pop()
            out.append((b, depth))
            stack.extend((c, depth + 1) for c in reversed(b.children))
        return out

    @property
    def nq(self) -> int:
        """Size of this skeleton's configuration vector."""
        return sum(b.joint.nq for b in self._bodies.values())

    @property
    def nv(self) -> int:
        """Size of this skeleton's velocity vector."""
        return sum(b.joint.nv for b in self._bodies.values())

    @property
    def total_mass(self) -> float:
        """Sum of the bodies' masses."""
        return float(sum(b.inertia.mass for b in self._bodies.values()))

    def summary(self) -> str:
        """A readable tree: bodies, joints, dofs, masses and limits."""
        lines = [f"skeleton {self.name!r}: {len(self._bodies)} bodies, nq = {self.nq}, nv = {self.nv}, "
                 f"mass = {self.total_mass:.4g} kg"]

        for b, depth in self._depth_first():
            j = b.joint
            jt = "continuous" if getattr(j, "continuous", False) else j.type
            lim = ""
            if j.has_position_limits:
                lim = f" limits {_format_limits(j.lower, j.upper)}"
            lines.append(f"{'  ' * (depth + 1)}- {b.name} ({jt} {j.name!r}, nq {j.nq}, nv {j.nv}, "
                         f"mass {b.inertia.mass:.4g}){lim}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Skeleton({self.name!r}, bodies={len(self._bodies)}, nq={self.nq}, nv={self.nv})"


def _format_limits(lower: np.ndarray, upper: np.ndarray) -> str:
    """'[lo, hi]' for one coordinate, '[lo, hi] x ...' for several."""
    return " ".join(f"[{lo:.4g}, {hi:.4g}]" for lo, hi in zip(lower, upper))


def _bits(x, name: str) -> int:
    """A 32-bit collision group or mask."""
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) <= 0xFFFFFFFF:
        raise ValueError(f"collision {name} must be an integer in [0, 2**32), got {x!r}")
    return int(x)


def fixed_root(name: str) -> FixedJoint:
    """A fixed joint welding a root body to the world (used by loaders)."""
    return FixedJoint(name)

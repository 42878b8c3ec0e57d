"""The skeletons that the implicit worlds (barrier and projective) can step: every joint's coordinates form a
vector space (dq/dt = v), so that the incremental potential is minimised in the joint coordinates directly. Both
also step free and ball joints (floating bases) in the tangent of their group (``also``)."""

from __future__ import annotations

#: joint types an implicit world steps: those whose coordinates form a vector space (dq/dt = v)
SUPPORTED_JOINTS = ("fixed", "revolute", "prismatic", "universal", "translational")


def check_vector_space_skeleton(skeleton, world: str, check_shape, also: tuple = ()) -> None:
    """TypeError for a non-Skeleton; ValueError for an empty skeleton or a joint that is neither a vector-space
    joint nor one of ``also`` (joint types that world steps on their group), naming ``world`` ("barrier",
    "projective"); then ``check_shape(body, shape)`` for each colliding shape, which raises for what that world
    cannot hold."""
    from rigidiff.skeleton import Skeleton

    if not isinstance(skeleton, Skeleton):
        raise TypeError(f"skeleton must be a rigidiff.Skeleton, got {type(skeleton).__name__}")
    if not skeleton.bodies:
        raise ValueError(f"skeleton {skeleton.name!r} has no bodies")
    supported = SUPPORTED_JOINTS + tuple(also)
    for body in skeleton.bodies:
        j = body.joint
        if j.type not in supported:
            missing = ", ".join(t for t in ("free", "ball", "planar") if t not in supported)
            raise ValueError(
                f"skeleton {skeleton.name!r}: joint {j.name!r} is a {j.type} joint; {world} worlds support "
                f"{', '.join(supported)} joints ({missing} joints need a Lie-group integration the {world} step "
                f"does not have yet" + ("" if "free" in supported else
                                        ": weld a floating base to the world with a fixed root joint") + ")")
        for inst in body.shapes:
            if inst.collide:
                check_shape(body, inst.shape)

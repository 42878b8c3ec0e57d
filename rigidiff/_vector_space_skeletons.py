"""The skeletons that the implicit worlds (barrier and projective) can step: every joint's coordinates form a
vector space (dq/dt = v), so that the incremental potential is minimised in the joint coordinates directly."""

from __future__ import annotations

#: joint types an implicit world steps: those whose coordinates form a vector space (dq/dt = v)
SUPPORTED_JOINTS = ("fixed", "revolute", "prismatic", "universal", "translational")


def check_vector_space_skeleton(skeleton, world: str, check_shape) -> None:
    """TypeError for a non-Skeleton; ValueError for an empty skeleton or a free, ball or planar joint, naming
    ``world`` ("barrier", "projective"); then ``check_shape(body, shape)`` for each colliding shape, which raises
    for what that world cannot hold."""
    from rigidiff.skeleton import Skeleton

    if not isinstance(skeleton, Skeleton):
        raise TypeError(f"skeleton must be a rigidiff.Skeleton, got {type(skeleton).__name__}")
    if not skeleton.bodies:
        raise ValueError(f"skeleton {skeleton.name!r} has no bodies")
    for body in skeleton.bodies:
        j = body.joint
        if j.type not in SUPPORTED_JOINTS:
            raise ValueError(
                f"skeleton {skeleton.name!r}: joint {j.name!r} is a {j.type} joint; {world} worlds support "
                f"{', '.join(SUPPORTED_JOINTS)} joints (free, ball and planar joints need a Lie-group integration "
                f"the implicit step does not have yet: weld a floating base to the world with a fixed root joint)")
        for inst in body.shapes:
            if inst.collide:
                check_shape(body, inst.shape)

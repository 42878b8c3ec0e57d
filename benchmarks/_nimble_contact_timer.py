"""Times Nimble (nimblephysics) for bench_contact_gradients.py, in the interpreter that has it installed.

    python _nimble_contact_timer.py      # request: one JSON line on stdin; then one "round" line per round

Nimble needs numpy < 2 and torch, so it usually lives in its own environment: this script imports
neither rigidiff nor the benchmark modules that do (only _nimble_timer.py, which imports neither). The
request names the scene:

- "jump_worm": built here as in Nimble's own Jacobian benchmark (a TranslationalJoint2D root box and
  three revolute tail boxes, DART's default inertia of 1 kg and unit moments, a welded floor box,
  friction 0, penetration correction off); the states are given as vectors in the worm's dof order;
- "urdf": the URDF text (meshes as absolute paths, mimic tags and joint dynamics stripped) on a free
  base, standing on a welded ground box whose top face is z = 0; the states are given per joint name
  (the free root joint as rotation vector, translation, body-frame angular and linear velocity, torque
  and force, as _nimble_timer.py reads them).

Both scenes take dt, gravity, friction, the batch size n and two states (alternated when timing: DART
skips the work of setting an unchanged state). Every answer is one line "@@JSON@@{...}" on stdout. The
first holds the contacts Nimble found at the first state, its velocity Jacobians there (d v_next / d v
and d v_next / d tau) and the dof names in Nimble's order, or an "error". Then each "round" line read
from stdin is answered with the per-call times in us of one batch of forward steps (10 n calls) and one
of forward steps with their state and action Jacobians (n calls), so that the caller can time its own
batches between Nimble's, under the same load; "done" or the end of stdin ends the process.
"""

from __future__ import annotations

import json
import sys
import time

from _nimble_timer import _vectors, emit, failure, load_skeleton, world_calls


def _box_node(nimble, body, size, friction: float):
    node = body.createShapeNode(nimble.dynamics.BoxShape(size))
    node.createCollisionAspect()
    body.setFrictionCoeff(friction)
    return node


def _iso(nimble, translation):
    import numpy as np

    T = nimble.math.Isometry3.Identity()
    T.set_translation(np.array(translation, dtype=float))
    return T


def jump_worm(nimble, world, friction: float):
    """The worm of Nimble's benchmark, in the XY plane (gravity along -y)."""
    import numpy as np

    unit = nimble.dynamics.Inertia(1.0, np.zeros(3), np.eye(3))  # DART's default inertia, set explicitly
    worm = nimble.dynamics.Skeleton()
    worm.setName("jumpworm")
    root_joint, root = worm.createTranslationalJoint2DAndBodyNodePair()
    root.setInertia(unit)
    _box_node(nimble, root, np.array([0.1, 0.1, 0.1]), friction)
    parent = root
    for i in range(3):
        joint, body = parent.createRevoluteJointAndBodyNodePair()
        joint.setName(f"tail{i + 1}_joint")
        joint.setAxis(np.array([0.0, 0.0, 1.0]))
        joint.setTransformFromChildBodyNode(_iso(nimble, [0.0, -0.125, 0.0]))
        if i > 0:
            joint.setTransformFromParentBodyNode(_iso(nimble, [0.0, 0.125, 0.0]))
        body.setInertia(unit)
        _box_node(nimble, body, np.array([0.05, 0.25, 0.05]), friction)
        parent = body
    world.addSkeleton(worm)
    floor = nimble.dynamics.Skeleton()
    floor.setName("floor")
    weld, body = floor.createWeldJointAndBodyNodePair()
    weld.setTransformFromParentBodyNode(_iso(nimble, [0.0, -0.56, 0.0]))
    _box_node(nimble, body, np.array([2.5, 0.25, 0.5]), friction)
    world.addSkeleton(floor)
    return worm


def urdf_on_ground(nimble, world, text: str, friction: float):
    """The robot of the URDF on a free base, and a welded ground box with its top face at z = 0."""
    import numpy as np

    skel = load_skeleton(world, text)
    for i in range(skel.getNumBodyNodes()):
        skel.getBodyNode(i).setFrictionCoeff(friction)
    ground = nimble.dynamics.Skeleton()
    ground.setName("ground")
    weld, body = ground.createWeldJointAndBodyNodePair()
    weld.setTransformFromParentBodyNode(_iso(nimble, [0.0, 0.0, -0.5]))
    _box_node(nimble, body, np.array([10.0, 10.0, 1.0]), friction)
    world.addSkeleton(ground)
    return skel


def _batch(fn, a, b, n: int) -> float:
    """Per-call time in us of a batch of n calls, alternating two argument sets."""
    t0 = time.perf_counter()
    for _ in range(max(n // 2, 1)):
        fn(*a)
        fn(*b)
    return 1e6 * (time.perf_counter() - t0) / (2 * max(n // 2, 1))


def setup(req: dict):
    """The scene's world; returns the answer to the request and the function that times one round."""
    import nimblephysics as nimble
    import numpy as np

    world = nimble.simulation.World()
    world.setGravity(np.array(req["gravity"], dtype=float))
    world.setTimeStep(req["dt"])
    world.setPenetrationCorrectionEnabled(False)
    if req["scene"] == "jump_worm":
        skel = jump_worm(nimble, world, req["friction"])
        states = [tuple(np.array(x, dtype=float) for x in s) for s in req["states"]]
    else:
        skel = urdf_on_ground(nimble, world, req["urdf"], req["friction"])
        states = [_vectors(skel, s, skel.getNumDofs()) for s in req["states"]]
    nv = world.getNumDofs()
    if world.getActionSize() != nv:
        world.setActionSpace(list(range(nv)))
    (qa, va, fa), (qb, vb, fb) = states
    xa, xb = np.concatenate([qa, va]), np.concatenate([qb, vb])

    step, forward_pass = world_calls(nimble, world)

    def step_jacobians(x, u):
        snap = forward_pass(x, u)
        return snap, snap.getStateJacobian(world), snap.getActionJacobian(world)

    snap, _, _ = step_jacobians(xa, fa)
    contacts = world.getLastCollisionResult().getNumContacts()
    out = {"nv": nv, "contacts": contacts, "dofs": [skel.getDofByIndex(i).getName() for i in range(skel.getNumDofs())],
           "dv_dv": snap.getVelVelJacobian(world).tolist(),
           "dv_dtau": snap.getControlForceVelJacobian(world).tolist()}
    try:
        from importlib.metadata import version

        out["version"] = version("nimblephysics")
    except Exception:
        out["version"] = "?"
    n = req["n"]

    def one_round() -> dict:
        return {"step": _batch(step, (xa, fa), (xb, fb), 10 * n),
                "step+jacobians": _batch(step_jacobians, (xa, fa), (xb, fb), n)}

    return out, one_round


def main() -> int:
    req = json.loads(sys.stdin.readline())
    try:
        out, one_round = setup(req)
    except Exception as e:  # report why, the benchmark goes on without Nimble
        emit(failure(e))
        return 0
    emit(out)
    for line in sys.stdin:  # one timing round per "round" line, until "done" or the end of the input
        if line.strip() != "round":
            break
        emit(one_round())
    return 0


if __name__ == "__main__":
    sys.exit(main())

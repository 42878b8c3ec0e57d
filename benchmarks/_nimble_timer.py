"""Times Nimble (nimblephysics) for bench_gradients.py, in the interpreter that has it installed.

    python _nimble_timer.py < request.json > timings.json

Nimble needs numpy < 2 and torch, so it usually lives in its own environment: this script imports
neither rigidiff nor the other benchmark modules. The request holds the URDF (meshes, mimic tags and
joint dynamics already stripped), whether the base floats, dt, gravity, the timing repeats and two
states given per joint name (the free root joint as rotation vector, translation, body-frame angular
and linear velocity, torque and force). The answer holds the per-call medians in us (a forward step;
a forward step and its state and action Jacobians), the Jacobians at the first state and the dof
names in Nimble's order; or an "error".
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
import traceback


def _fixed_base(text: str) -> str:
    """Nimble's URDF loader frees the root unless a link is called `world`: weld the root to one."""
    links = re.findall(r'<link\s+name="([^"]+)"', text)
    children = set(re.findall(r'<child\s+link="([^"]+)"', text))
    root = next(n for n in links if n not in children)
    weld = (f'<link name="world"/><joint name="world_to_{root}" type="fixed"><parent link="world"/>'
            f'<child link="{root}"/></joint>')
    return re.sub(r"(<robot[^>]*>)", r"\1" + weld, text, count=1)


def load_skeleton(world, text: str):
    """Load URDF text into a Nimble world (its loader reads files only); RuntimeError if it cannot."""
    with tempfile.NamedTemporaryFile("w", suffix=".urdf", delete=False) as f:
        f.write(text)
    try:
        skel = world.loadSkeleton(f.name)
    finally:
        os.unlink(f.name)
    if skel is None:
        raise RuntimeError("loadSkeleton could not load the URDF")
    return skel


def nimble_version() -> str:
    try:
        from importlib.metadata import version

        return version("nimblephysics")
    except Exception:
        return "?"


def _vectors(skel, state, nv):
    """Positions, velocities and forces in the skeleton's dof order from a per-joint state."""
    import numpy as np

    q, v, f = np.zeros(nv), np.zeros(nv), np.zeros(nv)
    for j in range(skel.getNumJoints()):
        joint = skel.getJoint(j)
        if joint.getNumDofs() == 0:
            continue
        i0 = joint.getIndexInSkeleton(0)
        if joint.getNumDofs() == 6:  # the free root joint
            r = state["root"]
            q[i0:i0 + 6] = r["rotvec"] + r["pos"]
            v[i0:i0 + 6] = r["omega"] + r["vel"]
            f[i0:i0 + 6] = r["torque"] + r["force"]
        elif joint.getNumDofs() == 1:
            q[i0], v[i0], f[i0] = state["joints"][joint.getName()]
        else:
            raise ValueError(f"joint {joint.getName()} has {joint.getNumDofs()} dofs: not mapped")
    return q, v, f


def world_calls(nimble, world):
    """(step, forward_pass) of a Nimble world at state x = (q, v) under action u: one plain step, and the
    forward pass whose snapshot gives the Jacobians."""

    def step(x, u):
        world.setState(x)
        world.setAction(u)
        world.step()

    def forward_pass(x, u):
        world.setState(x)
        world.setAction(u)
        # idempotent: the world is restored to the pre-step state, else the Jacobians read afterwards
        # are those of the wrong state
        return nimble.neural.forwardPass(world, idempotent=True)

    return step, forward_pass


def _time(fn, a, b, repeat: int, n: int) -> float:
    import numpy as np

    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n // 2):
            fn(*a)
            fn(*b)
        samples.append((time.perf_counter() - t0) / (2 * (n // 2)))
    return 1e6 * float(np.percentile(samples, 25))


def run(req: dict) -> dict:
    import nimblephysics as nimble
    import numpy as np

    world = nimble.simulation.World()
    skel = load_skeleton(world, req["urdf"] if req["floating"] else _fixed_base(req["urdf"]))
    world.setGravity(np.array(req["gravity"]))
    world.setTimeStep(req["dt"])
    nv = skel.getNumDofs()
    if world.getActionSize() != nv:
        world.setActionSpace(list(range(nv)))
    states = [_vectors(skel, s, nv) for s in req["states"]]
    (qa, va, fa), (qb, vb, fb) = states
    xa, xb = np.concatenate([qa, va]), np.concatenate([qb, vb])

    step, forward_pass = world_calls(nimble, world)

    def step_jacobians(x, u):
        snap = forward_pass(x, u)
        return snap.getStateJacobian(world), snap.getActionJacobian(world)

    A, B = step_jacobians(xa, fa)
    repeat, n = req["repeat"], req["n"]
    out = {"nv": nv, "bodies": skel.getNumBodyNodes(), "A": A.tolist(), "B": B.tolist(),
           "dofs": [skel.getDofByIndex(i).getName() for i in range(nv)]}
    out["step"] = _time(step, (xa, fa), (xb, fb), repeat, 10 * n)
    out["step+jacobians"] = _time(step_jacobians, (xa, fa), (xb, fb), repeat, n)
    out["version"] = nimble_version()
    return out


def answer(run) -> int:
    """Run ``run(request)`` on the JSON request of stdin and write its answer, or why it failed, as one
    "@@JSON@@" line (what Nimble prints to stdout stays on other lines)."""
    req = json.load(sys.stdin)
    try:
        out = run(req)
    except Exception as e:  # report why, the benchmark goes on without Nimble
        out = failure(e)
    emit(out)
    return 0


def failure(e: Exception) -> dict:
    return {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc(limit=3)}


def emit(out: dict) -> None:
    sys.stdout.write("\n@@JSON@@" + json.dumps(out) + "\n")
    sys.stdout.flush()


def main() -> int:
    return answer(run)


if __name__ == "__main__":
    sys.exit(main())

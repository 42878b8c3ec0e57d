"""A world changed while another thread runs a call that released the GIL (rollout, the batches, a
trajectory's backward pass): the change raises a clear RuntimeError, never a crash or a silently mixed
result. The races run in a subprocess, so that a segfault fails the test instead of killing pytest."""

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from rdsupport import hinge_chain, world_of

import rigidiff as rd

ROOT = Path(rd.__file__).resolve().parent.parent

# A worker thread runs long GIL-free calls on one world (an arm, and a box that falls on the ground:
# constrained steps), over and over; the main thread keeps trying to
# change that world. Every change must either be refused with the "another thread" RuntimeError or (in
# the instants between two calls) succeed; the worker's calls must never fail except for a shape that
# a successful add_skeleton made stale. Prints "refused <kind> <count>" lines and "OK".
RACE = textwrap.dedent("""
    import sys, threading
    import numpy as np
    import rigidiff as rd

    call = sys.argv[1]
    world = rd.World()
    world.add_skeleton(rd.models.load("arm7"))
    box = rd.Skeleton("box")
    box.add_body("box", joint=rd.FreeJoint("free"), inertia=rd.Inertia(1.0, (0, 0, 0), 0.01 * np.eye(3))).add_shape(
        rd.Box((0.2, 0.2, 0.2)))
    world.add_skeleton(box)
    world.add_ground(height=-1.0)  # below the arm
    stop, failures, started = threading.Event(), [], threading.Event()

    def work():
        while not stop.is_set():
            try:
                q, nv = world.neutral_configuration(), world.nv
                q[world.joint("free").q_index + 2] = -0.8  # the box falls on the ground and rests there
                taus = np.zeros((3000, nv))
                if call == "rollout":
                    world.rollout(q, np.zeros(nv), taus)
                elif call == "step_batch":
                    world.step_batch(np.tile(q, (3000, 1)), taus, taus, threads=1)
                elif call == "rollout_batch":
                    world.rollout_batch(np.tile(q, (4, 1)), taus[:4], taus[:750], threads=2)
                elif call == "step_jacobians_batch":
                    world.step_jacobians_batch(np.tile(q, (300, 1)), taus[:300], taus[:300], threads=2)
                else:
                    traj = world.rollout(q, np.zeros(nv), taus[:600], record=True)
                    traj.backward(dL_dV=np.ones((601, nv)))
            except ValueError as exc:  # a shape made stale by an add_skeleton between two calls
                if "shape" not in str(exc):
                    failures.append(repr(exc))
            except RuntimeError as exc:  # the main thread is compiling the world right now, or (backward) it
                # changed the world between the recorded rollout and its backward
                if "another thread" not in str(exc) and "changed since the rollout was recorded" not in str(exc):
                    failures.append(repr(exc))
            except Exception as exc:
                failures.append(repr(exc))
            started.set()

    changes = {
        "rebuild": lambda i: world.rebuild(),
        "add_skeleton": lambda i: world.add_skeleton(rd.models.load("cartpole", name=f"cartpole{i}",
                                                                        load_geometry=False)),
        "set_parameters": lambda i: world.set_parameters({world.parameters().names[0]: 5.0 + i % 3}),
        "contact_options": lambda i: world.contact_options(erp=0.1 * (i % 2)),
        "dt": lambda i: setattr(world, "dt", 1e-3 if i % 2 else 5e-4),
        "gravity": lambda i: setattr(world, "gravity", (0, 0, -9.81 - i % 2)),
    }
    refused = dict.fromkeys(changes, 0)
    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    for i in range(400):
        for kind, change in changes.items():
            try:
                change(i)
            except RuntimeError as exc:
                if "another thread" not in str(exc):
                    failures.append(f"{kind}: {exc!r}")
                refused[kind] += 1
            except ValueError as exc:  # add_skeleton of a name a refused call did not add
                if "already has a skeleton" not in str(exc):
                    failures.append(f"{kind}: {exc!r}")
        if min(refused.values()) >= 3:
            break
    stop.set()
    worker.join()
    for kind, n in refused.items():
        print("refused", kind, n)
    assert not failures, failures
    # the world is usable again once the worker is done
    world.rebuild()
    world.step(world.neutral_configuration(), np.zeros(world.nv), np.zeros(world.nv))
    print("OK")
""")


@pytest.mark.parametrize("call", ["rollout", "step_batch", "rollout_batch", "step_jacobians_batch", "backward"])
def test_changing_a_world_during_a_call_in_another_thread_raises(call):
    out = subprocess.run([sys.executable, "-c", RACE, call], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, f"exit code {out.returncode}\n{out.stdout}\n{out.stderr[-3000:]}"
    assert out.stdout.strip().endswith("OK"), out.stdout
    refused = {line.split()[1]: int(line.split()[2]) for line in out.stdout.splitlines() if line.startswith("refused")}
    assert len(refused) == 6 and all(n > 0 for n in refused.values()), refused


def test_a_refused_change_names_the_problem_and_writes_nothing():
    w = world_of(hinge_chain(3, seed=1))
    q, v = np.zeros(3), np.zeros(3)
    name = w.parameters().names[0]
    running, done = threading.Event(), threading.Event()

    def long_rollouts():
        running.set()
        while not done.is_set():
            try:
                w.rollout(q, v, np.zeros((20_000, 3)))
            except RuntimeError as exc:  # it tried to start while the main thread was changing the world
                assert "another thread" in str(exc)

    th = threading.Thread(target=long_rollouts)
    th.start()
    running.wait()
    message = None
    deadline = time.monotonic() + 30.0  # a loaded machine may not run the rollout thread for a while
    while message is None and time.monotonic() < deadline:  # a try may land between two rollouts (allowed)
        before = w.parameters().values[0]
        try:
            w.set_parameters({name: 1.5 * before})
        except RuntimeError as exc:
            message = str(exc)
            assert w.parameters().values[0] == before  # the refused change wrote nothing
            break
    done.set()
    th.join()
    assert message is not None and "running rollout in another thread" in message and "join" in message, message

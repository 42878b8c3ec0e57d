"""The README's Python examples run as written, and its two set-up commands are the ones CI runs."""

import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_python_blocks_run(capsys):
    """Each block runs as written, prints what it shows, and what it shows is the feature working."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
        printed = capsys.readouterr().out
        assert printed.strip(), f"this README block prints nothing:\n{block}"
    world = namespace["world"]
    assert world.nv == 2 and namespace["jac"].A.shape == (4, 4)
    assert abs(namespace["Q"][-1, 1] - 0.3) > 1.0  # the pole falls
    assert namespace["quad"].nv == 18
    # arm7: from a pose inside its limits it moves, and its gradients are not zero
    arm, q0, traj = namespace["arm"], namespace["q0"], namespace["traj"]
    lower = np.concatenate([arm.joint(n).lower for n in arm.joint_names])
    upper = np.concatenate([arm.joint(n).upper for n in arm.joint_names])
    assert np.all((lower <= q0) & (q0 <= upper)) and np.all((lower <= traj.q) & (traj.q <= upper))
    assert np.abs(traj.q[-1] - q0).max() > 0.1
    assert np.all(np.abs(namespace["g"].parameters) > 1.0)  # d(loss)/d(damping) of every joint
    assert np.abs(namespace["J"].P).max() > 1e-3
    feet = namespace["contacts"]  # the quadruped of the contact block stands on its four feet
    assert len(feet) == 4 and set(feet.body_b) == {"ground"}
    assert feet.normal_impulses.sum() == pytest.approx(namespace["scene"].total_mass * 9.81e-3, rel=1e-6)
    swing = namespace["res"]  # the cartpole swung up by iLQR, and its masses identified from that motion
    assert abs(swing.q[-1]).max() < 0.05 and abs(swing.q[:, 1]).max() > 3.0
    truth = {"cart/mass": 1.0, "pole/mass": 0.1}
    start, fit = namespace["wrong"], namespace["fit"]
    assert all(abs(start[k] - truth[k]) > 0.5 * truth[k] for k in truth)  # a wrong start ...
    assert fit.initial_residual > 1e3 * max(fit.residual, 1e-12)  # ... that the fit moves away from
    assert fit.values == pytest.approx(truth, rel=1e-6)  # to the truth


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    command = 'pip install ".[test]" && pytest'
    assert command in README and command in ci
    assert "pip install . && rigidiff demo" in README

"""The README's Python examples run as written, and its two set-up commands are the ones CI runs."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    world = namespace["world"]
    assert world.nv == 2 and namespace["jac"].A.shape == (4, 4)
    assert namespace["quad"].nv == 18
    feet = namespace["contacts"]  # the quadruped of the contact block stands on its four feet
    assert len(feet) == 4 and set(feet.body_b) == {"ground"}
    assert feet.normal_impulses.sum() == pytest.approx(namespace["scene"].total_mass * 9.81e-3, rel=1e-6)
    swing = namespace["res"]  # the cartpole swung up by iLQR, and its masses identified from that motion
    assert abs(swing.q[-1]).max() < 0.05 and abs(swing.q[:, 1]).max() > 3.0
    assert namespace["fit"].values == pytest.approx({"cart/mass": 1.0, "pole/mass": 0.1}, rel=1e-6)


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    command = 'pip install ".[test]" && pytest'
    assert command in README and command in ci
    assert "pip install . && rigidiff demo" in README

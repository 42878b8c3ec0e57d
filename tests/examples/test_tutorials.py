"""The tutorials in docs/ run as written: each file's Python blocks, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
TUTORIALS = sorted(DOCS.glob("tutorial_*.md"))


def _run(path: Path) -> dict:
    """Exec the ```python blocks of ``path`` one after the other in a fresh namespace; return it."""
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
    assert blocks, f"{path.name} has no Python block"
    namespace: dict = {"__name__": "__tutorial__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{path.name} (block {i + 1})", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


def test_the_tutorials_are_there():
    assert {"tutorial_build_a_robot.md", "tutorial_load_a_urdf.md", "tutorial_jacobians.md"} <= {
        p.name for p in TUTORIALS}


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # whatever a tutorial writes lands here
    ns = _run(path)
    check = CHECKS.get(path.stem)
    assert check is not None, f"no checks for {path.name}: add them to CHECKS"
    check(ns)


def _build_a_robot(ns: dict) -> None:
    world = ns["world"]
    assert (ns["arm"].nq, ns["arm"].nv) == (7, 6)
    assert (world.nq, world.nv) == (14, 12)
    assert world.joint_names == ["slide", "shoulder", "elbow", "wrist", "crate_free"]
    assert (ns["crate_q"], ns["crate_v"]) == (slice(7, 14), slice(6, 12))
    contacts = ns["contacts"]  # the crate came to rest on its four corners and the ground carries it
    assert len(contacts) == 4 and set(contacts.body_b) == {"ground"}
    assert contacts.normal_impulses.sum() == pytest.approx(9.81 * world.dt, rel=1e-6)
    assert abs(ns["V"][-1]).max() < 1e-6
    assert np.allclose(ns["J"] @ ns["v"], ns["twist"])


def _load_a_urdf(ns: dict) -> None:
    assert ns["world"].nv == 7 and ns["status"] == 0
    assert (ns["legs"].nq, ns["legs"].nv) == (19, 18)
    if ns["robots"] is not None:
        assert ns["arm_world"].nv == 9
        assert any("mimic" in str(w.message) for w in ns["caught"])
        if ns["pin"] is not None:
            assert np.abs(ns["arm_world"].inverse_dynamics(ns["q"], ns["v"], ns["a"]) - ns["tau_pin"]).max() < 1e-9


def _jacobians(ns: dict) -> None:
    assert (ns["world"].nq, ns["world"].nv) == (5, 4)
    assert ns["report"].passed and ns["param_report"].passed
    assert not ns["bad"].passed and ns["bad"].failed == ["dv_dtau"]
    assert all(r.passed for r in ns["checks"].values())
    assert ns["slopes"][3.0] == pytest.approx(0.0, abs=1e-12)  # sticking: the mode holds the box still
    assert ns["slopes"][8.0] == pytest.approx(ns["scene"].dt, rel=1e-9)  # sliding: dt / m, m = 1 kg
    assert ns["Jf"].dv_dp[0] == pytest.approx([-9.81e-3 / 2] * 2, rel=1e-6)
    grads, h = ns["grads"], ns["h"]
    fd = (ns["loss"](ns["q"], ns["plus"]) - ns["loss"](ns["q"], ns["minus"])) / (2 * h)
    assert grads.tau[ns["t"], ns["k"]] == pytest.approx(fd, rel=1e-5)


CHECKS = {
    "tutorial_build_a_robot": _build_a_robot,
    "tutorial_load_a_urdf": _load_a_urdf,
    "tutorial_jacobians": _jacobians,
}

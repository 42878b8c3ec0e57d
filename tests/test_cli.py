"""The rigidiff command: demo, info and simulate."""

import numpy as np

import rigidiff as rd
from rigidiff.cli import main


def test_demo_passes_its_checks(capsys):
    assert main(["demo", "--fast", "--no-picture"]) == 0  # tests/viz checks the picture
    out = capsys.readouterr().out
    assert "all checks passed" in out and "step Jacobians" in out and "energy drift" in out


def test_info_lists_joints_in_layout_order(capsys):
    assert main(["info", rd.models.path("quadruped"), "--floating-base"]) == 0
    out = capsys.readouterr().out
    assert "nq = 19, nv = 18" in out
    assert out.index("root_joint") < out.index("FL_HAA") < out.index("HR_KFE")


def test_simulate_writes_a_trajectory(tmp_path, capsys):
    out_file = tmp_path / "traj.npz"
    args = ["simulate", rd.models.path("double_pendulum"), "--steps", "50", "--q0", "0.5,0", "--out", str(out_file)]
    assert main(args) == 0
    data = np.load(out_file)
    assert data["q"].shape == (51, 2) and data["v"].shape == (51, 2)
    assert data["q"][0, 0] == 0.5 and np.abs(data["v"][-1]).max() > 0  # it swings under gravity


def test_errors_are_reported_not_raised(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.urdf")]) == 1
    assert "error" in capsys.readouterr().err
    assert main(["simulate", rd.models.path("double_pendulum"), "--q0", "1,2,3", "--out", str(tmp_path / "x")]) == 1
    assert "--q0 must have 2" in capsys.readouterr().err

"""The rigidiff command: demo, info and simulate."""

import numpy as np
import pytest

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


def test_lenient_loads_what_strict_refuses(tmp_path, capsys):
    """A link whose inertia is not positive semi-definite (as tiago's antennas): refused with a hint to
    --lenient, loaded with a warning under it."""
    urdf = tmp_path / "bad_inertia.urdf"
    urdf.write_text("""<robot name="r">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="5e-3" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>""")
    assert main(["info", str(urdf)]) == 1
    err = capsys.readouterr().err
    assert "'arm'" in err and "positive semi-definite" in err and "--lenient" in err
    with pytest.warns(UserWarning) as record:  # two: the raised moments then break the triangle inequality
        assert main(["info", str(urdf), "--lenient"]) == 0
    assert any("positive semi-definite" in str(w.message) for w in record)
    assert "nq = 1, nv = 1" in capsys.readouterr().out

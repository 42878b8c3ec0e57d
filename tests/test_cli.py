"""The rigidiff command: demo, models, info, simulate and check-grad."""

import dataclasses
import warnings

import numpy as np
import pytest

import rigidiff as rd
from rigidiff.cli import main


def test_demo_passes_its_checks_and_says_what_each_checks(capsys):
    assert main(["demo", "--fast", "--no-picture"]) == 0  # tests/viz checks the picture
    out = capsys.readouterr().out
    lines = out.splitlines()
    checks = [i for i, line in enumerate(lines) if line.startswith("[")]
    assert len(checks) == 9 and "all 9 checks passed" in out and "[FAILED]" not in out
    for i in checks:  # "[ok] <topic>: <what it shows, in words>" then what was measured against which bound
        topic, _, what = lines[i][len("[ok] "):].partition(": ")
        assert lines[i].startswith("[ok] ") and topic and len(what.split()) >= 8, lines[i]
        measured = lines[i + 1]
        assert measured.startswith("     ") and "must" in measured, measured
    for topic in ("energy", "kinematics", "dynamics", "step gradients", "reverse mode", "free fall", "contact",
                  "gradients through contact", "friction"):
        assert any(lines[i].startswith(f"[ok] {topic}: ") for i in checks), topic


def test_demo_reports_a_failed_check(capsys, monkeypatch):
    import rigidiff.demo as demo

    monkeypatch.setattr(demo, "box_slide_distance", lambda mu, v0: 1.0)  # not v0^2 / (2 mu g)
    assert main(["demo", "--fast", "--no-picture"]) == 1
    out = capsys.readouterr().out
    assert "[FAILED] friction: " in out and "1 of 9 checks FAILED" in out


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
    assert main(["info", str(tmp_path / "missing.urdf")]) == 2
    assert "is neither a URDF file nor a shipped model" in capsys.readouterr().err
    assert main(["simulate", rd.models.path("double_pendulum"), "--q0", "1,2,3", "--out", str(tmp_path / "x")]) == 2
    assert "--q0 must have 2" in capsys.readouterr().err


def test_shipped_models_by_name(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    for name in rd.models.available():
        assert name in out and rd.models.path(name) in out
    assert main(["info", "arm7"]) == 0
    assert "nq = 7, nv = 7" in capsys.readouterr().out


def test_an_unknown_model_names_the_shipped_ones(capsys):
    assert main(["info", "arm8"]) == 2
    err = capsys.readouterr().err
    assert "'arm8' is neither a URDF file nor a shipped model" in err
    assert "arm7, cartpole, double_pendulum, quadruped" in err and len(err.splitlines()) == 1


def test_simulate_ground_catches_a_floating_robot(tmp_path, capsys):
    """Without --ground the floating quadruped falls freely (z = 1 - g t^2 / 2 after 0.5 s); with it, it
    lands on its feet and stays above the plane."""
    free, grounded = tmp_path / "free.npz", tmp_path / "ground.npz"
    base = ["simulate", "quadruped", "--floating-base", "--steps", "500", "--dt", "1e-3"]
    assert main([*base, "--out", str(free)]) == 0
    assert main([*base, "--ground", "--out", str(grounded)]) == 0
    assert "on a ground plane z = 0" in capsys.readouterr().out
    z_free, z_ground = np.load(free)["q"][:, 2], np.load(grounded)["q"][:, 2]
    assert z_free[-1] == pytest.approx(1.0 - 0.5 * 9.81 * 0.5**2, abs=0.01)
    assert 0.1 < z_ground.min() and abs(np.load(grounded)["v"][-1, 2]) < 0.5


def test_out_in_a_missing_folder_is_refused_before_simulating(tmp_path, capsys):
    # exit 2 (an invalid argument) at once; it was exit 1 with an errno message after the whole simulation
    out = tmp_path / "missing" / "traj.npz"
    assert main(["simulate", "double_pendulum", "--steps", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out: the folder {str(out.parent)!r} does not exist" in err and "Traceback" not in err
    assert not out.parent.exists()


def test_out_is_not_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "traj.npz"
    out.write_bytes(b"keep me")
    args = ["simulate", "double_pendulum", "--steps", "5", "--out", str(tmp_path / "traj")]  # savez adds .npz
    assert main(args) == 2
    assert f"--out: {out} exists; give --force to overwrite it" in capsys.readouterr().err
    assert out.read_bytes() == b"keep me"
    assert main([*args, "--force"]) == 0
    assert np.load(out)["q"].shape == (6, 2)


def test_every_option_has_help():
    from rigidiff.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert set(commands) == {"models", "info", "simulate", "check-grad", "demo"}
    for name, sub in commands.items():
        for action in sub._actions:
            assert action.help, f"rigidiff {name} {action.option_strings or action.dest} has no help"


@pytest.mark.parametrize("args", [["simulate", "double_pendulum", "--steps", "0"],
                                  ["simulate", "double_pendulum", "--dt", "0"],
                                  ["simulate", "double_pendulum", "--q0", "a,b"],
                                  ["simulate", "double_pendulum", "--q0", "nan,0"],
                                  ["simulate", "double_pendulum", "--height", "2"],
                                  ["simulate", "quadruped", "--floating-base", "--height", "inf"],
                                  ["check-grad", "double_pendulum", "--seed", "-1"],
                                  ["check-grad", "double_pendulum", "--samples", "0"],
                                  ["info", "no_such_model"],
                                  ["info", "arm7", "--no-such-option"]])
def test_invalid_arguments_exit_2_with_one_line(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error:" in err


def test_simulate_out_must_name_a_file(tmp_path, capsys):
    # a folder was written to as the hidden file "<folder>/.npz"
    for out in (str(tmp_path) + "/", str(tmp_path)):
        assert main(["simulate", "double_pendulum", "--steps", "2", "--out", out]) == 2
        assert "--out must name a file" in capsys.readouterr().err
    assert not (tmp_path / ".npz").exists()


def test_warnings_print_without_a_source_line(tmp_path):
    """A warning from the loader (panda's mimic joint) is one line, not the line of cli.py that raised it
    (run in a process of its own: pytest records warnings instead of printing them)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    # the rigidiff this test imports, run outside the source tree (whose package has no extension)
    env = dict(os.environ, PYTHONPATH=str(Path(rd.__file__).resolve().parents[1]))
    panda = str(robots / "panda_description/urdf/panda.urdf")
    proc = subprocess.run([sys.executable, "-m", "rigidiff.cli", "info", panda,
                           "--package-dir", str(robots)], env=env, cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    warning_lines = proc.stderr.strip().splitlines()
    assert warning_lines and all(line.startswith("rigidiff: warning: ") for line in warning_lines)
    assert "mimic" in proc.stderr and "load_urdf(" not in proc.stderr


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


# ------------------------------------------------------------------------------------------ check-grad


def _check_grad(capsys, *args):
    rc = main(["check-grad", *args])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize("model", rd.models.available())
def test_check_grad_all_parameters_passes_on_every_shipped_model(model, capsys):
    """The README's `rigidiff check-grad model.urdf --parameters all`: steps scaled to each parameter and
    kept where the step is defined (arm7's small link inertias moved by 1e-2 made a joint's articulated
    inertia singular), one-sided second-order differences at a bound (cartpole's armature of 0)."""
    floating = ["--floating-base"] if model == "quadruped" else []
    rc, out, err = _check_grad(capsys, rd.models.path(model), *floating, "--samples", "1", "--parameters", "all")
    assert rc == 0, out + err
    assert "all 1 samples passed" in out and "dv_dp" in out


@pytest.mark.parametrize("group", ["inertia", "damping", "stiffness", "armature", "gravity", "link3", "joint4",
                                   "link2/inertia_xy"])
def test_check_grad_every_parameter_choice_on_arm7(group, capsys):
    rc, out, err = _check_grad(capsys, rd.models.path("arm7"), "--samples", "1", "--parameters", group)
    assert rc == 0, out + err


@pytest.mark.parametrize("robot,extra", [("panda_description/urdf/panda.urdf", []),
                                         ("solo_description/robots/solo12.urdf", ["--floating-base"])])
def test_check_grad_all_parameters_on_example_robot_data(robot, extra, capsys):
    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    rc, out, err = _check_grad(capsys, str(robots / robot), "--package-dir", str(robots), *extra, "--samples", "1",
                               "--parameters", "all")
    assert rc == 0, out + err


@pytest.mark.parametrize("robot,extra", [
    ("ur_description/urdf/ur10_robot.urdf", ["--floating-base"]),
    ("pr2_description/urdf/pr2.urdf", []),
    ("icub_description/robots/icub.urdf", ["--floating-base"]),
    ("human_description/robots/human.urdf", []),
], ids=["ur10-floating", "pr2", "icub-floating", "human"])
def test_check_grad_steps_adapt_on_example_robot_data(robot, extra, capsys):
    """Where the differences, not the derivatives, were off (each checked against small-step central
    differences): a floating UR10's base inertia stepped at the scale of the whole arm (7e-2), a PR2
    torque 0.03 beyond its effort limit stepped across the clip (6e-4 where the column is 0), a point
    mass on iCub's neck whose centre of mass was stepped by 7e-12 and a head with no rotational inertia
    whose one step could not suit both its neck's row and the legs' (1.3 and 5e-2), and a step of a
    product of inertia of human.urdf that made an articulated inertia singular."""
    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the models' own defects, reported when loading
        rc, out, err = _check_grad(capsys, str(robots / robot), "--package-dir", str(robots), *extra,
                                   "--samples", "3", "--parameters", "all")
    assert rc == 0, out + err
    assert "all 3 samples passed" in out


def test_check_grad_central_differences_of_every_parameter_pass(capsys):
    """A central parameter step is eps times the parameter's scale, with no floor of eps: at least eps
    (1e-5) moved arm7's small inertias and armatures by up to 1 % of their scale (off by 2e-3)."""
    for model, extra in (("arm7", []), ("quadruped", ["--floating-base"])):
        rc, out, err = _check_grad(capsys, rd.models.path(model), *extra, "--samples", "2", "--method", "central",
                                   "--parameters", "all")
        assert rc == 0, out + err


def test_check_grad_default_run_passes_on_solo12(capsys):
    """All 20 default states, every parameter: solo12's placeholder effort limits (1000 N m on links of
    5e-4 kg m^2) used to set torques that accelerated joints by 1e5 rad/s^2, where the round-off of a
    step swamped the differences of its smallest inertias (one state failed by 1.2e-5)."""
    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    rc, out, err = _check_grad(capsys, str(robots / "solo_description/robots/solo12.urdf"), "--package-dir",
                               str(robots), "--floating-base", "--parameters", "all")
    assert rc == 0, out + err
    assert "all 20 samples passed" in out


def test_check_grad_scales_joint_parameters_by_the_inertia_the_dof_moves(capsys):
    """example-robot-data's double pendulum on a free base: a base rotation has M_kk = 0.02 but moves an
    inertia 1 / (M^-1)_kk of 3e-4; steps scaled by M_kk put its stiffness and armature columns off by 100 %."""
    robots = rd.models.example_robot_data_dir()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    with pytest.warns(UserWarning, match="effort"):
        rc, out, err = _check_grad(capsys, str(robots / "double_pendulum_description/urdf/double_pendulum.urdf"),
                                   "--package-dir", str(robots), "--floating-base", "--samples", "2",
                                   "--parameters", "root_joint")
    assert rc == 0, out + err


def test_check_grad_of_a_model_without_moving_joints_is_one_line_and_exit_2(tmp_path, capsys):
    urdf = tmp_path / "brick.urdf"
    urdf.write_text('<robot name="brick"><link name="base"><inertial><mass value="1"/>'
                    '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>')
    rc, out, err = _check_grad(capsys, str(urdf), "--samples", "1")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "has no moving joints (nv = 0)" in err and "--floating-base" in err
    rc, out, err = _check_grad(capsys, str(urdf), "--samples", "1", "--floating-base")
    assert rc == 0, out + err


def test_check_grad_eps_sets_the_first_step(capsys):
    rc, out, _ = _check_grad(capsys, rd.models.path("double_pendulum"), "--samples", "1", "--eps", "1e-3",
                             "--parameters", "gravity")
    assert rc == 0 and "ridders differences (eps 0.001)" in out
    rc, out, _ = _check_grad(capsys, rd.models.path("double_pendulum"), "--samples", "1", "--method", "central",
                             "--eps", "1e-4")
    assert rc == 0 and "central differences (eps 0.0001)" in out


@pytest.mark.parametrize("args,message", [
    (["--samples", "0"], "argument --samples: must be >= 1, got 0"),
    (["--eps", "0"], "argument --eps: must be > 0, got 0"),
    (["--eps", "x"], "argument --eps: must be a number, got 'x'"),
    (["--dt=-1e-3"], "argument --dt: must be > 0, got -1e-3"),
    (["--atol=-1"], "argument --atol: must be >= 0, got -1"),
    (["--parameters", "nosuch"], "--parameters: no parameter named 'nosuch'"),
])
def test_check_grad_bad_arguments_exit_2_in_one_line(args, message, capsys):
    rc, out, err = _check_grad(capsys, rd.models.path("double_pendulum"), *args)
    assert rc == 2 and out == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_failing_computation_is_one_line_and_exit_1(tmp_path, capsys):
    """A point mass on its own axis: the step's articulated inertia is singular (a RuntimeError)."""
    urdf = tmp_path / "point.urdf"
    urdf.write_text("""<robot name="r"><link name="base"/>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>""")
    rc, out, err = _check_grad(capsys, str(urdf), "--samples", "1")
    assert rc == 1
    assert "is singular" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_failed_central_check_points_to_ridders(capsys, monkeypatch):
    true_step_jacobians = rd.World.step_jacobians

    def wrong(self, q, v, tau, wrt=None, f_ext=None):
        J = true_step_jacobians(self, q, v, tau)
        return dataclasses.replace(J, dv_dv=J.dv_dv + 1e-3)

    monkeypatch.setattr(rd.World, "step_jacobians", wrong)
    rc, out, _ = _check_grad(capsys, "double_pendulum", "--samples", "1", "--method", "central")
    assert rc == 1 and "the default --method ridders extrapolates them" in out
    rc, out, _ = _check_grad(capsys, "double_pendulum", "--samples", "1")
    assert rc == 1 and "--method ridders" not in out


def test_output_into_a_closed_pipe_ends_quietly(capsys, monkeypatch):
    """`rigidiff models | head -1`: the reader goes away; no "Broken pipe" error line and no traceback."""
    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert main(["models"]) == 1
    assert capsys.readouterr().err == ""

"""Every script in examples/ runs in fast mode, prints the numbers it promises and writes its plots."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rigidiff

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
HAVE_MPL = importlib.util.find_spec("matplotlib") is not None
MIN_PNG_BYTES = 8_000  # a blank 800x400 figure is about 5 KB; real curves take more


def run_example(path: Path, out: Path, *args: str, env_extra: dict | None = None) -> str:
    """Run an example as a user would (cwd = repo root) with the rigidiff that this test imports."""
    env = dict(os.environ)
    pkg_parent = str(Path(rigidiff.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent, *filter(None, [env.get("PYTHONPATH")])])
    env["MPLBACKEND"] = "Agg"
    env.pop("RIGIDIFF_FAST", None)
    # the tests already run one worker per core: an example that also took every core for its own threads
    # (rigidiff's, OpenBLAS's) would make them wait on each other; rigidiff's results do not depend on the count
    env.setdefault("RIGIDIFF_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, str(path), "--out", str(out), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{path.name} exited with {proc.returncode}:\n{report}"
    return proc.stdout


def number(report: str, pattern: str) -> float:
    """The first number captured by ``pattern`` (a regex with one group) in the report."""
    m = re.search(pattern, report)
    assert m, f"no line matching {pattern!r} in the report:\n{report}"
    return float(m.group(1))


NUM = r"([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"


def check_pngs(out: Path, names: list[str], report: str):
    if not HAVE_MPL:
        assert "matplotlib is not installed" in report
        return
    for name in names:
        png = out / name
        assert png.is_file(), f"{name} was not written; report:\n{report}"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{name} is not a PNG"
        assert len(data) > MIN_PNG_BYTES, f"{name} is only {len(data)} bytes"


# ------------------------------------------------------------------------------ per-example checks


def check_cartpole(report: str, out: Path):
    assert "skeleton 'cartpole': 2 bodies, nq = 2, nv = 2" in report
    drift = number(report, rf"max energy drift \(dt = 1 ms\): {NUM} %")
    drift_half = number(report, rf"max energy drift \(dt = 0\.5 ms\): {NUM} %")
    assert 0.0 < drift < 1.0  # percent of the largest kinetic energy
    assert 0.0 < drift_half < drift
    ratio = number(report, rf"drift ratio dt / \(dt/2\): {NUM}")
    assert 1.8 < ratio < 2.2  # semi-implicit Euler is first order
    # energy conserved: the pole climbs back to (almost) the mirror of its start, 2 pi - 0.3
    top = number(report, rf"climbs back to {NUM} rad")
    assert abs(top - (2 * 3.141592653589793 - 0.3)) < 0.01
    assert number(report, rf"final cart error {NUM} m") < 0.02
    assert number(report, rf"work-energy balance error: {NUM} %") < 1.0
    check_pngs(out, ["cartpole.png"], report)


def check_urdf_robot(report: str, out: Path):
    assert "skeleton 'arm7': 9 bodies, nq = 7, nv = 7" in report
    assert number(report, rf"max tracking error during the move: {NUM} rad") < 0.05
    assert number(report, rf"final tracking error: {NUM} rad") < 1e-3
    assert number(report, rf"final end-effector error: {NUM} m") < 1e-3
    assert number(report, rf"peak \|tau\| / effort limit: {NUM}") <= 1.0
    # the step is a pure function: replaying the torques with rollout gives the same trajectory
    assert number(report, rf"rollout replay vs step loop: max difference {NUM}") < 1e-12
    check_pngs(out, ["arm7_joints.png", "arm7_end_effector.png"], report)


def check_pinocchio(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0, as it should
    assert "v layout identical to Pinocchio: yes" in report
    assert "q layout identical to Pinocchio: yes" in report
    rows = [
        "inverse dynamics", "inverse dynamics + f_ext", "forward dynamics", "forward dynamics + f_ext",
        "mass matrix", "mass matrix inverse", "bias forces", "gravity forces", "body poses",
        "body Jacobians (world)", "body Jacobians (local)", "centre of mass", "centre of mass Jacobian",
        "kinetic energy", "potential energy",
    ]
    for row in rows:
        err = number(report, rf"(?m)^{re.escape(row)} +{NUM}")
        assert err < 1e-9, f"{row}: relative error {err} against Pinocchio"
    timed = re.findall(rf"(?m)^(.+?) +{NUM} +{NUM} +{NUM} +{NUM}$", report)
    assert len(timed) >= 5, f"expected a timing column for at least 5 rows:\n{report}"
    for _, _, t_rd, t_pin, _ in timed:
        assert 0.0 < float(t_rd) < 1e4 and 0.0 < float(t_pin) < 1e4  # microseconds
    assert number(report, rf"largest relative error: {NUM}") < 1e-9
    check_pngs(out, ["pinocchio_timings.png"], report)


def check_gradients(report: str, out: Path):
    assert number(report, rf"rollout gradient vs central differences: max relative error {NUM}") < 1e-6
    assert number(report, rf"largest relative parameter error: {NUM}") < 1e-6
    assert number(report, rf"final joint error: {NUM} rad") < 0.01
    assert number(report, rf"final speed {NUM} rad/s") < 0.05
    ratio = number(report, rf"backward / forward ratio: {NUM}")
    assert 0.5 < ratio < 10.0  # a timing on a shared machine: only its order of magnitude is checked
    check_pngs(out, ["gradient_fits.png"], report)


def check_contact(report: str, out: Path):
    rest = number(report, rf"at rest after {NUM} s")
    assert 0.1 < rest < 1.0  # the shapes fall for about 0.2 s, then nothing moves
    assert number(report, rf"ground impulses / weight of the pile: {NUM}") == pytest.approx(1.0, abs=1e-6)
    assert "point_face" in report
    e2 = 0.7**2
    assert abs(number(report, rf"first rebound ratio: {NUM}") - e2) < 0.02 * e2
    check_pngs(out, ["contact_heights.png"], report)


def check_panda_push(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    assert number(report, rf"box displacement along x: {NUM} m") >= 0.05
    assert number(report, rf"box height: max deviation from resting {NUM} m") < 2e-3
    assert number(report, rf"max tilt {NUM} deg") < 1.0
    assert number(report, rf"pad-box contacts during {NUM} steps") > 100
    pairs = re.search(r"bodies in contact: (.*)", report).group(1).split(", ")
    assert set(pairs) <= {"box-ground", "box-panda_leftfinger", "box-panda_rightfinger"} and len(pairs) >= 2
    assert number(report, rf"max penetration: {NUM} m") < 1e-3
    assert number(report, rf"ground friction / normal impulse while sliding: {NUM}") == pytest.approx(0.5, abs=1e-6)
    assert number(report, rf"vertical balance: .*?: {NUM}") == pytest.approx(1.0, abs=1e-6)
    assert number(report, rf"replay vs step loop: max difference {NUM}") < 1e-12
    assert number(report, rf"central differences .*?: max relative error {NUM}") < 1e-6
    assert "every contact mode kept" in report
    check_pngs(out, ["panda_push.png"], report)


def check_sysid(report: str, out: Path):
    assert "method: rollout" in report and "method: regressor" in report  # the box has contacts, the pendulum none
    assert number(report, rf"box pushed along the ground: .*?, {NUM} with contacts") > 0
    errors = [float(x) for x in re.findall(rf"largest relative error: {NUM}", report)]
    assert len(errors) == 2 and max(errors) < 1e-6, errors
    for start, end in re.findall(rf"residual \(RMS\): {NUM} -> {NUM}", report):
        assert float(end) < 1e-9 < float(start)
    assert number(report, rf"fitted model {NUM} m") < 1e-9 < number(report, rf"start model {NUM} m")
    assert "every fitted value within a relative 1e-06 of the truth" in report
    check_pngs(out, ["sysid_box.png"], report)


def check_swing_up(report: str, out: Path):
    costs = [float(x) for x in re.findall(rf": cost {NUM} after", report)]
    assert len(costs) == 2 and max(costs) < 0.5, report
    assert report.count("(converged: True)") == 2
    assert number(report, rf"cost difference: {NUM}") < 1e-6
    assert number(report, rf"largest torque difference: {NUM} N") < 0.05
    assert number(report, rf"multiple shooting defects: {NUM}") < 1e-8
    for final in re.findall(r"final q = \[([^\]]*)\]", report):
        assert np.abs(np.array(final.split(), dtype=float)).max() < 0.02
    assert number(report, rf"largest tilt after the first push {NUM} rad") < 0.2
    check_pngs(out, ["cartpole_swing_up.png"], report)
    if HAVE_MPL:
        assert (out / "cartpole_swing_up.gif").stat().st_size > 20_000


def check_jump_worm(report: str, out: Path):
    rest = number(report, rf"resting centre of mass height: {NUM} m")
    guess = number(report, rf"first guess .*?centre of mass at T = {NUM} m")
    assert number(report, rf"first guess vs central differences .*?: max relative error {NUM}") < 1e-6
    assert "every contact mode kept" in report
    height = number(report, rf"re-simulated with world.rollout: centre of mass at T = {NUM} m")
    assert height > 1.4 * guess and height > guess + 0.05 and height > 5 * rest, report
    assert number(report, rf"lowest point of the worm at T: {NUM} m above the ground") > 0.05  # in the air
    assert number(report, rf"apex of the flight .*?: centre of mass at {NUM} m") >= height
    # Adam's endpoint moves with round-off (a 1e-12 change of the torques can switch a contact event of
    # the rollout): 0.2 to 2.1 mm deep at dt = 10 ms; a worm through the ground would be centimetres deep
    assert number(report, rf"deepest penetration into the ground: {NUM} mm") < 3.0
    assert number(report, rf"the same torques at dt/2: centre of mass at T = {NUM} m") > guess + 0.05
    check_pngs(out, ["jump_worm.png", "jump_worm_frames.png"], report)


def check_catapult(report: str, out: Path):
    miss = number(report, rf"initial miss {NUM} m")
    assert miss > 0.3
    # iLQR through the contacts: about 2-4 cm after 6 to 12 iterations, from 58 cm
    assert number(report, rf"re-simulated with world.rollout: .*?distance to the target {NUM} m") < 0.1 * miss
    assert 0.2 < number(report, rf"the box leaves the cup at t = {NUM} s") < 0.8
    # the whirling cup lets the box creep into its wall by about a dt^2 / erp (3 mm at the release speed,
    # more while the arm still speeds up); a box that went through a wall or the ground would overlap by
    # its size, 60 mm
    assert number(report, rf"deepest overlap of two shapes: {NUM} mm") < 10.0
    line = re.search(r"peak \|torque\| / limit: (.*)", report).group(1)
    ratios = re.findall(rf"(?:shoulder|elbow|wrist) {NUM}", line)
    assert len(ratios) == 3 and max(float(r) for r in ratios) <= 1.0 + 1e-9, ratios
    check_pngs(out, ["catapult.png", "catapult_frames.png"], report)


def check_solo12_push(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    assert "at 100 Hz" in report
    moved = number(report, rf"largest move along y {NUM} mm")
    assert 0.5 < moved < 20.0  # the push moves the base, the stance takes it
    assert number(report, rf"largest tilt {NUM} deg") < 2.0
    assert number(report, rf"posture error at the end: {NUM}") < 1e-2
    assert number(report, rf"feet on the ground: at least {NUM} in every step") == 4
    median, worst = number(report, rf"replans: .*?median {NUM} ms"), number(report, rf"replans: .*?, max {NUM} ms")
    assert 0.0 < median <= worst < 5000.0  # a timing on a shared machine: only its sanity is checked
    check_pngs(out, ["solo12_push.png"], report)


def check_solo12_mpc(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    # held contact modes: sphere feet leave the base's 6 dofs; mesh feet as many as their touching vertices allow
    assert 1 <= number(report, rf"contact mode held: URDF foot meshes {NUM}") <= 6
    assert number(report, rf"sphere feet {NUM}") == 6
    start = number(report, rf"base height: start {NUM} m")
    end = number(report, rf"base height: .*?, end {NUM} m")
    target = number(report, rf"base height: .*?, target {NUM} m")
    assert start < target - 0.08  # crouched about 11 cm below the standing height
    assert abs(end - target) < 3e-3
    assert number(report, rf"time to within 1 cm of the target height \(for good\): {NUM} s") < 0.8
    assert number(report, rf"after it: max tilt {NUM} deg") < 2.0
    assert number(report, rf"max height error {NUM} mm") < 10.0
    assert number(report, rf"base tilt: final {NUM} deg") < 0.5
    assert "only the feet: yes" in report
    assert number(report, rf"feet on the ground: at least {NUM} in every step") == 4
    assert number(report, rf"largest sliding distance of a foot {NUM} mm") < 10.0
    assert number(report, rf"peak \|tau\| {NUM} N m") <= number(report, rf"peak .*?\(bound {NUM} N m\)") + 1e-9
    mean, worst = number(report, rf"replans: .*?: mean {NUM} ms"), number(report, rf"replans: .*?, max {NUM} ms")
    assert 0.0 < mean <= worst < 5000.0  # a timing on a shared machine: only its sanity is checked
    check_pngs(out, ["solo12_stand_up.png", "solo12_stand_up_frames.png"], report)


def check_reach_and_push(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    first = number(report, rf"iLQR: cost {NUM} ->")
    last = number(report, rf"iLQR: cost .*? -> {NUM} in")
    assert last < first / 20  # the first guess (gravity compensation) leaves the box where it is
    curve = [float(x) for x in re.findall(NUM, re.search(r"cost curve: (.*)", report).group(1))]
    assert all(b <= a for a, b in zip(curve, curve[1:])), curve  # iLQR accepts decreases only
    assert number(report, rf"box error: {NUM} mm") < 5.0
    assert number(report, rf"box moved {NUM} m along x") > 0.06
    assert number(report, rf"box tilt: max {NUM} deg") < 2.0
    assert number(report, rf"hand target error: {NUM} mm") < 10.0
    assert number(report, rf"pad-box contact in {NUM} of") > 10
    assert number(report, rf"peak \|tau\| / effort limit: {NUM}") <= 1.0
    assert number(report, rf"replay vs the optimiser's trajectory: max difference {NUM}") < 1e-9
    check_pngs(out, ["panda_reach_and_push.png", "panda_reach_and_push_frames.png"], report)


def check_paddle_particles(report: str, out: Path):
    assert number(report, rf"ground impulses / weight of the particles: {NUM}") == pytest.approx(1.0, abs=1e-9)
    n = int(number(report, rf"{NUM} particles \("))
    assert f"{n} of {n} by more than 1 mm" in report  # the paddle reached every particle
    assert "finite differences kept the contact mode of every step: yes" in report
    # a rollout of hundreds of sliding-contact steps: about 0.5 % (docstring of the example)
    assert number(report, rf"relative error: {NUM}") < 0.02
    check_pngs(out, ["paddle_sweeps_particles.png"], report)


def check_affine_bodies(report: str, out: Path):
    dhat = number(report, rf"dhat = {NUM} m")
    assert 0.0 < number(report, rf"smallest surface distance over the run: {NUM}") < dhat  # touched, never reached 0
    for pair in ("base-ground", "cube-base", "ring-ground"):
        assert 0.0 < number(report, rf"{pair} {NUM} m") < dhat  # resting within dhat of contact
    assert number(report, rf"largest \|\|A A\^T - I\|\|: {NUM}") < 1e-3
    check_pngs(out, ["affine_bodies_fall.png", "affine_bodies_fall_frames.png"], report)


def check_arm_sweeps_a_stack(report: str, out: Path):
    dhat = number(report, rf"dhat = {NUM} m")
    assert 0.0 < number(report, rf"smallest surface distance over the run: {NUM}") < dhat  # touched, never reached 0
    assert number(report, rf"block0 {NUM} m") < 0.01  # the bottom block stays
    assert number(report, rf"block1 {NUM} m") > 0.05 and number(report, rf"block2 {NUM} m") > 0.1  # swept off
    assert number(report, rf"top block height at the end: {NUM} m") < 0.06  # on the ground
    assert number(report, rf"held joints from the pose: {NUM} rad") < 0.05
    check_pngs(out, ["arm_sweeps_a_stack.png", "arm_sweeps_a_stack_frames.png"], report)


def check_planar_cart(report: str, out: Path):
    assert number(report, rf"the cube moved {NUM} m") > 0.05  # pushed along
    assert number(report, rf"relative difference {NUM}") < 1e-5  # backward vs central differences of rollouts
    check_pngs(out, ["planar_cart_pushes_a_cube.png", "planar_cart_pushes_a_cube_frames.png"], report)


def check_chain_folds(report: str, out: Path):
    dhat = number(report, rf"dhat = {NUM} m")
    off, on = (float(x) for x in re.findall(rf"smallest over the run: {NUM} mm", report))
    assert off < -10.0  # without self-collision the last link reaches deep into the first
    assert 0.0 < on < 1e3 * dhat  # with it they touch (within dhat) and never overlap
    contact = [int(x) for x in re.findall(r"(\d+) steps with self-contact pairs", report)]
    assert contact[0] == 0 and contact[1] > 5
    check_pngs(out, ["chain_folds_onto_itself.png", "chain_folds_onto_itself_frames.png"], report)


def check_solo12_lands_on_a_box(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    depth = number(report, rf"straight-legged: {NUM} m")
    assert depth - 0.01 < number(report, rf"base above the box's top at the end: {NUM} m") < depth  # on its feet
    assert number(report, rf"base tilt at the end: {NUM} rad") < 1e-3
    assert number(report, rf"largest leg-joint error from the pose: {NUM} rad") < 0.05
    assert number(report, rf"box: moved {NUM} mm") < 1.0
    assert 0.0 < number(report, rf"smallest surface distance over the run: {NUM} m") < 1e-3  # touched, never 0
    check_pngs(out, ["solo12_lands_on_a_box.png", "solo12_lands_on_a_box_frames.png"], report)


def check_solo12_on_a_soft_mattress(report: str, out: Path):
    if "example-robot-data is not installed" in report:
        return  # the script explains itself and exits 0
    reach = number(report, rf"its feet's reach: {NUM} m")
    assert reach - 0.03 < number(report, rf"base above the mattress's rest top at the end: {NUM} m") < reach
    assert 1.0 < number(report, rf"the mattress's deepest dent at the end: {NUM} mm") < 30.0  # pressed, not through
    assert number(report, rf"base tilt at the end: {NUM} rad") < 1e-3
    assert number(report, rf"largest leg-joint error from the pose: {NUM} rad") < 0.05
    check_pngs(out, ["solo12_on_a_soft_mattress.png", "solo12_on_a_soft_mattress_frames.png"], report)


def check_rings_and_gripper(report: str, out: Path):
    assert 2.0 < number(report, rf"dropped {NUM} mm onto the rim") < 2.1  # its gap, and the rest depth
    assert number(report, rf"drift over the last [\d.]+ s: {NUM} mm") < 0.01
    assert number(report, rf"deepest {NUM} mm") < 0.1
    assert number(report, rf"hanging ring step Jacobians against finite differences: {NUM}") < 1e-7
    assert number(report, rf"then {NUM} mm in the last") < 0.01  # held by friction
    assert number(report, rf"the torus fell {NUM} mm in the last") > 100  # below the friction limit it slips
    assert number(report, rf"held torus step Jacobians against finite differences: {NUM}") < 1e-7
    check_pngs(out, ["rings_and_gripper.png", "rings_and_gripper_grip.png"], report)


def check_soft_ball(report: str, out: Path):
    assert -2e-3 < number(report, rf"lowest vertex over the run: {NUM} m") < 0.0  # touched, barely sank
    assert 0.03 < number(report, rf"final mean height: {NUM} m") < 0.2
    assert number(report, rf"relative difference {NUM}") < 1e-4  # adjoint through the rollout vs central difference
    check_pngs(out, ["soft_ball_drop.png", "soft_ball_drop_frames.png"], report)


def check_soft_tendon(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-5  # the adjoint through the rollout
    initial = number(report, rf"initial distance {NUM} mm")
    assert initial > 50.0
    assert number(report, rf"final distance {NUM} mm") < 0.05 * initial  # the optimiser brought the tip there
    check_pngs(out, ["soft_tendon_reach.png", "soft_tendon_reach_frames.png"], report)


def check_soft_ball_sysid(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-5  # the adjoint through the bounce vs central difference
    assert number(report, rf"loss {NUM} mm²") > 1.0  # the guess is far from the recording
    assert number(report, rf"fitted E = [\d.e+]+ Pa \(relative error {NUM}\)") < 0.02
    assert number(report, rf"nu = [\d.]+ \(relative error {NUM}\)") < 0.05
    check_pngs(out, ["soft_ball_sysid.png"], report)


def check_soft_ball_gripper(report: str, out: Path):
    start = number(report, rf"friction 0.8: the ball's height goes from {NUM} m")
    assert number(report, rf"friction 0.8: the ball's height goes from [\d.]+ m to {NUM} m") > start + 0.02  # lifted
    assert number(report, rf"friction 0: the ball's height goes from [\d.]+ m to {NUM} m") < start + 0.002  # slips
    final, target = number(report, rf"final height {NUM} m, target"), number(report, rf"m, target {NUM} m")
    assert abs(final - target) < 2e-4  # the squeeze found by the gradient reaches the target height
    assert number(report, rf"relative difference {NUM}") < 1e-4  # the adjoint through the rollout
    check_pngs(out, ["soft_ball_gripper.png", "soft_ball_gripper_frames.png"], report)


def check_soft_block_pushed(report: str, out: Path):
    # half of mu m g: the box closes in and the block gives (under a millimetre), then stops
    assert number(report, rf"half of mu m g\): the block moves {NUM} mm") < 1.0
    assert abs(number(report, rf"and ends at {NUM} mm/s")) < 5.0
    assert number(report, rf"three times mu m g\): the block moves {NUM} cm") > 5.0  # it slides
    assert number(report, rf"m/s\^2 \(relative difference {NUM}\)") < 0.03  # Coulomb's law for box and block
    along, target = number(report, rf"the block ends {NUM} cm along"), number(report, rf"cm along, target {NUM} cm")
    assert abs(along - target) < 1e-3  # the push found by the gradient moves it to the target
    assert number(report, rf"m/N \(relative difference {NUM}") < 1e-4  # the adjoint through the rollout
    check_pngs(out, ["soft_block_pushed_by_a_box.png", "soft_block_pushed_by_a_box_frames.png"], report)


def check_soft_ball_kick(report: str, out: Path):
    depth = number(report, rf"standing: the foot is {NUM} mm deep")
    assert 0.1 < depth < 0.3 and 0.5 < number(report, rf"in the ground, carrying {NUM} N") < 1.5  # it stands
    assert number(report, rf"the ball's centre of mass moves {NUM} m") > 0.005  # the kick reaches the ball
    final, target = number(report, rf"the ball ends at {NUM} m, target"), number(report, rf"m, target {NUM} m")
    assert abs(final - target) < 1e-4  # the torque found by the gradient sends it to the target
    assert number(report, rf"relative difference {NUM}") < 1e-4  # the adjoint through the rollout
    check_pngs(out, ["soft_ball_kick.png", "soft_ball_kick_frames.png"], report)


def check_soft_torus(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-3  # the adjoint through the rollout, along a direction
    before = number(report, rf"first guess {NUM} cm")
    after = number(report, rf"optimised {NUM} cm")
    assert after > 0.5 and after > before + 0.1  # the muscles alone roll it forward, farther after the optimiser
    assert number(report, rf"lowest vertex over the optimised run: {NUM} mm") > -2.0  # on the ground, not through it
    check_pngs(out, ["soft_torus_roll.png", "soft_torus_roll_frames.png"], report)


def check_soft_quadruped(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-3  # the adjoint through the rollout, along a direction
    before = number(report, rf"first guess {NUM} cm")
    after = number(report, rf"optimised {NUM} cm")
    assert after > 0.2 and after > before + 0.05  # it walks forward, farther after the optimiser
    assert number(report, rf"lowest vertex over the optimised run: {NUM} mm") > -2.0
    assert number(report, rf"centre of mass height change at most {NUM} mm") < 10.0  # standing, not fallen
    check_pngs(out, ["soft_quadruped_walk.png", "soft_quadruped_walk_frames.png"], report)


def check_soft_plant(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-5  # the adjoint through the rollout vs central difference
    assert number(report, rf"largest sway of a vertex: {NUM} mm") > 10.0  # the push bends it
    assert number(report, rf"of a fixed base vertex: {NUM} m") == 0.0  # the attached base stays put
    assert number(report, rf"loss {NUM} mm²") > 1.0  # the guess is far from the recording
    assert number(report, rf"fitted E = [\d.e+]+ Pa \(relative error {NUM}\)") < 1e-3
    check_pngs(out, ["soft_plant_sysid.png", "soft_plant_sysid_frames.png"], report)


def check_soft_bunny(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-5  # the adjoint through the bounce vs central difference
    before, after = number(report, rf"loss: first guess {NUM}"), number(report, rf"optimised {NUM} after")
    assert after < 0.7 * before  # the toss found by the gradient ends nearer the target
    assert number(report, rf"{NUM} cm away; the first guess") < number(report, rf"the first guess ended {NUM} cm away")
    assert number(report, rf"lowest vertex over the optimised run: {NUM} mm") > -1e-3  # held on the ground
    lowest, end = number(report, rf"centre of mass lowest at {NUM} cm"), number(report, rf"cm, {NUM} cm at the end")
    assert end > lowest + 1.0  # it bounces back up
    check_pngs(out, ["soft_bunny_toss.png", "soft_bunny_toss_frames.png"], report)


def check_soft_cow(report: str, out: Path):
    assert number(report, rf"relative difference {NUM}") < 1e-3  # the adjoint through the walk vs central difference
    before, after = number(report, rf"first guess {NUM} cm, optimised"), number(report, rf"optimised {NUM} cm after")
    assert before > 0.0 and after > before  # the trot moves it forward, and the optimiser farther
    assert number(report, rf"optimised: the centre of mass moves {NUM} cm along x") > 0.1
    assert number(report, rf"lowest vertex over the optimised run: {NUM} mm") > -2.0  # on the ground, not through it
    assert number(report, rf"centre of mass at most {NUM} mm below its start") < 10.0  # standing, not fallen
    check_pngs(out, ["soft_cow_walk.png", "soft_cow_walk_frames.png"], report)


def check_rigid_boxes_on_a_soft_pad(report: str, out: Path):
    depth = number(report, rf"rest {NUM} mm into the lower one's top face on average")
    penalty = number(report, rf"the penalty's m g / \(4 k\) = {NUM} mm")
    assert depth == pytest.approx(penalty, rel=0.02)  # the lower box's top face holds the upper one's corners
    assert number(report, rf"its centre {NUM} mm off the lower's") < 20.0  # it stays on top
    assert number(report, rf"relative difference {NUM}") < 1e-5  # the adjoint through link-link contact vs central difference
    check_pngs(out, ["rigid_boxes_on_a_soft_pad.png", "rigid_boxes_on_a_soft_pad_frames.png"], report)


CHECKS = {
    "rigid_boxes_on_a_soft_pad.py": check_rigid_boxes_on_a_soft_pad,
    "soft_ball_gripper.py": check_soft_ball_gripper,
    "soft_ball_kick.py": check_soft_ball_kick,
    "soft_block_pushed_by_a_box.py": check_soft_block_pushed,
    "soft_plant_sysid.py": check_soft_plant,
    "soft_bunny_toss.py": check_soft_bunny,
    "soft_cow_walk.py": check_soft_cow,
    "soft_torus_roll.py": check_soft_torus,
    "soft_quadruped_walk.py": check_soft_quadruped,
    "soft_tendon_reach.py": check_soft_tendon,
    "rings_and_gripper.py": check_rings_and_gripper,
    "soft_ball_drop.py": check_soft_ball,
    "soft_ball_sysid.py": check_soft_ball_sysid,
    "affine_bodies_fall.py": check_affine_bodies,
    "arm_sweeps_a_stack.py": check_arm_sweeps_a_stack,
    "solo12_lands_on_a_box.py": check_solo12_lands_on_a_box,
    "planar_cart_pushes_a_cube.py": check_planar_cart,
    "chain_folds_onto_itself.py": check_chain_folds,
    "solo12_on_a_soft_mattress.py": check_solo12_on_a_soft_mattress,
    "paddle_sweeps_particles.py": check_paddle_particles,
    "cartpole_swing_up.py": check_swing_up,
    "identify_mass_and_friction.py": check_sysid,
    "contact_on_the_ground.py": check_contact,
    "panda_pushes_a_box.py": check_panda_push,
    "gradients_through_rollouts.py": check_gradients,
    "cartpole_by_hand.py": check_cartpole,
    "urdf_robot_simulation.py": check_urdf_robot,
    "compare_with_pinocchio.py": check_pinocchio,
    "jump_worm.py": check_jump_worm,
    "catapult.py": check_catapult,
    "solo12_mpc_stand_up.py": check_solo12_mpc,
    "solo12_mpc_push.py": check_solo12_push,
    "panda_reach_and_push.py": check_reach_and_push,
}


# ------------------------------------------------------------------------------------------- tests


def test_every_example_is_checked():
    names = {p.name for p in EXAMPLES}
    assert names, "examples/ holds no script"
    assert names == set(CHECKS), f"examples without a check here: {sorted(names - set(CHECKS))}"


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_has_main_fast_and_cli(path: Path):
    tree = ast.parse(path.read_text())
    mains = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main"]
    assert mains, f"{path.name} defines no main()"
    assert mains[0].args.args and mains[0].args.args[0].arg == "fast"
    text = path.read_text()
    assert 'if __name__ == "__main__":' in text
    assert "RIGIDIFF_FAST" in text and "--fast" in text and "--out" in text


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs_fast(path: Path, tmp_path: Path):
    if path.name == "compare_with_pinocchio.py":
        pytest.importorskip("pinocchio")
    out = tmp_path / "out"
    report = run_example(path, out, "--fast")
    CHECKS[path.name](report, out)


def test_fast_mode_from_environment(tmp_path: Path):
    report = run_example(ROOT / "examples" / "cartpole_by_hand.py", tmp_path, env_extra={"RIGIDIFF_FAST": "1"})
    assert "free swing: 2 s" in report  # the fast duration, not the full 10 s


def test_pinocchio_example_without_pinocchio(tmp_path: Path):
    """With pinocchio unimportable the comparison says so and exits 0."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "pinocchio.py").write_text("raise ImportError('pinocchio hidden by the test')\n")
    env = {"PYTHONPATH": os.pathsep.join([str(blocker), str(Path(rigidiff.__file__).resolve().parents[1])])}
    report = run_example(ROOT / "examples" / "compare_with_pinocchio.py", tmp_path / "out", "--fast",
                         env_extra=env)
    assert "Pinocchio is not installed" in report

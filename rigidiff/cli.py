"""The ``rigidiff`` command: ``models``, ``info``, ``simulate``, ``check-grad`` and ``demo``."""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np


class ArgumentError(ValueError):
    """A command-line value that is not valid for the model (an unknown parameter name, a --q0 of the
    wrong length): exit status 2, as argparse's own errors."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``rigidiff <command>: error: <what>`` and a pointer to --help."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _number(kind, minimum, strict):
    """An argparse type: a ``kind`` (int or float) number >= minimum (> minimum if strict), finite."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if kind is int else 'a number'}, "
                                             f"got {text!r}") from None
        if not np.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if value < minimum or (strict and value == minimum):
            raise argparse.ArgumentTypeError(f"must be {'>' if strict else '>='} {minimum:g}, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


_POSITIVE_INT = _number(int, 1, strict=False)
_POSITIVE = _number(float, 0.0, strict=True)
_NONNEGATIVE = _number(float, 0.0, strict=False)
_SEED = _number(int, 0, strict=False)
_FINITE = _number(float, -np.inf, strict=False)


def _format_limits(lower, upper) -> str:
    from rigidiff.skeleton import _format_limits as fmt

    return fmt(lower, upper)


def model_path(model: str) -> str:
    """The URDF file of ``model``: a path to one, or the name of a shipped model (``rigidiff models``).
    ArgumentError naming the shipped models when it is neither."""
    from rigidiff import models

    if os.path.isfile(model):
        return model
    if model in models.available():
        return models.path(model)
    raise ArgumentError(f"{model!r} is neither a URDF file nor a shipped model; shipped models: "
                        f"{', '.join(models.available())} (rigidiff models lists them)")


def _load_world(args, ground: bool = False):
    import rigidiff as rd

    sk = rd.load_urdf(model_path(args.model), floating_base=args.floating_base, package_dirs=args.package_dir,
                      load_geometry=ground, strict=not args.lenient)
    world = rd.World(dt=getattr(args, "dt", 1e-3))
    world.add_skeleton(sk)
    if ground:
        world.add_ground()
    return sk, world


def cmd_models(args) -> int:
    """List the shipped models, which every command takes by name in place of a URDF path."""
    import rigidiff as rd

    print("shipped models (give the name in place of a URDF path, e.g. rigidiff info arm7):")
    for name in rd.models.available():
        world = rd.World()
        world.add_skeleton(rd.models.load(name, load_geometry=False))
        print(f"  {name:<16} nq = {world.nq:<3} nv = {world.nv:<3} {rd.models.path(name)}")
    robots = rd.models.example_robot_data_dir()
    if robots is not None:
        print(f"example-robot-data's robots: {robots} (load them with --package-dir {robots})")
    return 0


def cmd_info(args) -> int:
    """Print the tree, dofs, masses and limits of a URDF model."""
    sk, world = _load_world(args)
    print(sk.summary())
    print(f"world: nq = {world.nq}, nv = {world.nv}, bodies = {world.nbodies}, total mass = {world.total_mass:.6g} kg")
    print("joints in q / v order:")
    for name in world.joint_names:
        j = world.joint(name)
        lim = ""
        if np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper)):
            lim = f" position {_format_limits(j.lower, j.upper)}"
        if np.any(np.isfinite(j.effort_limit)):
            lim += " effort " + ", ".join(f"{e:.4g}" for e in j.effort_limit)
        print(f"  {name:<28} {j.type:<13} q[{j.q_index}:{j.q_index + j.nq}] v[{j.v_index}:{j.v_index + j.nv}]{lim}")
    return 0


def cmd_simulate(args) -> int:
    """Simulate a URDF model from its neutral configuration under zero torque and save the trajectory."""
    if not os.path.basename(args.out) or os.path.isdir(args.out):
        raise ArgumentError(f"--out must name a file, got the folder {args.out!r}")
    out = args.out if args.out.endswith(".npz") else args.out + ".npz"  # numpy.savez adds the suffix
    if os.path.exists(out) and not args.force:
        raise ArgumentError(f"--out: {out} exists; give --force to overwrite it")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):  # checked before simulating, not found when writing after it
        raise ArgumentError(f"--out: the folder {os.path.dirname(out)!r} does not exist")
    if args.height is not None and not args.floating_base:
        raise ArgumentError("--height sets a floating base's initial height: give --floating-base too")
    _, world = _load_world(args, ground=args.ground)
    q0 = world.neutral_configuration()
    if args.floating_base:
        q0[2] = 1.0 if args.height is None else args.height
    if args.q0 is not None:
        try:
            values = [float(x) for x in args.q0.split(",") if x.strip()]
        except ValueError:
            raise ArgumentError(f"--q0 must be comma-separated numbers, got {args.q0!r}") from None
        if not np.all(np.isfinite(values)):
            raise ArgumentError(f"--q0 must be finite numbers, got {args.q0!r}")
        if len(values) != world.nq:
            raise ArgumentError(f"--q0 must have {world.nq} comma-separated values (nq), got {len(values)}")
        q0 = world.normalize(np.array(values))
    taus = np.zeros((args.steps, world.nv))
    Q, V = world.rollout(q0, np.zeros(world.nv), taus)
    t = np.arange(args.steps + 1) * world.dt
    np.savez(out, t=t, q=Q, v=V, tau=taus, joint_names=np.array(world.joint_names), dt=world.dt)
    print(f"simulated {args.steps} steps of {world.dt} s ({t[-1]:.4g} s): nq = {world.nq}, nv = {world.nv}"
          + (", on a ground plane z = 0" if args.ground else ""))
    if args.floating_base:
        print(f"base height: {Q[0, 2]:.4g} m -> {Q[-1, 2]:.4g} m")
    print(f"wrote {out} (arrays t, q, v, tau, joint_names, dt)")
    return 0


def _random_state(world, rng):
    """A random (q, v, tau): q within the limits, v ~ N(0, 1), tau = gravity compensation plus noise of a
    tenth of the effort limit, capped at what accelerates the dof's own inertia M(q)_kk by 10 (m or rad)
    / s^2 (so torques are rarely clipped, and a placeholder limit such as solo12's 1000 N m on 5e-4
    kg m^2 does not make the state so violent that round-off swamps the finite differences)."""
    q = world.random_configuration(rng)
    v = rng.normal(size=world.nv)
    limit = np.concatenate([world.joint(n).effort_limit for n in world.joint_names])
    scale = np.minimum(0.1 * limit, 10.0 * np.diag(world.mass_matrix(q)))
    tau = world.gravity_forces(q) + scale * rng.normal(size=world.nv)
    return q, v, tau


def cmd_check_grad(args) -> int:
    """Check the analytic step Jacobians against finite differences on random states of a URDF model."""
    from rigidiff.testing import _table, check_jacobians

    _, world = _load_world(args)
    if world.nv == 0:
        raise ArgumentError(f"{args.model} has no moving joints (nv = 0): there is no step Jacobian to check; "
                            "--floating-base gives its root link a free joint")
    if args.parameters:
        try:
            world._resolve_wrt(args.parameters)
        except (ValueError, IndexError) as exc:
            raise ArgumentError(f"--parameters: {exc}") from None
    rng = np.random.default_rng(args.seed)
    reports = []
    wrt = ("q", "v", "tau") + tuple(args.parameters or ())
    for _ in range(args.samples):
        q, v, tau = _random_state(world, rng)
        reports.append(check_jacobians(world, q, v, tau, wrt=wrt, method=args.method, eps=args.eps,
                                       rtol=args.rtol, atol=args.atol))
    first = reports[0]
    print(f"{args.model}: nq = {world.nq}, nv = {world.nv}, dt = {world.dt:g}; {args.samples} random states, "
          f"{first.method} differences (eps {first.eps:g}), an entry passes if |analytic - fd| <= "
          f"{args.atol:g} + {args.rtol:g} |fd|, or if it is within the differences' own error (at most "
          f"{args.rtol:g} of its column's largest entry; counted under 'within fd noise')")
    rows = []
    for i, block in enumerate(first.blocks):
        per_sample = [r.blocks[i] for r in reports]
        worst = max(range(len(reports)), key=lambda s: per_sample[s].max_rel_error)
        n_ok = sum(b.passed for b in per_sample)
        rows.append([block.name, f"{block.shape[0]}x{block.shape[1]}", f"{n_ok}/{len(reports)}",
                     f"{max(b.max_abs_error for b in per_sample):.2e}", f"{per_sample[worst].max_rel_error:.2e}",
                     f"{worst}", f"{sum(b.n_within_noise for b in per_sample)}",
                     "ok" if n_ok == len(reports) else "FAILED"])
    print(_table(["block", "shape", "passed", "worst abs err", "worst rel err", "in sample", "within fd noise",
                  "status"], rows))
    failed = [s for s, r in enumerate(reports) if not r.passed]
    if failed:
        print(f"FAILED on {len(failed)} of {len(reports)} samples; the first, sample {failed[0]}:")
        print(reports[failed[0]])
        if args.method == "central":
            print("central differences are coarse where the mass matrix is ill-conditioned: the default "
                  "--method ridders extrapolates them")
        return 1
    print(f"all {len(reports)} samples passed")
    return 0


def cmd_demo(args) -> int:
    from rigidiff.demo import run_demo

    return run_demo(fast=args.fast, picture=None if args.no_picture else args.picture)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="rigidiff", description="rigidiff: a differentiable physics engine.")
    sub = p.add_subparsers(dest="command", required=True)

    def model_args(sp):
        sp.add_argument("model", help="a URDF file, or the name of a shipped model (rigidiff models lists them)")
        sp.add_argument("--floating-base", action="store_true", help="attach the root link by a free joint")
        sp.add_argument("--package-dir", action="append", default=None,
                        help="folder for package:// URIs (repeatable)")
        sp.add_argument("--lenient", action="store_true",
                        help="load questionable but loadable input (a non-PSD inertia, a joint without "
                             "<limit>) with a warning, as load_urdf(strict=False) does")

    sp = sub.add_parser("models", help="list the shipped models, which every command takes by name")
    sp.set_defaults(func=cmd_models)

    sp = sub.add_parser("info", help="tree, dofs, masses and limits of a URDF model")
    model_args(sp)
    sp.set_defaults(func=cmd_info)

    sp = sub.add_parser("simulate", help="simulate a URDF model under zero torque and save the trajectory")
    model_args(sp)
    sp.add_argument("--steps", type=_POSITIVE_INT, default=1000, help="number of time steps (default 1000)")
    sp.add_argument("--dt", type=_POSITIVE, default=1e-3, help="time step in seconds (default 1e-3)")
    sp.add_argument("--ground", action="store_true",
                    help="add a ground plane z = 0 and load the model's collision shapes, so that a floating "
                         "robot lands on it")
    sp.add_argument("--height", type=_FINITE, default=None,
                    help="initial base height of a floating base (default 1 m; needs --floating-base)")
    sp.add_argument("--q0", default=None, help="initial configuration, nq comma-separated values (default: neutral)")
    sp.add_argument("--out", default="traj.npz",
                    help="the .npz file to write (default traj.npz); an existing file is kept unless --force")
    sp.add_argument("--force", action="store_true", help="overwrite the --out file if it exists")
    sp.set_defaults(func=cmd_simulate)

    sp = sub.add_parser("check-grad", help="check the analytic step Jacobians against finite differences")
    model_args(sp)
    sp.add_argument("--samples", type=_POSITIVE_INT, default=20, help="number of random states (default 20)")
    sp.add_argument("--method", choices=("central", "ridders"), default="ridders",
                    help="finite-difference method (default ridders: slower, far more accurate)")
    sp.add_argument("--eps", type=_POSITIVE, default=None,
                    help="finite-difference step, scaled per entry by its size (default 1e-5 for central, "
                         "the first of ridders' shrinking steps 1e-2)")
    sp.add_argument("--seed", type=_SEED, default=0, help="seed of the random states, >= 0 (default 0)")
    sp.add_argument("--dt", type=_POSITIVE, default=1e-3, help="time step (default 1e-3)")
    sp.add_argument("--rtol", type=_POSITIVE, default=1e-5, help="relative tolerance (default 1e-5)")
    sp.add_argument("--atol", type=_NONNEGATIVE, default=1e-7, help="absolute tolerance (default 1e-7)")
    sp.add_argument("--parameters", nargs="+", metavar="P", default=None,
                    help="also check the parameter blocks: parameter names, body or joint names, or groups "
                         "(inertia, damping, stiffness, armature, gravity, all)")
    sp.set_defaults(func=cmd_check_grad)

    sp = sub.add_parser("demo", help="build robots, simulate them, check Jacobians; print a report and draw "
                                     "a picture")
    sp.add_argument("--fast", action="store_true", help="shorter simulations")
    sp.add_argument("--picture", metavar="PATH", default="rigidiff_demo.png",
                    help="where to draw the quadruped falling onto the ground, a PNG frame strip (default "
                         "rigidiff_demo.png in the current folder; needs matplotlib: pip install rigidiff[plot])")
    sp.add_argument("--no-picture", action="store_true", help="draw no picture")
    sp.set_defaults(func=cmd_demo)
    return p


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """A warning as the command prints it: one line, without the source line that raised it."""
    return f"rigidiff: warning: {message}\n"


def main(argv=None) -> int:
    """Run the command line ``argv`` (default sys.argv[1:]) and return its exit status: 0 on success, 1
    when the model cannot be loaded, a computation fails or a check finds an error, 2 for invalid
    arguments (an unknown option or model, a value out of range, an --out file that exists). Errors are
    printed as one line on stderr, never as a traceback; warnings as one line each. Output into a pipe
    that closes early (``rigidiff models | head -1``) ends the command quietly with status 1."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or an argparse error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    default_format = warnings.formatwarning
    warnings.formatwarning = _format_warning
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's final flush
        return status
    except ArgumentError as exc:
        print(f"rigidiff {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped reading (rigidiff models | head -1): end quietly
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (the interpreter's final flush must not fail)
        return 1
    except (OSError, ValueError, IndexError, RuntimeError) as exc:
        print(f"rigidiff {args.command}: error: {exc}", file=sys.stderr)
        if "strict=False" in str(exc):  # the loader's strict checks name their way out
            print("rigidiff: --lenient loads it with a warning", file=sys.stderr)
        return 1
    finally:
        warnings.formatwarning = default_format


if __name__ == "__main__":
    sys.exit(main())

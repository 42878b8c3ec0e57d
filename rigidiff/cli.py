"""The ``rigidiff`` command: ``info``, ``simulate`` and ``demo``."""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _format_limits(lower, upper) -> str:
    from rigidiff.skeleton import _format_limits as fmt

    return fmt(lower, upper)


def _load_world(args):
    import rigidiff as rd

    sk = rd.load_urdf(args.model, floating_base=args.floating_base, package_dirs=args.package_dir,
                      load_geometry=False)
    world = rd.World(dt=getattr(args, "dt", 1e-3))
    world.add_skeleton(sk)
    return sk, world


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
    _, world = _load_world(args)
    q0 = world.neutral_configuration()
    if args.floating_base:
        q0[2] = args.height
    taus = np.zeros((args.steps, world.nv))
    Q, V = world.rollout(q0, np.zeros(world.nv), taus)
    t = np.arange(args.steps + 1) * world.dt
    np.savez(args.out, t=t, q=Q, v=V, tau=taus, joint_names=np.array(world.joint_names), dt=world.dt)
    print(f"simulated {args.steps} steps of {world.dt} s ({t[-1]:.4g} s): nq = {world.nq}, nv = {world.nv}")
    print(f"wrote {args.out} (arrays t, q, v, tau, joint_names, dt)")
    return 0


def cmd_demo(args) -> int:
    from rigidiff.demo import run_demo

    return run_demo(fast=args.fast)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rigidiff", description="rigidiff: a differentiable physics engine.")
    sub = p.add_subparsers(dest="command", required=True)

    def model_args(sp):
        sp.add_argument("model", help="path to a URDF file")
        sp.add_argument("--floating-base", action="store_true", help="attach the root link by a free joint")
        sp.add_argument("--package-dir", action="append", default=None,
                        help="folder for package:// URIs (repeatable)")

    sp = sub.add_parser("info", help="tree, dofs, masses and limits of a URDF model")
    model_args(sp)
    sp.set_defaults(func=cmd_info)

    sp = sub.add_parser("simulate", help="simulate a URDF model under zero torque and save the trajectory")
    model_args(sp)
    sp.add_argument("--steps", type=int, default=1000)
    sp.add_argument("--dt", type=float, default=1e-3)
    sp.add_argument("--height", type=float, default=1.0, help="initial base height for a floating base")
    sp.add_argument("--out", default="traj.npz")
    sp.set_defaults(func=cmd_simulate)

    sp = sub.add_parser("demo", help="build robots, simulate them, check Jacobians; print a report")
    sp.add_argument("--fast", action="store_true", help="shorter simulations")
    sp.set_defaults(func=cmd_demo)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "steps", 1) is not None and getattr(args, "steps", 1) < 1:
        print("rigidiff: --steps must be >= 1", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError, IndexError) as exc:
        print(f"rigidiff: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

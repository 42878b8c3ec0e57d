"""Robot models shipped with rigidiff, as URDF files: ``models.path("arm7")``, ``models.load("arm7")``.

=================  ========  ======================================================================
name               nq / nv   what
=================  ========  ======================================================================
cartpole           2 / 2     1 kg cart on a prismatic rail along x (|x| <= 2.4 m), 0.1 kg pole of
                             length 1 m on a continuous joint about y (upright at q = 0)
double_pendulum    2 / 2     two 1 kg, 1 m links on revolute joints about y, hanging down at q = 0
arm7               7 / 7     a 7-dof arm with panda-like masses, limits and damping; its hand is a
                             small STL mesh referenced as ``package://arm7/meshes/hand.stl``
quadruped          12 / 12   a 2 kg base with four 3-joint legs (load with ``floating_base=True``:
                             19 / 18)
=================  ========  ======================================================================

Each model lives in ``<name>/<name>.urdf`` next to this file, with its meshes in ``<name>/meshes/``;
``package://<name>/...`` names resolve through the URDF-folder fallback of :func:`rigidiff.io.load_urdf`.
:func:`example_robot_data_dir` finds the robots of the example-robot-data package when it is installed.
"""

from __future__ import annotations

import os

from rigidiff.errors import UnknownNameError

__all__ = ["available", "path", "load", "example_robot_data_dir"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def available() -> list[str]:
    """Names of the shipped models, sorted."""
    return sorted(
        name for name in os.listdir(_HERE)
        if os.path.isfile(os.path.join(_HERE, name, f"{name}.urdf"))
    )


def path(name: str) -> str:
    """Absolute path of the model's URDF file; UnknownNameError (an IndexError) listing the available names
    if unknown."""
    names = available()
    if not isinstance(name, str) or name not in names:
        raise UnknownNameError(f"unknown model {name!r}; available models: {names}")
    return os.path.join(_HERE, name, f"{name}.urdf")


def load(model: str, /, **kwargs):
    """``load_urdf(path(model), **kwargs)``: the model as a :class:`rigidiff.skeleton.Skeleton`."""
    from rigidiff.io.urdf import load_urdf

    return load_urdf(path(model), **kwargs)


def example_robot_data_dir():
    """The ``robots/`` folder of the example-robot-data package (``pip install example-robot-data``:
    URDFs and meshes under ``<site-packages>/cmeel.prefix/share/example-robot-data/robots``, no Python
    module) as a ``pathlib.Path``, or None when it is not installed. Give it in ``package_dirs``."""
    import site
    import sys
    from pathlib import Path

    try:
        roots = [*sys.path, *site.getsitepackages()]
    except AttributeError:  # some virtual environments' site module has no getsitepackages
        roots = list(sys.path)
    for entry in roots:
        if not entry:
            continue
        root = Path(entry)
        prefix = root if root.name == "cmeel.prefix" else root / "cmeel.prefix"
        robots = prefix / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            return robots
    return None


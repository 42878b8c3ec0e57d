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
"""

from __future__ import annotations

import os

__all__ = ["available", "path", "load"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def available() -> list[str]:
    """Names of the shipped models, sorted."""
    return sorted(
        name for name in os.listdir(_HERE)
        if os.path.isfile(os.path.join(_HERE, name, f"{name}.urdf"))
    )


def path(name: str) -> str:
    """Absolute path of the model's URDF file; IndexError listing the available names if unknown."""
    names = available()
    if not isinstance(name, str) or name not in names:
        raise IndexError(f"unknown model {name!r}; available models: {names}")
    return os.path.join(_HERE, name, f"{name}.urdf")


def load(model: str, /, **kwargs):
    """``load_urdf(path(model), **kwargs)``: the model as a :class:`rigidiff.skeleton.Skeleton`."""
    from rigidiff.io.urdf import load_urdf

    return load_urdf(path(model), **kwargs)

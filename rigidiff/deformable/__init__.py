"""Deformable solids under Projective Dynamics: meshes, materials, the projective world and
open-loop muscle control (docs/deformable.md)."""

from rigidiff.deformable.material import ProjectiveMaterial
from rigidiff.deformable.mesh import HexMesh, TetMesh
from rigidiff.deformable.open_loop import OpenLoopControl
from rigidiff.deformable.world import ProjectiveWorld

__all__ = ["HexMesh", "OpenLoopControl", "ProjectiveMaterial", "ProjectiveWorld", "TetMesh"]

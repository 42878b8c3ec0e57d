"""Deformable solids under Projective Dynamics: meshes, materials and the projective world
(docs/deformable.md)."""

from rigidiff.deformable.material import ProjectiveMaterial
from rigidiff.deformable.mesh import HexMesh, TetMesh
from rigidiff.deformable.world import ProjectiveWorld

__all__ = ["HexMesh", "ProjectiveMaterial", "ProjectiveWorld", "TetMesh"]

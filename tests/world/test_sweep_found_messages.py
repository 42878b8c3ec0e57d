"""Inputs a sweep of hostile arguments found accepted silently or answered by a bare numpy error: each now gets
an error that names the argument and what is wrong."""

import numpy as np
import pytest

import rigidiff as rd


def test_solver_is_a_keyword_only_argument():
    # a fifth positional argument was taken for `solver` by __init__ but never read by __new__: an lcp world
    with pytest.raises(TypeError, match="positional argument"):
        rd.World(1e-2, (0.0, 0.0, -9.81), "semi_implicit", "implicit", "barrier")
    assert type(rd.World(1e-2, solver="barrier")).__name__ == "BarrierWorld"


@pytest.mark.parametrize("mesh", [rd.TetMesh(np.vstack([np.zeros(3), np.eye(3)]), [[0, 1, 2, 3]]),
                                  rd.HexMesh.box((1.0, 1.0, 1.0), (1, 1, 1))], ids=["tet", "hex"])
def test_mesh_volumes_check_the_positions_against_the_mesh(mesh):
    n = len(mesh.vertices)
    with pytest.raises(ValueError, match=rf"positions must have shape \({n}, 3\) \(one row per vertex"):
        mesh.volume(mesh.vertices[:-1])  # was numpy's IndexError
    with pytest.raises(ValueError, match=rf"positions must have shape \({n}, 3\)"):
        mesh.element_volumes(np.vstack([mesh.vertices, [[5.0, 5.0, 5.0]]]))  # was read as the first n rows
    with pytest.raises(ValueError, match="positions must be finite"):
        mesh.volume(np.where(mesh.vertices == 1.0, np.nan, mesh.vertices))
    assert mesh.volume(2.0 * mesh.vertices) == pytest.approx(8.0 * mesh.volume())

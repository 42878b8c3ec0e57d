"""Closed non-convex test meshes made of grid cells: a finely triangulated plate, a block with a square
hole, a T-shaped peg and a mug with a handle. Cells that share a face share its vertices, so every mesh
is watertight with outward faces."""

import numpy as np
import trimesh


def voxel_mesh(xs, ys, zs, filled):
    """The surface of the union of the filled cells of the grid xs x ys x zs (filled: a boolean array of
    shape (len(xs) - 1, len(ys) - 1, len(zs) - 1)), two triangles per cell face, counter-clockwise seen
    from outside."""
    filled = np.asarray(filled, bool)
    shape = filled.shape

    def full(cell):
        return all(0 <= c < s for c, s in zip(cell, shape)) and filled[tuple(cell)]

    def vertex(i, j, k):
        return (i * (len(ys)) + j) * len(zs) + k

    faces = []
    for cell in zip(*np.nonzero(filled)):
        for axis in range(3):
            for side in (0, 1):
                neighbour = list(cell)
                neighbour[axis] += 1 if side else -1
                if full(neighbour):
                    continue
                u, v = (axis + 1) % 3, (axis + 2) % 3
                corners = []
                for du, dv in ((0, 0), (1, 0), (1, 1), (0, 1)):
                    c = list(cell)
                    c[axis] += side
                    c[u] += du
                    c[v] += dv
                    corners.append(vertex(*c))
                if not side:  # (u, v) turns about +axis: reverse on the low side
                    corners.reverse()
                faces += [corners[:3], [corners[0], corners[2], corners[3]]]
    X, Y, Z = np.meshgrid(xs, ys, zs, indexing="ij")
    mesh = trimesh.Trimesh(np.c_[X.ravel(), Y.ravel(), Z.ravel()], np.array(faces), process=False)
    mesh.remove_unreferenced_vertices()
    return mesh


def refined(edges, cells):
    """The grid lines `edges` with each interval cut into `cells` equal parts."""
    return np.unique(np.concatenate([np.linspace(a, b, cells + 1) for a, b in zip(edges[:-1], edges[1:])]))


def refined_mesh(xs, ys, zs, filled, cells):
    """voxel_mesh of the coarse cells `filled`, each cut into cells^3 (a finely triangulated surface)."""
    fine = [refined(e, cells) for e in (xs, ys, zs)]
    filled = np.repeat(np.repeat(np.repeat(np.asarray(filled, bool), cells, 0), cells, 1), cells, 2)
    return voxel_mesh(*fine, filled)


def notched_plate(n=30, half=0.5, thickness=0.05):
    """A plate n x n cells (top at z = 0) with a 3 x 3 cell notch cut from one corner: not convex."""
    xs = np.linspace(-half, half, n + 1)
    filled = np.ones((n, n, 1), bool)
    filled[:3, :3] = False
    return voxel_mesh(xs, xs, [-thickness, 0.0], filled)


def holed_block(outer=0.15, hole=0.05, bottom=0.05, top=0.2, cells=1):
    """A block [-outer, outer]^2 x [0, top] with a square blind hole [-hole, hole]^2 down to z = bottom;
    cells > 1 cuts every face into a finer grid."""
    xs = [-outer, -hole, hole, outer]
    filled = np.ones((3, 3, 2), bool)
    filled[1, 1, 1] = False
    return refined_mesh(xs, xs, [0.0, bottom, top], filled, cells)


def t_peg(stem=0.049, length=0.18, head=0.1, cap=0.03, cells=1):
    """A T-shaped peg: a square stem [-stem, stem]^2 x [0, length] under a square head up to length + cap;
    cells > 1 cuts every face into a finer grid."""
    xs = [-head, -stem, stem, head]
    filled = np.zeros((3, 3, 2), bool)
    filled[1, 1, 0] = True
    filled[:, :, 1] = True
    return refined_mesh(xs, xs, [0.0, length, length + cap], filled, cells)


def mug():
    """A square cup open at the top (walls 1 cm thick, 8 cm tall) with a handle loop on its +x side."""
    xs = [-0.04, -0.03, 0.03, 0.04, 0.05, 0.07]
    ys = [-0.04, -0.03, 0.03, 0.04]
    zs = [0.0, 0.01, 0.03, 0.06, 0.07, 0.08]
    filled = np.zeros((5, 3, 5), bool)
    filled[:3, :, :] = True
    filled[1, 1, 1:] = False  # the cavity
    for cell in ((3, 1, 1), (4, 1, 1), (4, 1, 2), (4, 1, 3), (3, 1, 3)):
        filled[cell] = True  # the handle, around the opening (3, 1, 2)
    return voxel_mesh(xs, ys, zs, filled)

"""A scene of non-convex affine bodies, shared by tests/abd/test_barrier_nonconvex_pile.py and
benchmarks/bench_abd.py: rings (tori) and L-shaped prisms, each turned at random, dropped in layers into a
square box whose four walls are static meshes standing on the ground plane."""

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

import rigidiff as rd

DHAT = 1e-3
SPACING = 0.12  # between the bodies' centres in a layer
LAYER = 0.11  # between layers
WALL, WALL_HEIGHT = 0.02, 0.6  # the walls' thickness and height


def l_shape(arm=0.08, width=0.03, depth=0.03) -> trimesh.Trimesh:
    """An L-shaped prism, outward wound: two arms `arm` long and `width` wide in the xy plane, `depth` thick,
    centred on the outline's mean."""
    outline = np.array([[0, 0], [arm, 0], [arm, width], [width, width], [width, arm], [0, arm]], dtype=float)
    outline -= outline.mean(axis=0)
    n = len(outline)
    vertices = np.vstack([np.c_[outline, np.full(n, -depth / 2)], np.c_[outline, np.full(n, depth / 2)]])
    cap = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 5], [3, 4, 5]])  # the L as four triangles, counter-clockwise
    k = np.arange(n)
    sides = np.r_[np.c_[k, (k + 1) % n, n + (k + 1) % n], np.c_[k, n + (k + 1) % n, n + k]]
    return trimesh.Trimesh(vertices, np.vstack([cap[:, ::-1], cap + n, sides]), process=False)


def ring() -> trimesh.Trimesh:
    """A torus of radius 3.5 cm and tube radius 1 cm, 144 faces."""
    return trimesh.creation.torus(major_radius=0.035, minor_radius=0.01, major_sections=12, minor_sections=6)


def drop_scene(side: int, layers: int, friction: float = 0.3, seed: int = 3) -> rd.barrier_world.BarrierWorld:
    """side x side bodies per layer, rings and L-shapes alternating like a chessboard, layer by layer 11 cm
    apart from 6 cm up, each turned by a random rotation (rotation vectors of standard deviation 0.5 rad).
    The box's inside is side * SPACING square; its walls, static slabs WALL_HEIGHT tall, stand 1 mm above the
    ground plane and leave 1 mm gaps at the corners (so that no two surfaces touch, and none fits through)."""
    # a step where many thin features land at once may take a few hundred Newton iterations (the 100-body drop
    # took up to 254): more than the default 200
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction, max_newton_iterations=1000)
    world.add_ground()
    half, t, g = side * SPACING / 2, WALL, 0.5e-3
    slabs = [((2 * half, t), (-t / 2 - g, half + t / 2)), ((2 * half, t), (t / 2 + g, -half - t / 2)),
             ((t, 2 * half), (half + t / 2, t / 2 + g)), ((t, 2 * half), (-half - t / 2, -t / 2 - g))]
    for k, ((sx, sy), (cx, cy)) in enumerate(slabs):  # a pinwheel: each slab reaches past one neighbour's end
        world.add_static_mesh(rd.Box((sx, sy, WALL_HEIGHT)), pose=rd.Transform((cx, cy, WALL_HEIGHT / 2 + 2 * g)),
                              name=f"wall{k}")
    shapes = (ring(), l_shape())
    rng = np.random.default_rng(seed)
    for layer in range(layers):
        for i in range(side):
            for j in range(side):
                turn = Rotation.from_rotvec(rng.normal(scale=0.5, size=3)).as_matrix()
                centre = ((i + 0.5) * SPACING - half, (j + 0.5) * SPACING - half, 0.06 + LAYER * layer)
                world.add_affine_body(shapes[(i + j + layer) % 2], density=1000.0, pose=rd.Transform(centre, turn),
                                      name=f"body{layer * side * side + i * side + j}")
    return world


def inside_half_width(side: int) -> float:
    """Half the width of the box's inside."""
    return side * SPACING / 2

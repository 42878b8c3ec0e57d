"""Link surfaces and static meshes of barrier worlds may be open, inconsistently wound or hold faces without area,
as robots' collision meshes and terrains often are (IPC's distances are unsigned): an open cup on a prismatic joint lands on the ground
and holds an affine ball on its inner bottom, intersection-free at every step by IPC Toolkit, with step Jacobians
against central differences; faces without area are left out with a warning naming the shape, and the step is then
bit for bit that of the clean mesh; a flipped face changes nothing but round-off; example-robot-data robots whose
meshes are open step; and a cube lands on an open terrain sheet, and on a single triangle from below."""

import warnings

import numpy as np
import pytest
import trimesh

import rigidiff as rd
from ipc_checks import assert_intersection_free
from step_differences import NAMES, central_jacobians, relative_error

DHAT = 1e-3
CUP = (0.2, 0.2, 0.1)  # outer size of the open cup: a bottom and four walls, no lid
BALL = 0.04


def _cup_mesh():
    """The open cup: a box's surface without its top face (10 triangles, 8 vertices, bottom at z = 0)."""
    box = trimesh.creation.box(CUP)
    box.apply_translation((0.0, 0.0, CUP[2] / 2))
    keep = box.face_normals[:, 2] < 0.5  # drop the two lid triangles
    cup = trimesh.Trimesh(box.vertices, box.faces[keep], process=False)
    assert len(cup.faces) == 10 and not cup.is_watertight
    return cup


def _cup_skeleton(mesh=None):
    """The cup on a vertical prismatic joint (damped a little), its 1 kg centre of mass 3 cm above its bottom."""
    sk = rd.Skeleton("cup")
    inertia = rd.Inertia(mass=1.0, com=(0.0, 0.0, 0.03), rotational_inertia=np.diag([0.01, 0.01, 0.015]))
    body = sk.add_body("cup", rd.PrismaticJoint("lift", axis=(0, 0, 1), damping=0.5), inertia=inertia)
    body.add_shape(rd.Mesh(_cup_mesh() if mesh is None else mesh))
    return sk


def _cup_and_ball(friction=0.3, tolerance=None):
    kw = {} if tolerance is None else dict(newton_tolerance=tolerance, max_newton_iterations=2000)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=friction, **kw)
    world.add_ground()
    world.add_skeleton(_cup_skeleton(), q=[0.02])  # its bottom 2 cm above the ground
    world.add_affine_body(rd.Sphere(BALL), density=500.0, pose=rd.Transform((0.03, -0.02, 0.02 + BALL + 0.01)),
                          name="ball")
    return world


def _patches(world, q):
    patches = [0] * sum(len(V) for _, V, _ in world._link_surfaces(q))
    return patches + [1] * len(world.surface(q, "ball")[0])


def test_an_open_cup_lands_and_holds_a_ball_on_its_inner_bottom():
    """The cup falls 2 cm onto the ground and the ball falls onto the cup's bottom from inside: the cup rests on
    the ground within dhat, the ball on the bottom sheet within dhat of it (from above: the sheet has no inside),
    inside the walls; IPC Toolkit finds no intersection and a positive distance at every step."""
    ipctk = pytest.importorskip("ipctk")
    world = _cup_and_ball()
    q, v = world.q, world.v
    for _ in range(60):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT, ground_half_width=1.0, patches=_patches(world, q) + [2] * 4)
    cup_bottom = q[0]
    assert 0.0 < cup_bottom < DHAT  # resting on the ground
    ball = world.surface(q, "ball")[0]
    assert 0.0 < ball[:, 2].min() - cup_bottom < DHAT  # resting on the cup's bottom from inside
    assert np.abs(ball[:, :2]).max() < CUP[0] / 2  # within the walls
    assert np.abs(v).max() < 1e-2


def test_step_jacobians_of_the_cup_and_the_ball_match_central_differences():
    """The ball rolling on the cup's inner bottom while the cup rests on the ground (friction 0.3): the step's six
    Jacobians against central differences of the step itself (Newton tolerance 1e-12)."""
    world = _cup_and_ball(tolerance=1e-12)
    q, v = world.q, world.v
    for _ in range(30):
        q, v = world.step(q, v)
    v = v.copy()
    v[1:4] += (0.05, 0.02, 0.0)  # the ball slides along the bottom
    tau = np.zeros(world.nv)
    tau[0] = 2.0
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    fd = central_jacobians(world, q, v, tau, eps=(1e-8, 1e-6, 1e-5))
    for name in NAMES:
        assert relative_error(getattr(J, name), fd[name]) < 1e-6, name


def _box_mesh():
    box = trimesh.creation.box((0.1, 0.1, 0.1))
    return np.asarray(box.vertices), np.asarray(box.faces)


def _dropped_box(vertices, faces):
    """A box link on a prismatic joint, 5 mm above the ground, dropped for 30 steps; its trajectory."""
    sk = rd.Skeleton("box")
    body = sk.add_body("box", rd.PrismaticJoint("drop", axis=(0, 0, 1)), inertia=rd.Inertia(mass=1.0))
    body.add_shape(rd.Mesh(trimesh.Trimesh(vertices, faces, process=False)))
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    world.add_ground()
    world.add_skeleton(sk, q=[0.055])
    return world.rollout(world.q, world.v, np.zeros((30, world.nv)))


def test_faces_without_area_are_left_out_with_a_warning():
    """Two faces that repeat a vertex and a sliver (a third vertex on an edge, copied) are left out of the surface:
    the warning names the shape and counts them, and the box steps bit for bit as the clean box."""
    V, F = _box_mesh()
    clean = _dropped_box(V, F)
    bad = np.vstack([F, [[0, 0, 1], [2, 3, 3]]])
    with pytest.warns(UserWarning, match=r"shape .*: 2 of its 14 faces have no area"):
        dirty = _dropped_box(V, bad)
    for a, b in zip(clean, dirty):
        assert np.array_equal(a, b)
    assert 0.0 < clean[0][-1, 0] - 0.05 < DHAT  # it lands
    # a sliver: a new vertex on the segment between two of the box's, and the flat triangle over them
    V2 = np.vstack([V, 0.5 * (V[0] + V[1])])
    sliver = np.vstack([F, [[0, 1, len(V)]]])
    with pytest.warns(UserWarning, match=r"1 of its 13 faces have no area"):
        _dropped_box(V2, sliver)


def test_a_flipped_face_changes_only_round_off():
    """A box mesh with one triangle wound the wrong way (as exporters leave them) steps as the clean box to
    round-off: the barrier's distances do not read the winding."""
    V, F = _box_mesh()
    flipped = F.copy()
    flipped[3] = flipped[3, ::-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: every face has its area
        Q1, V1 = _dropped_box(V, flipped)
    Q0, V0 = _dropped_box(V, F)
    np.testing.assert_allclose(Q1, Q0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(V1, V0, rtol=0, atol=1e-10)


def test_bad_link_meshes_are_refused_naming_the_shape():
    sk = rd.Skeleton("flat")
    body = sk.add_body("plate", rd.PrismaticJoint("drop", axis=(0, 0, 1)), inertia=rd.Inertia(mass=1.0))
    line = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    body.add_shape(rd.Mesh(trimesh.Trimesh(line, [[0, 1, 2]], process=False)), name="segment")
    world = rd.World(dt=1e-2, solver="barrier")
    with pytest.raises(ValueError, match=r"shape 'segment'.*(degenerate|no face with an area)"):
        world.add_skeleton(sk)
    assert world.skeletons == [] and world.nq == 0


@pytest.mark.parametrize("rel_path", ["baxter_description/urdf/baxter.urdf",
                                      "bluevolta_description/urdf/bluevolta_bravo7_no_ee.urdf"])
def test_robots_with_open_collision_meshes_step(robots_dir, rel_path):
    """Baxter's collision meshes are open, the Bravo arm's inconsistently wound: both used to be refused. Each
    arm, fixed above the ground, swings down under gravity for five steps with a finite state and finite
    reverse-mode gradients."""
    path = robots_dir / rel_path
    if not path.exists():
        pytest.skip(f"this example-robot-data has no {rel_path}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the URDFs' own inertia warnings
        sk = rd.load_urdf(path, load_geometry=True, package_dirs=[robots_dir, robots_dir.parent])
        world = rd.World(dt=1e-2, solver="barrier", friction=0.3)
        world.add_ground(height=-3.0)
        world.add_skeleton(sk)
    closed = [world._bw_skeleton_surface_faces(k)[1] for k in range(len(world._link_meshes))]
    assert not all(closed)
    q, v = world.q, world.v
    for _ in range(5):
        q, v = world.step(q, v)
    assert np.all(np.isfinite(q)) and np.abs(q - world.q).max() > 1e-4  # it moved
    g = world.step_vjp(q, v, np.zeros(world.nv), np.ones(world.nv), np.ones(world.nv))
    assert np.all(np.isfinite(g.q)) and np.all(np.isfinite(g.tau)) and np.abs(g.tau).max() > 0.0


def _terrain(n=8, size=1.0, bump=0.05):
    """An open heightfield sheet: n x n cells over size x size m, a smooth bump of height `bump` in the middle."""
    x = np.linspace(-size / 2, size / 2, n + 1)
    X, Y = np.meshgrid(x, x, indexing="ij")
    Z = bump * np.exp(-(X**2 + Y**2) / 0.05)
    V = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
    F = []
    for i in range(n):
        for j in range(n):
            a, b, c, d = i * (n + 1) + j, (i + 1) * (n + 1) + j, (i + 1) * (n + 1) + j + 1, i * (n + 1) + j + 1
            F += [[a, b, c], [a, c, d]]
    return V, np.array(F)


def _cube_on_terrain(tolerance=None):
    kw = {} if tolerance is None else dict(newton_tolerance=tolerance, max_newton_iterations=2000)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.4, **kw)
    V, F = _terrain()
    world.add_static_mesh((V, F), name="terrain")
    world.add_affine_body(rd.Box((0.08, 0.08, 0.08)), density=500.0, pose=rd.Transform((0.2, 0.15, 0.08)),
                          name="cube")
    return world


def test_a_cube_lands_on_an_open_terrain_sheet():
    """A cube dropped beside the bump of an open heightfield (a static mesh with a boundary: it used to be refused)
    lands on it and comes to rest within dhat of the sheet, intersection-free at every step by IPC Toolkit; the
    sheet stays exactly where it is."""
    ipctk = pytest.importorskip("ipctk")
    world = _cube_on_terrain()
    q, v = world.q, world.v
    for _ in range(80):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT)
    np.testing.assert_array_equal(q[:12], world.q[:12])
    assert 0.0 < assert_intersection_free(ipctk, world, q, DHAT) < DHAT  # resting on the sheet
    assert world.surface(q, "cube")[0][:, 2].min() < 0.04  # down from its start, its bottom at 4 cm
    assert np.abs(v).max() < 2e-2


def test_step_jacobians_of_a_cube_on_an_open_terrain_match_central_differences():
    world = _cube_on_terrain(tolerance=1e-12)
    q, v = world.q, world.v
    for _ in range(30):
        q, v = world.step(q, v)
    v = v.copy()
    v[12:15] += (0.05, -0.03, 0.0)  # sliding over the sheet
    tau = np.zeros(world.nv)
    J = world.step_jacobians(q, v, tau)
    assert world.last_step["active_pairs"] > 0
    # the stiff cube (the default orthogonality stiffness): v steps below 1e-5 are round-off bound
    fd = central_jacobians(world, q, v, tau, eps=(1e-8, 1e-5, 1e-5))
    for name in NAMES:
        assert relative_error(getattr(J, name)[12:, 12:], fd[name][12:, 12:]) < 1e-6, name


def test_a_cube_is_held_by_a_single_triangle_from_below():
    """A static single triangle (no inside, no outside) held above the ground: a cube thrown up at it from below
    stops under it within dhat and falls back, intersection-free at every step."""
    ipctk = pytest.importorskip("ipctk")
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT)
    tri = np.array([[-0.5, -0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.5, 0.5]])
    world.add_static_mesh((tri, np.array([[0, 1, 2]])), name="sheet")
    world.add_affine_body(rd.Box((0.1, 0.1, 0.1)), density=500.0, pose=rd.Transform((0.0, 0.0, 0.3)), name="cube")
    q, v = world.q, world.v
    v[14] = 3.0  # up at 3 m/s: it would rise 0.46 m, far past the sheet 0.15 m above its top
    highest = -np.inf
    for _ in range(30):
        q, v = world.step(q, v)
        assert_intersection_free(ipctk, world, q, DHAT)
        highest = max(highest, world.surface(q, "cube")[0][:, 2].max())
    assert 0.5 - DHAT < highest < 0.5  # stopped under the sheet
    assert v[14] < 0.0  # and falling back

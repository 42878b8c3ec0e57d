"""Inputs the fuzz suite (tests/fuzz) found answered by a crash-free but wrong or unclear outcome: each now
gets a ValueError/TypeError that names the argument (or the shape) and says what is wrong."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

W = rd.World()
W.add_skeleton(rd.models.load("cartpole"))
TETRA = dict(vertices=np.eye(4, 3), faces=[[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]])


def test_a_length_set_by_another_argument_names_that_argument():
    Q = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"V must have shape \(3, 2\) \(one row per row of Q\), got \(2, 2\)"):
        W.step_batch(Q, np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"TAU must have shape \(3, 2\) \(one row per row of Q\)"):
        W.step_batch(Q, np.zeros((3, 2)), np.zeros((4, 2)))
    A, lo, hi = np.eye(3), np.zeros(3), np.ones(3)
    with pytest.raises(ValueError, match=r"A must have shape \(4, 4\) \(n is the length of b\), got \(3, 3\)"):
        rd.lcp.solve_boxed_lcp(A, np.zeros(4), lo, hi)
    with pytest.raises(ValueError, match=r"lo must have shape \(2,\) \(n is the length of b\)"):
        rd.lcp.solve_boxed_lcp(np.eye(2), np.zeros(2), lo, hi)
    with pytest.raises(ValueError, match=r"findex must have shape \(3,\) \(n is the length of b\)"):
        rd.lcp.solve_boxed_lcp(A, np.zeros(3), lo, hi, findex=[-1, 0])


def test_body_jacobian_derivative_product_names_x():
    with pytest.raises(ValueError, match=r"x must have shape \(2,\), got \(6,\)"):
        W.body_jacobian_derivative_product([0.1, 0.2], "pole", np.ones(6))


def test_boxed_lcp_vjp_without_g_names_g():
    with pytest.raises(TypeError, match=r"g \(dL/dx, shape \(n,\)\) is required"):
        rd.lcp.boxed_lcp_vjp(np.eye(2), [-1.0, 1.0], [0.0, 0.0], [1.0, 1.0], None)


def test_step_acceleration_that_overflows_is_refused():
    with pytest.raises(ValueError, match=r"v and v_next \(row 1\) are too large"):
        W.step_acceleration([[0.0, 0.0], [5e305, 0.0]], [[0.0, 0.0], [-5e305, 0.0]])


@pytest.mark.parametrize("shape", [rd.Box((1e100, 1.0, 1.0)), rd.Sphere(1e100), rd.Capsule(1e100, 1.0),
                                   rd.Cylinder(1.0, 1e100)], ids=["box", "sphere", "capsule", "cylinder"])
def test_an_inertia_that_overflows_names_the_shape(shape):
    assert np.isfinite(shape.volume)  # a finite volume: only mass * size^2 overflows
    with pytest.raises(ValueError, match=r"is too large for a mass of 1e\+200: its inertia overflows"):
        shape.inertia(1e200)


def test_a_capsule_whose_radius_squared_underflows_is_a_rod():
    # its volume fractions divided 0 by 0 (ZeroDivisionError)
    rod = rd.Capsule(5e-324, 0.5).inertia(3.0)
    assert np.allclose(rod.rotational_inertia, np.diag([3.0 * 0.25 / 12.0, 3.0 * 0.25 / 12.0, 0.0]), rtol=1e-15)
    fat = rd.Capsule(0.1, 0.5)
    v_cyl, v_sph = np.pi * 0.01 * 0.5, 4.0 / 3.0 * np.pi * 0.001
    ixx = 2.0 * v_cyl / (v_cyl + v_sph) * 0.28 / 12.0 + 2.0 * v_sph / (v_cyl + v_sph) * (0.004 + 0.0625 + 0.01875)
    assert np.isclose(fat.inertia(2.0).rotational_inertia[0, 0], ixx, rtol=1e-14)


def test_a_centre_of_mass_too_far_for_its_mass_is_refused():
    with pytest.raises(ValueError, match=r"com \[1.e\+0*300 0.e\+0+ 0.e\+0+\] is too far from the origin"):
        rd.Inertia(2.0, com=(1e300, 0.0, 0.0))
    assert rd.Inertia(0.0, com=(1e300, 0.0, 0.0)).mass == 0.0  # a massless body's com can be anywhere


def test_a_mesh_collapsed_to_a_point_or_flattened_by_its_scale_has_no_inertia():
    point = rd.Mesh(trimesh.Trimesh(vertices=np.zeros((4, 3)), faces=TETRA["faces"], process=False))
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="is degenerate .* it has no inertia"):
        point.inertia(1.0)
    squashed = rd.Mesh(trimesh.Trimesh(**TETRA, process=False), scale=(5e-324, 1.0, 1.0))
    scaled = r"the mesh \(Mesh scale \[5.e-324 1.e\+0+ 1.e\+0+\]\) is degenerate"
    with pytest.warns(UserWarning), pytest.raises(ValueError, match=scaled):
        squashed.volume


def test_a_bad_quaternion_rotation_names_rotation_and_shows_it():
    with pytest.raises(ValueError, match=r"rotation \(an \(x, y, z, w\) quaternion\) must be finite"):
        rd.Transform(rotation=[np.nan, 0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"must have a finite norm >= 1e-12, got \[1.e-13 0.e\+0+ 0.e\+0+ 0.e\+0+\]"):
        rd.Transform(rotation=[1e-13, 0.0, 0.0, 0.0])


def test_box_qp_checks_its_arguments():
    H = np.eye(2)
    with pytest.raises(ValueError, match=r"H \(n = len\(g\)\) must have shape \(3, 3\), got \(2, 2\)"):
        rd.trajopt.box_qp(H, [1.0, 2.0, 3.0], -1.0, 1.0)
    with pytest.raises(ValueError, match=r"lo must be a number or have shape \(2,\) like g, got \(3,\)"):
        rd.trajopt.box_qp(H, [1.0, 2.0], [-1.0, -1.0, -1.0], 1.0)
    with pytest.raises(ValueError, match="the box is empty"):  # it returned x = -inf
        rd.trajopt.box_qp(H, [1.0, 2.0], -1.0, [1.0, -np.inf])
    x, free = rd.trajopt.box_qp(H, [2.0, -3.0], -1.0, [1.0, 0.5])
    assert np.array_equal(x, [-1.0, 0.5]) and not free.any()


def test_masses_beyond_double_precision_are_named_instead_of_a_missing_mass():
    # a 1e300 kg link next to 1 kg ones swallows their articulated inertia: the step used to say only that
    # the bodies have no mass
    world = rd.World()
    world.add_skeleton(rd.models.load("arm7"))
    q, zero = world.neutral_configuration(), np.zeros(world.nv)
    q[3] = -1.0  # inside joint4's limits
    world.step(q, zero, zero)
    world.set_parameters({"link2/mass": 1e300})
    with pytest.raises(RuntimeError, match=r"masses span 1 to 1e\+300 kg"):
        world.step(q, zero, zero)


def test_a_body_without_mass_is_not_blamed_on_the_mass_range():
    sk = rd.Skeleton("s")
    sk.add_body("b", joint=rd.RevoluteJoint("hinge", axis=(0, 0, 1)), inertia=rd.Inertia(mass=1.0))
    world = rd.World()
    world.add_skeleton(sk)
    with pytest.raises(RuntimeError, match="no mass or inertia along its axes") as err:
        world.step(np.zeros(1), np.zeros(1), np.ones(1))
    assert "span" not in str(err.value)
    assert "Joint.armature" in str(err.value)
    # the remedy it names: a rotor inertia on the joint makes the point mass turn, at torque / armature
    sk.bodies[0].joint.armature = np.array([0.5])
    world = rd.World()
    world.add_skeleton(sk)
    _, v = world.step(np.zeros(1), np.zeros(1), np.ones(1))
    assert v[0] == pytest.approx(world.dt / 0.5)


@pytest.mark.parametrize("shape", [rd.Sphere(1e160), rd.Box((1.0, 2e12, 1.0)), rd.Capsule(0.1, 1e200),
                                   rd.Mesh(trimesh.Trimesh(**TETRA, process=False), scale=1e13),
                                   rd.Mesh(trimesh.creation.torus(1.0, 0.3), scale=2e12)],
                         ids=["sphere", "box", "capsule", "convex_mesh", "torus_mesh"])
def test_a_shape_too_large_to_collide_is_refused(shape):
    """Past about 1e154 m a sphere's squared distances overflow and it met the ground without a contact (a
    particle of radius 1e160 at z = 1 fell freely); every collision shape is held to 1e12 m."""
    world = rd.World()
    world.add_ground()
    sk = rd.Skeleton("giant")
    sk.add_body("b", rd.FreeJoint("root"), inertia=rd.Inertia(1.0, rotational_inertia=np.eye(3))).add_shape(shape)
    world.add_skeleton(sk)
    with pytest.raises(ValueError, match=r"shape 'b/shape0' .* too large to collide: .* beyond 1e\+12 m"):
        world.step(world.q, world.v, np.zeros(world.nv))
    with pytest.raises(ValueError, match=r"radius must be at most 1e\+12 m"):
        world.add_particles([[0.0, 0.0, 1.0]], radius=1e160)


def test_a_shape_at_the_limit_still_collides():
    world = rd.World(dt=1e-3)
    world.add_ground()
    world.add_particles([[0.0, 0.0, 1.0]], radius=1e12)  # deep in the ground: it is pushed, not ignored
    with pytest.warns(RuntimeWarning, match="1e\\+12 m deep"):
        world.step(world.q, world.v, np.zeros(world.nv))
    assert len(world.last_contacts().normal_impulses) == 1

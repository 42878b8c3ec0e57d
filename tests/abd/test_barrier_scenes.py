"""Barrier-world scenes that a wrong solver would fail: a 1 mm plate hit at 20 m/s is not tunnelled, two stacked
cubes rest for 10 s, a spinning top stays up, precesses at the gyroscopic rate and keeps its angular momentum
about the vertical but for the step's known numerical loss, and chains of interlocking rings hang from a fixed
ring and swing without coming apart. Every checked step is intersection-free by IPC Toolkit, independently of
the solver."""

import numpy as np
import pytest
import trimesh

import rigidiff as rd

ipctk = pytest.importorskip("ipctk")

G = 9.81
DHAT = 1e-3


def _assert_intersection_free(world, q, dhat, ground_half_width=None):
    """IPC Toolkit finds no crossing surfaces and a positive distance for every pair within dhat; the ground, when
    given, is a square quad of that half width at z = 0."""
    V, F = world.surfaces(q)
    if ground_half_width is not None:
        h = ground_half_width
        F = np.vstack([F, np.array([[0, 1, 2], [0, 2, 3]]) + len(V)])
        V = np.vstack([V, [[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]]])
    mesh = ipctk.CollisionMesh(V, ipctk.edges(F), F)
    assert not ipctk.has_intersections(mesh, V)
    collisions = ipctk.NormalCollisions()
    collisions.build(mesh, V, dhat)
    if len(collisions) > 0:
        assert collisions.compute_minimum_distance(mesh, V) > 0.0


def _momentum(world, v, name):
    """Linear momentum m dp/dt + (da_k/dt) . int rho xbar of one body."""
    first = world.mass_properties(name)["first_moment"]
    u = v[world.layout(name).v]
    return world.mass_properties(name)["mass"] * u[:3] + u[3:].reshape(3, 3) @ first


# --- 1. a thin plate hit at 20 m/s ----------------------------------------------------------------------------

PLATE = (0.5, 0.5, 1e-3)


def _plate_scene(plate, projectile):
    """A 1 mm plate, static (with gravity) or a free affine aluminium plate (without gravity, so that momentum is
    conserved), and 5 cm above it a 1 cm steel sphere falling straight at 20 m/s or a tilted 2 cm steel cube
    coming in corner first at 20 m/s with a sideways 1.1 m/s. Friction 0.3 stops the sliding on the plate. At
    dt = 1e-2 the projectile would move 0.2 m in a step, 200 times the plate's thickness."""
    gravity = (0.0, 0.0, -G) if plate == "static" else (0.0, 0.0, 0.0)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, gravity=gravity)
    if plate == "static":
        world.add_static_mesh(rd.Box(PLATE), name="plate")
    else:
        world.add_affine_body(rd.Box(PLATE), density=2700.0, name="plate")
    if projectile == "sphere":
        world.add_affine_body(rd.Sphere(0.01), density=7800.0, pose=rd.Transform((0.0, 0.0, 0.05)),
                              velocity=(0.0, 0.0, -20.0), name="shot")
    else:
        tilt = rd.Transform(rpy=(0.4, 0.7, 0.2)).rotation
        world.add_affine_body(rd.Box((0.02, 0.02, 0.02)), density=7800.0, pose=rd.Transform((0.0, 0.0, 0.05), tilt),
                              velocity=(1.0, 0.5, -20.0, 0.0, 0.0, 0.0), name="shot")
    return world


def _shot_in_plate_frame(world, q):
    """The projectile's surface vertices in the plate's frame (x, y along the plate, z across it)."""
    A, p = world.affine_map(q, "plate")
    R = rd.barrier_world.nearest_rotation(A)
    V, _ = world.surface(q, "shot")
    return (V - p) @ R


@pytest.mark.parametrize("plate", ["static", "free"])
@pytest.mark.parametrize("projectile", ["sphere", "cube"])
def test_projectile_at_20_m_per_s_does_not_tunnel_through_a_1_mm_plate(plate, projectile):
    """At every step: no intersection, and the projectile stays over the plate (never past its edges, so it
    cannot have gone around) and wholly on the side it came from (above the plate's upper face); a free plate and
    the projectile keep the total momentum of the start (to round-off: the contact forces are internal). Without
    the CCD-filtered line search the first step would put the projectile 0.15 m below the plate."""
    world = _plate_scene(plate, projectile)
    q, v = world.q, world.v
    momentum0 = _momentum(world, v, "shot") + _momentum(world, v, "plate")
    for _ in range(50):
        q, v = world.step(q, v)
        _assert_intersection_free(world, q, DHAT)
        local = _shot_in_plate_frame(world, q)
        assert np.abs(local[:, :2]).max() < PLATE[0] / 2
        assert local[:, 2].min() > PLATE[2] / 2
        if plate == "free":
            np.testing.assert_allclose(_momentum(world, v, "shot") + _momentum(world, v, "plate"), momentum0,
                                       rtol=0.0, atol=1e-6 * np.linalg.norm(momentum0))
    shot, rest = v[world.layout("shot").v][:3], v[world.layout("plate").v][:3]
    if plate == "static":
        # resting on it (the cube stopped by friction, the sphere rolling on), no faster than it came sideways
        assert world.last_step["min_distance"] < DHAT
        assert abs(shot[2]) < 1e-3 and np.linalg.norm(shot[:2]) < np.hypot(1.0, 0.5)
    else:
        # the implicit step's impact is nearly inelastic: the plate took the push, the two part at under 0.5 %
        # of the impact speed (the sphere's facets may turn some of it sideways)
        normal = rd.barrier_world.nearest_rotation(world.affine_map(q, "plate")[0])[:, 2]
        assert rest[2] < -0.5
        assert abs((shot - rest) @ normal) < 0.1


# --- 2. two stacked cubes at rest for 10 s ----------------------------------------------------------------------

CUBE = 0.2


def _two_cube_stack():
    """Two 0.2 m cubes, the upper one turned by 20 degrees about z and 3 cm, 2 cm off centre (so that the contact
    is neither aligned nor symmetric), each starting 0.5 dhat above its support; friction 0.5. A tight Newton
    tolerance makes every step solve for the rest state instead of returning its start."""
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.5, newton_tolerance=1e-6)
    world.add_ground()
    world.add_affine_body(rd.Box((CUBE,) * 3), density=500.0, pose=rd.Transform((0.0, 0.0, CUBE / 2 + 0.5 * DHAT)),
                          name="low")
    turn = rd.Transform(rpy=(0.0, 0.0, np.radians(20.0))).rotation
    world.add_affine_body(rd.Box((CUBE,) * 3), density=500.0,
                          pose=rd.Transform((0.03, 0.02, 1.5 * CUBE + DHAT), turn), name="high")
    return world


def test_two_stacked_cubes_rest_for_ten_seconds():
    """1000 steps of dt = 1e-2. Once settled (0.1 s) the cubes may only creep: smoothed static friction lets a
    tangential load F_t through at the slip speed eps_v F_t / (2 mu N) (the mollifier's linear part), and the
    only tangential load at rest is gravity along a contact tilted by the barrier's compliance, by at most
    dhat / size (one edge sinking dhat more than the other). That bounds each contact's creep over the 9.9 s by
    9.9 eps_v dhat / (2 mu size) = 5e-5 m (measured: 2.7e-6 m on the upper cube, 4e-9 m on the lower; tenfold
    that at mu = 0.05, as the creep's 1 / mu says; frictionless, the upper cube slides off). Each gap stays
    inside (0, dhat), where the barrier carries the weight, and every A within 1e-4 of a rotation (the weight
    strains a cube by about rho g h / kappa = 1e-5)."""
    world = _two_cube_stack()
    q, v = world.q, world.v
    creep = 9.9 * world.friction_velocity * DHAT / (2 * world.friction * CUBE)
    settled = None
    for k in range(1000):
        q, v = world.step(q, v)
        _assert_intersection_free(world, q, DHAT, ground_half_width=1.0)
        for name in ("low", "high"):
            A, _ = world.affine_map(q, name)
            assert np.linalg.norm(A @ A.T - np.eye(3)) < 1e-4
        if k == 9:
            settled = {name: world.body_pose(q, name) for name in ("low", "high")}
    low, high = world.surface(q, "low")[0], world.surface(q, "high")[0]
    assert 0.0 < low[:, 2].min() < DHAT
    assert 0.0 < high[:, 2].min() - low[:, 2].max() < DHAT
    for name, contacts in (("low", 1), ("high", 2)):  # the upper cube creeps on both contacts at most
        pose = world.body_pose(q, name)
        assert np.linalg.norm(pose[:2, 3] - settled[name][:2, 3]) < contacts * creep
        assert abs(pose[2, 3] - settled[name][2, 3]) < contacts * DHAT
        # a turn by phi moves the corners by phi size / 2 and ||R - R0||_F = sqrt(2) phi
        assert np.linalg.norm(pose[:3, :3] - settled[name][:3, :3]) < np.sqrt(2) * contacts * creep / (CUBE / 2)
    # still stacked where it was put: the upper cube's centre 3 cm, 2 cm off the lower one's
    offset = world.body_pose(q, "high")[:2, 3] - world.body_pose(q, "low")[:2, 3]
    np.testing.assert_allclose(offset, [0.03, 0.02], atol=2 * creep)
    assert np.abs(v).max() < 2 * creep / 9.9


# --- 3. a spinning top --------------------------------------------------------------------------------------------

def _top_world(dt, spin, tilt=0.05):
    """A flat top, a 1000 kg/m^3 solid of revolution (a cone rising 12 mm to a 5 cm radius, under a 6 mm disc) on
    its tip on frictionless ground, its axis tilted by `tilt` (rad) and spinning at `spin` rad/s about it. A
    frictionless ground exerts only vertical forces, so the angular momentum about the vertical is conserved by
    the motion itself."""
    profile = np.array([[0.0, 0.0], [0.05, 0.012], [0.05, 0.018], [0.0, 0.018]])  # (radius, height), tip at 0
    mesh = trimesh.creation.revolve(profile, sections=32)
    world = rd.World(dt=dt, solver="barrier", dhat=1e-4, newton_tolerance=1e-4)
    world.add_ground()
    R = rd.Transform(rpy=(tilt, 0.0, 0.0)).rotation
    world.add_affine_body(mesh, density=1000.0, pose=rd.Transform((0.0, 0.0, 0.5e-4), R),
                          velocity=np.concatenate([np.zeros(3), R[:, 2] * spin]), name="top")
    return world


def _top_moments(world):
    """Mass, tip-to-centre-of-mass length l, axial moment I_a and transverse moment about the centre of mass."""
    props = world.mass_properties("top")
    m, S = props["mass"], props["second_moment"]
    length = props["first_moment"][2] / m
    return m, length, S[0, 0] + S[1, 1], S[0, 0] + S[2, 2] - m * length**2


def _vertical_angular_momentum(world, q, v):
    """L_z = int rho (x dy/dt - y dx/dt) over the body, with x_k = p_k + a_k . xbar: each product integrates to
    (p_i, a_i)^T W (dp_j/dt, da_j/dt) with W the 4 x 4 moment matrix [[m, c^T], [c, S]]."""
    props = world.mass_properties("top")
    W = np.block([[np.array([[props["mass"]]]), props["first_moment"][None, :]],
                  [props["first_moment"][:, None], props["second_moment"]]])
    qs, vs = q[world.layout("top").q], v[world.layout("top").v]

    def row(z, i):
        return np.concatenate([[z[i]], z[3 + 3 * i:6 + 3 * i]])

    return row(qs, 0) @ W @ row(vs, 1) - row(qs, 1) @ W @ row(vs, 0)


def _spin_top(world, seconds, check=True):
    """Steps the top; returns the times, L_z, the axis' tilt from the vertical and its azimuth at every step."""
    q, v = world.q, world.v
    out = []
    for k in range(int(round(seconds / world.dt))):
        q, v = world.step(q, v)
        A, _ = world.affine_map(q, "top")
        axis = A[:, 2] / np.linalg.norm(A[:, 2])
        out.append(((k + 1) * world.dt, _vertical_angular_momentum(world, q, v), np.arccos(axis[2]),
                    np.arctan2(axis[1], axis[0])))
        if check:
            _assert_intersection_free(world, q, world.dhat, ground_half_width=0.5)
            # on its tip: it may bounce off the barrier by a little, no more
            V, _ = world.surface(q, "top")
            assert 0.0 < V[:, 2].min() < 5 * world.dhat
    t, L, tilt, azimuth = np.array(out).T
    return t, L, tilt, np.unwrap(azimuth)


@pytest.mark.parametrize("dt", [5e-4, 1e-3])
def test_spinning_top_stays_up_precesses_and_keeps_its_vertical_angular_momentum(dt):
    """Spun at 40 rad/s, over twice the 17.7 rad/s its tip-up rest needs (spin^2 > 4 m g l (I_t + m l^2) / I_a^2),
    the top stays within 6 degrees of upright for 1 s; not spun, it falls onto its rim (13.5 degrees) within
    0.3 s (measured: past 10 degrees at 0.125 s).

    L_z follows the step's own loss to 0.5 % (measured 0.03 % at dt = 5e-4, 0.12 % at 1e-3): the prediction
    2 A_n - A_n-1 of a top turning by theta = w dt per step is that rotation scaled in the plane of the spin, and
    the orthogonality energy pulls it back to the rotation by atan(sin theta / (2 - cos theta)) = theta - theta^3
    + O(theta^5), so dw/dt = -w^3 dt and L_z(t) = L_z(0) / sqrt(1 + 2 w0^2 dt t): first order in dt, and no
    loss from the contact.

    The axis precesses at the rate of a heavy symmetric top, the slow root of I_t cos(tilt) W^2 - L W + m g l = 0
    (L = L_z / cos(tilt) the spin's angular momentum, I_t the transverse moment about the centre of mass, which
    moves only vertically on frictionless ground), within 2 % over each half second (measured 0.1 to 0.8 %; the
    fast-top rate m g l / L is 7 to 16 % off)."""
    spin = 40.0
    m, length, I_a, I_t = _top_moments(_top_world(dt, 0.0))
    assert 4 * m * G * length * (I_t + m * length**2) / I_a**2 < (spin / 2) ** 2
    t, L, tilt, azimuth = _spin_top(_top_world(dt, spin), 1.0)
    assert np.degrees(tilt).max() < 6.0
    np.testing.assert_allclose(L / L[0], (1 + 2 * spin**2 * dt * t) ** -0.5 / (1 + 2 * spin**2 * dt * dt) ** -0.5,
                               rtol=5e-3)
    spin_momentum = L / np.cos(tilt)
    slow_root = (spin_momentum - np.sqrt(spin_momentum**2 - 4 * I_t * np.cos(tilt) * m * G * length)) / (
        2 * I_t * np.cos(tilt))
    for half in (t <= 0.5, t > 0.5):
        rate = np.polyfit(t[half], azimuth[half], 1)[0]
        assert rate == pytest.approx(slow_root[half].mean(), rel=0.02)
    # the control: without spin the same top tips over onto its rim
    _, _, fallen, _ = _spin_top(_top_world(dt, 0.0), 0.3, check=False)
    assert np.degrees(fallen).max() > 10.0


# --- 4. a chain of interlocking rings -----------------------------------------------------------------------------

RING_R, RING_TUBE = 0.05, 0.01


def _ring_chain(n, swing=0.0):
    """A static steel ring (radius 5 cm, tube 1 cm, 480 faces) at 1 m and n rings hanging from it, each through
    the one above in the perpendicular plane, their centres 7 cm apart: slack, since linked rings may be
    2 (R - r) = 8 cm apart, and past R + r = 6 cm, so that every second ring clears the one two above. The whole
    chain is turned by `swing` (rad) about y around the fixed ring. Friction 0.3."""
    ring = trimesh.creation.torus(major_radius=RING_R, minor_radius=RING_TUBE, major_sections=24, minor_sections=10)
    world = rd.World(dt=1e-2, solver="barrier", dhat=DHAT, friction=0.3, newton_tolerance=1e-4)
    turn = rd.Transform(rpy=(0.0, swing, 0.0)).rotation
    in_xz = rd.Transform(rpy=(np.pi / 2, 0.0, 0.0)).rotation
    in_yz = rd.Transform(rpy=(0.0, np.pi / 2, 0.0)).rotation
    top = np.array([0.0, 0.0, 1.0])
    world.add_static_mesh(ring, pose=rd.Transform(top, turn @ in_xz), name="anchor")
    for k in range(1, n + 1):
        world.add_affine_body(ring, density=7800.0, name=f"ring{k}",
                              pose=rd.Transform(top + turn @ np.array([0.0, 0.0, -0.07 * k]),
                                                turn @ (in_yz if k % 2 else in_xz)))
    return world


def _centres(q):
    return q.reshape(-1, 12)[:, :3]


def _run_chain(world, steps):
    """Steps the chain, checking at every step that it is intersection-free and still linked: two rings whose
    centres are farther apart than 2 (R - r) cannot pass through each other's holes, so a ring that slipped
    through another would show here at once."""
    q, v = world.q, world.v
    centres = []
    for _ in range(steps):
        q, v = world.step(q, v)
        _assert_intersection_free(world, q, DHAT)
        c = _centres(q)
        assert np.linalg.norm(np.diff(c, axis=0), axis=1).max() < 2 * (RING_R - RING_TUBE)
        centres.append(c)
    return q, v, np.array(centres)


@pytest.mark.parametrize("n", [6, pytest.param(20, marks=pytest.mark.slow)])
def test_chain_of_rings_hangs_at_rest_from_a_fixed_ring(n):
    """Six (or twenty) rings released slack fall 1 cm each until every link is taut, then hang straight below the
    fixed ring, each link between 2 (R - r) - 2 mm and 2 (R - r) long (7.90 cm: the polygonal tubes' inner sides
    lie inside the round ones'), every surface point slower than the smoothed static friction's creep
    (friction_velocity). What may still move is a slow twist about the vertical (six rings: 2.8e-4 m/s at the
    rims after 1.5 s): the point contacts carry no friction torque about it and the 24 x 10 faceted tubes'
    barrier is not symmetric under it (with 48 x 16 facets the chain is still)."""
    world = _ring_chain(n)
    q, v, _ = _run_chain(world, 150)
    c = _centres(q)
    np.testing.assert_allclose(c[:, :2], 0.0, atol=1e-4)
    links = -np.diff(c[:, 2])
    assert np.all(links > 2 * (RING_R - RING_TUBE) - 0.002) and np.all(links < 2 * (RING_R - RING_TUBE))
    surface_speed = max(np.abs(world.surface(q + world.dt * v, name)[0] - world.surface(q, name)[0]).max()
                        for name in world.body_names) / world.dt
    assert surface_speed < world.friction_velocity


@pytest.mark.slow
def test_swinging_chain_of_ten_rings_stays_linked_and_intersection_free():
    """Ten rings released as a chain turned 60 degrees from the vertical swing down through the vertical and
    back for 3 s, ring striking ring: intersection-free and linked at every step, and the swing only loses
    energy, the last ring never rising above where it started and swinging less wide in the last second than
    at the start."""
    n = 10
    world = _ring_chain(n, swing=np.radians(60.0))
    start = _centres(world.q)[-1]
    _, _, centres = _run_chain(world, 300)
    last = centres[:, -1]
    assert last[:, 2].max() < start[2] + DHAT
    assert last[:, 0].max() > 0.0 > start[0]  # it swung through the vertical
    assert np.abs(last[-100:, 0]).max() < abs(start[0])

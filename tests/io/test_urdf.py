"""load_urdf: joint and inertial conversion, geometry, mesh resolution and every error case."""

import os
import warnings

import numpy as np
import pytest
import trimesh

from rigidiff.io import load_urdf
from rigidiff.joints import FixedJoint, FreeJoint, PlanarJoint, PrismaticJoint, RevoluteJoint
from rigidiff.shapes import Box, Cylinder, Mesh, Sphere
from rigidiff.skeleton import Skeleton
from rigidiff.transform import rpy_to_matrix

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'
LIMIT = '<limit lower="-1" upper="1" effort="10" velocity="2"/>'


def link(name, body=INERTIAL):
    return f'<link name="{name}">{body}</link>'


AB = (link("a"), link("b"))


def joint(name, parent, child, jtype="revolute", extra=LIMIT):
    return f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def robot(*parts, name="r"):
    return f'<robot name="{name}">' + "".join(parts) + "</robot>"


def chain(*extra):
    return robot(link("base"), link("l1"), joint("j1", "base", "l1"), *extra)


# -------------------------------------------------------------------------------------------- joints


def test_joint_types_and_attributes():
    xml = robot(
        link("base"),
        *[link(n) for n in ("rev", "cont", "pris", "fix", "flo", "pla")],
        joint("j_rev", "base", "rev", extra='<origin xyz="1 2 3" rpy="0.1 0.2 0.3"/><axis xyz="0 0 2"/>'
              '<limit lower="-0.5" upper="1.5" effort="7" velocity="3"/><dynamics damping="0.4" friction="0.2"/>'),
        joint("j_cont", "base", "cont", "continuous", '<axis xyz="0 1 0"/><limit effort="5" velocity="6"/>'),
        joint("j_pris", "base", "pris", "prismatic",
              '<axis xyz="0 0 1"/><limit lower="0" upper="0.3" effort="1" velocity="1"/>'),
        joint("j_fix", "base", "fix", "fixed", '<origin xyz="0 0 1"/>'),
        joint("j_flo", "base", "flo", "floating", ""),
        joint("j_pla", "base", "pla", "planar", '<axis xyz="0 1 0"/>'),
    )
    sk = load_urdf(xml)
    assert isinstance(sk, Skeleton) and sk.name == "r" and sk.source is None
    rev = sk.joint("j_rev")
    assert isinstance(rev, RevoluteJoint) and not rev.continuous
    np.testing.assert_allclose(rev.axis, [0, 0, 1])
    assert (rev.lower[0], rev.upper[0], rev.effort_limit[0], rev.velocity_limit[0]) == (-0.5, 1.5, 7, 3)
    assert (rev.damping[0], rev.friction[0]) == (0.4, 0.2)
    origin = sk.body("rev").joint_origin
    np.testing.assert_allclose(origin.translation, [1, 2, 3])
    np.testing.assert_allclose(origin.rotation, rpy_to_matrix([0.1, 0.2, 0.3]))
    cont = sk.joint("j_cont")
    assert isinstance(cont, RevoluteJoint) and cont.continuous
    assert (cont.effort_limit[0], cont.velocity_limit[0]) == (5, 6)
    pris = sk.joint("j_pris")
    assert isinstance(pris, PrismaticJoint) and (pris.lower[0], pris.upper[0]) == (0, 0.3)
    assert isinstance(sk.joint("j_fix"), FixedJoint)
    assert isinstance(sk.joint("j_flo"), FreeJoint)
    pla = sk.joint("j_pla")
    assert isinstance(pla, PlanarJoint)
    np.testing.assert_allclose(pla.normal, [0, 1, 0])
    assert sk.nq == 1 + 1 + 1 + 0 + 7 + 3
    root = sk.body("base")
    assert root.parent is None and isinstance(root.joint, FixedJoint)


def test_default_axis_is_x():
    sk = load_urdf(chain())
    np.testing.assert_allclose(sk.joint("j1").axis, [1, 0, 0])


def test_floating_base_and_name(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(chain())
    sk = load_urdf(path, floating_base=True, name="mine")
    assert sk.name == "mine" and sk.source == str(path)
    root = sk.ordered_bodies()[0]
    assert root.name == "base" and isinstance(root.joint, FreeJoint) and root.joint.name == "root_joint"
    assert (sk.nq, sk.nv) == (8, 7)
    sk = load_urdf(str(path))
    assert (sk.nq, sk.nv) == (1, 1)


def test_world_root_link():
    xml = robot(link("world", ""), link("base"), link("arm"), link("cart"),
                joint("weld", "world", "base", "fixed", '<origin xyz="0 0 0.5"/>'),
                joint("j", "base", "arm"), joint("slide", "world", "cart", "prismatic"))
    sk = load_urdf(xml)
    assert "world" not in sk.body_names
    base, cart = sk.body("base"), sk.body("cart")
    assert base.parent is None and isinstance(base.joint, FixedJoint) and base.joint.name == "weld"
    np.testing.assert_allclose(base.joint_origin.translation, [0, 0, 0.5])
    assert cart.parent is None and isinstance(cart.joint, PrismaticJoint)
    assert [b.name for b in sk.ordered_bodies()] == ["cart", "base", "arm"]  # children sorted by joint name
    assert (sk.nq, sk.nv) == (2, 2)
    # with a floating base the world link is an ordinary massless link, as in Pinocchio
    sk = load_urdf(xml, floating_base=True)
    assert sk.body("world").joint.name == "root_joint" and sk.nq == 9


def test_world_link_contents_ignored_with_warning():
    xml = robot(link("world"), link("base"), joint("weld", "world", "base", "fixed", ""))
    with pytest.warns(UserWarning, match="world"):
        load_urdf(xml)


def test_zero_effort_limits_warn_that_the_joints_are_unactuated():
    xml = chain(link("l2"), joint("j2", "l1", "l2", extra='<limit lower="-1" upper="1" effort="0" velocity="2"/>'))
    with pytest.warns(UserWarning, match=r"\['j2'\].*effort=\"0\".*unactuated"):
        sk = load_urdf(xml)
    assert sk.joint("j2").effort_limit.tolist() == [0.0] and sk.joint("j1").effort_limit.tolist() == [10.0]


def test_mimic_joints():
    xml = chain(link("l2"), joint("j2", "l1", "l2", extra=LIMIT + '<mimic joint="j1" multiplier="2"/>'))
    with pytest.warns(UserWarning, match="j2"):
        sk = load_urdf(xml)
    assert sk.nq == 2
    with pytest.raises(ValueError, match="j2"):
        load_urdf(xml, mimic="error")
    with pytest.raises(ValueError, match="mimic"):
        load_urdf(xml, mimic="follow")


# ------------------------------------------------------------------------------------------- inertia


def test_inertial_conversion():
    body = ('<inertial><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.9"/><mass value="2.5"/>'
            '<inertia ixx="0.3" ixy="0.01" ixz="-0.02" iyy="0.4" iyz="0.03" izz="0.5"/></inertial>')
    sk = load_urdf(robot(link("base", body)))
    inertia = sk.body("base").inertia
    I = np.array([[0.3, 0.01, -0.02], [0.01, 0.4, 0.03], [-0.02, 0.03, 0.5]])
    R = rpy_to_matrix([0.3, -0.2, 0.9])
    assert inertia.mass == 2.5
    np.testing.assert_allclose(inertia.com, [0.1, 0.2, 0.3])
    np.testing.assert_allclose(inertia.rotational_inertia, R @ I @ R.T, atol=1e-15)


def test_massless_links():
    # a massless link in the middle of a chain is fine when something below it has mass
    xml = robot(link("base"), link("mid", ""), link("tip"), joint("j1", "base", "mid"), joint("j2", "mid", "tip"))
    assert load_urdf(xml).body("mid").inertia.mass == 0.0
    # a massless fixed subtree is fine too
    load_urdf(robot(link("base"), link("frame", ""), joint("f", "base", "frame", "fixed", "")))
    # a moving joint that carries no mass at all is not
    bad = robot(link("base"), link("mid", ""), link("tip", ""), joint("j1", "base", "mid"),
                joint("j2", "mid", "tip", "fixed", ""))
    with pytest.raises(ValueError, match="'mid'.*massless"):
        load_urdf(bad)
    with pytest.warns(UserWarning, match="massless"):
        load_urdf(bad, strict=False)


@pytest.mark.parametrize(
    "inertial, match",
    [
        ('<inertial><mass value="-1"/></inertial>', "negative mass"),
        ('<inertial><mass value="1"/><inertia ixx="1" iyy="-1" izz="1"/></inertial>', "positive semi-definite"),
        ('<inertial><inertia ixx="1" iyy="1" izz="1"/></inertial>', "no <mass>"),
        ('<inertial><mass value="abc"/></inertial>', "mass"),
        ('<inertial><mass value="nan"/></inertial>', "mass"),
        ('<inertial><mass value="1"/><inertia/></inertial>', "<inertia> without ixx"),  # used to load as zero
    ],
)
def test_bad_inertials_name_the_link(inertial, match):
    with pytest.raises(ValueError, match=match) as info:
        load_urdf(robot(link("base"), link("bad_link", inertial), joint("j", "base", "bad_link")))
    assert "bad_link" in str(info.value)


def test_indefinite_inertia_is_repaired_only_when_lenient():
    """strict raises; strict=False raises the negative principal moments to zero (tiago's antenna links)."""
    inertial = ('<inertial><mass value="0.1"/><inertia ixx="1e-3" ixy="2e-3" ixz="0" iyy="1e-3" iyz="0" '
                'izz="3e-3"/></inertial>')  # principal moments -1e-3, 3e-3, 3e-3
    xml = robot(link("base"), link("antenna", inertial), joint("j", "base", "antenna"))
    with pytest.raises(ValueError, match="'antenna'.*not positive semi-definite.*strict=False"):
        load_urdf(xml)
    with pytest.warns(UserWarning, match="'antenna'.*raised to zero"):
        sk = load_urdf(xml, strict=False)
    repaired = sk.body("antenna").inertia.rotational_inertia
    expected = np.array([[1.5e-3, 1.5e-3, 0.0], [1.5e-3, 1.5e-3, 0.0], [0.0, 0.0, 3e-3]])  # moments 0, 3e-3, 3e-3
    np.testing.assert_allclose(repaired, expected, atol=1e-15)
    assert sk.body("antenna").inertia.mass == 0.1


def test_non_physical_placeholder_inertia_is_kept_with_warning():
    # anymal's base uses this tensor: positive semi-definite but violating the triangle inequality
    inertial = ('<inertial><mass value="0.001"/><inertia ixx="1e-6" ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" '
                'izz="1e-6"/></inertial>')
    with pytest.warns(UserWarning, match="triangle"):
        sk = load_urdf(robot(link("base", inertial)))
    np.testing.assert_allclose(sk.body("base").inertia.rotational_inertia, np.full((3, 3), 1e-6))


# ------------------------------------------------------------------------------------------ errors


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.urdf"):
        load_urdf(tmp_path / "nope.urdf")


def test_malformed_xml(tmp_path):
    path = tmp_path / "bad.urdf"
    path.write_text('<robot name="r"><link name="a"></robot>')
    with pytest.raises(ValueError, match=r"bad\.urdf.*malformed.*mismatched tag"):
        load_urdf(path)
    with pytest.raises(ValueError, match="malformed"):
        load_urdf("<robot")
    with pytest.raises(ValueError, match="<robot>"):
        load_urdf('<model name="x"/>')
    with pytest.raises(ValueError, match="file path or a URDF XML string"):
        load_urdf(42)


@pytest.mark.parametrize(
    "xml, match",
    [
        (robot(link("a"), link("a")), "duplicate link name 'a'"),
        (robot(*AB, link("c"), joint("j", "a", "b"), joint("j", "a", "c")), "duplicate joint name 'j'"),
        (robot(link("a"), joint("j", "a", "ghost")), "joint 'j'.*child link 'ghost'"),
        (robot(link("a"), joint("j", "ghost", "a")), "joint 'j'.*parent link 'ghost'"),
        (robot(*AB, '<joint name="j" type="fixed"><parent link="a"/></joint>'), "joint 'j'.*<child"),
        (robot(*AB, link("c"), joint("j1", "a", "c"), joint("j2", "b", "c")),
         "link 'c' has two parents.*'j1'.*'j2'"),
        (robot(*AB, joint("j1", "a", "b"), joint("j2", "b", "a")), "no root link"),
        (robot(link("r"), link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")), "cycle"),
        (robot(link("a"), joint("j", "a", "a")), "joint 'j'.*itself"),
        (robot(link("a"), link("b")), r"several root links \['a', 'b'\]"),
        (robot(), "no <link>"),
        (robot(*AB, joint("j", "a", "b", "hinge")), "joint 'j' has unknown type 'hinge'"),
        (robot(*AB, '<joint name="j"><parent link="a"/><child link="b"/></joint>'), "joint 'j' has no type"),
        (robot(*AB, joint("j", "a", "b", extra=LIMIT + '<origin xyz="1 2"/>')), "joint 'j' <origin xyz>"),
        (robot(*AB, joint("j", "a", "b", extra=LIMIT + '<axis xyz="0 0 0"/>')), "joint 'j' axis"),
        (robot(*AB, joint("j", "a", "b", extra='<limit lower="1" upper="-1" effort="1" velocity="1"/>')),
         "joint 'j'.*lower"),
        (robot(*AB, joint("j", "a", "b", extra='<limit lower="0" upper="1" effort="-1" velocity="1"/>')),
         "joint 'j'.*effort"),
        (robot(*AB, joint("j", "a", "b", extra="")), "joint 'j'.*no <limit>"),
    ],
)
def test_tree_errors(xml, match):
    with pytest.raises(ValueError, match=match):
        load_urdf(xml)


def test_missing_limit_lenient():
    xml = robot(*AB, joint("j", "a", "b", extra=""))
    with pytest.warns(UserWarning, match="no <limit>"):
        sk = load_urdf(xml, strict=False)
    assert sk.joint("j").continuous


def test_bad_options():
    with pytest.raises(ValueError, match="joint_order"):
        load_urdf(chain(), joint_order="random")


# ----------------------------------------------------------------------------------------- geometry


def _geom(kind, geometry, name=None, origin=""):
    attr = f' name="{name}"' if name else ""
    return f"<{kind}{attr}>{origin}<geometry>{geometry}</geometry></{kind}>"


def test_primitive_geometry():
    body = INERTIAL + "".join([
        _geom("collision", '<box size="1 2 3"/>', "hull", '<origin xyz="0 0 1" rpy="0 0 0.5"/>'),
        _geom("visual", '<box size="1 2 3"/>', "hull"),  # same name: falls back to a default name
        _geom("collision", '<cylinder radius="0.1" length="0.4"/>'),
        _geom("visual", '<sphere radius="0.3"/>', "ball"),
    ])
    sk = load_urdf(robot(link("base", body)))
    shapes = sk.body("base").shapes
    assert [type(s.shape) for s in shapes] == [Box, Cylinder, Box, Sphere]  # collisions first
    hull, cyl, vis_box, ball = shapes
    assert hull.name == "hull" and hull.collide and not hull.visual
    np.testing.assert_allclose(hull.origin.translation, [0, 0, 1])
    np.testing.assert_allclose(hull.shape.size, [1, 2, 3])
    assert (cyl.shape.radius, cyl.shape.length) == (0.1, 0.4)  # URDF length is the full length
    assert vis_box.visual and not vis_box.collide and vis_box.name != "hull"
    assert ball.name == "ball" and ball.shape.radius == 0.3
    assert len({s.name for s in shapes}) == 4


@pytest.mark.parametrize(
    "geometry, match",
    [('<box size="1 0 1"/>', "Box size"), ('<sphere/>', "radius"), ('<cylinder radius="1"/>', "length"),
     ('<mesh/>', "filename"), ('<cone radius="1"/>', "unknown geometry type 'cone'")],
)
def test_bad_geometry_names_the_link(geometry, match):
    with pytest.raises(ValueError, match=match) as info:
        load_urdf(robot(link("base", _geom("collision", geometry))))
    assert "'base'" in str(info.value)


def test_unknown_geometry_lenient():
    with pytest.warns(UserWarning, match="cone"):
        sk = load_urdf(robot(link("base", _geom("collision", '<cone radius="1"/>'))), strict=False)
    assert sk.body("base").shapes == []


@pytest.mark.parametrize("geometry, problem", [('<sphere radius="0"/>', "radius must be > 0"),
                                               ('<mesh filename="toe.stl" scale="1 1 1 1"/>', "scale must be 3")],
                         ids=["zero-radius sphere", "4-number mesh scale"])
def test_invalid_visual_geometry_is_skipped_when_lenient(geometry, problem):
    """pybullet's laikago toes carry a zero-radius visual sphere (Pinocchio loads them): strict raises
    and points to strict=False, which skips that visual with a warning naming the link and the problem.
    Invalid collision geometry raises either way."""
    toe = INERTIAL + _geom("collision", '<sphere radius="0.02"/>') + _geom("visual", geometry)
    xml = robot(link("base"), link("toe", toe), joint("knee", "base", "toe"))
    with pytest.raises(ValueError, match=f"link 'toe' <visual> #0 .*{problem}.*strict=False skips this visual"):
        load_urdf(xml)
    with pytest.warns(UserWarning, match=f"link 'toe' <visual> #0 .*{problem}"):
        sk = load_urdf(xml, strict=False)
    (kept,) = sk.body("toe").shapes
    assert kept.collide and kept.shape.radius == 0.02
    with pytest.raises(ValueError, match=f"link 'toe' <collision> #0 .*{problem}"):
        load_urdf(robot(link("toe", _geom("collision", geometry))), strict=False)


def _write_mesh(path, extents=(1.0, 1.0, 1.0)):
    path.parent.mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=extents).export(path)
    return path


def _mesh_robot(filename, scale=""):
    return robot(link("base", _geom("collision", f'<mesh filename="{filename}"{scale}/>') +
                      _geom("visual", f'<mesh filename="{filename}"{scale}/>')))


def test_mesh_geometry_is_lazy_and_shared(tmp_path):
    mesh_path = _write_mesh(tmp_path / "meshes" / "box.stl", (1.0, 2.0, 3.0))
    urdf = tmp_path / "r.urdf"
    urdf.write_text(_mesh_robot("meshes/box.stl", ' scale="2 2 2"'))
    sk = load_urdf(urdf)
    coll, vis = sk.body("base").shapes
    assert isinstance(coll.shape, Mesh) and coll.shape is vis.shape
    assert coll.shape.path == str(mesh_path) and not coll.shape.loaded
    np.testing.assert_allclose(coll.shape.vertices.max(axis=0), [1.0, 2.0, 3.0])


def test_load_geometry_false_touches_no_mesh(tmp_path, monkeypatch):
    import rigidiff.io.urdf as urdf_module

    def boom(*args, **kwargs):
        raise AssertionError("a mesh was touched")

    monkeypatch.setattr(urdf_module, "resolve_resource", boom)
    monkeypatch.setattr(trimesh, "load", boom)
    sk = load_urdf(_mesh_robot("package://nowhere/missing.stl"), load_geometry=False)
    assert sk.body("base").shapes == []
    with pytest.raises(AssertionError):
        load_urdf(_mesh_robot("package://nowhere/missing.stl"))


def test_missing_mesh_lists_every_path_tried(tmp_path, monkeypatch):
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ros"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "ament"))
    urdf = tmp_path / "a" / "b" / "r.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(_mesh_robot("package://pkg/meshes/m.stl"))
    with pytest.raises(FileNotFoundError) as info:
        load_urdf(urdf, package_dirs=[tmp_path / "dirs"])
    msg = str(info.value)
    expected = [
        tmp_path / "dirs" / "pkg" / "meshes" / "m.stl",
        tmp_path / "ros" / "pkg" / "meshes" / "m.stl",
        tmp_path / "ament" / "share" / "pkg" / "meshes" / "m.stl",
        tmp_path / "a" / "b" / "pkg" / "meshes" / "m.stl",
        tmp_path / "a" / "pkg" / "meshes" / "m.stl",
        tmp_path / "pkg" / "meshes" / "m.stl",
    ]
    positions = [msg.index(str(p)) for p in expected]
    assert positions == sorted(positions), msg
    assert "'base'" in msg and "package://pkg/meshes/m.stl" in msg


def test_a_missing_visual_mesh_is_skipped_when_lenient_and_a_missing_collision_mesh_raises(tmp_path):
    """example-robot-data's romeo_laas_small names a visual mesh it does not ship: strict raises
    FileNotFoundError listing the paths tried, strict=False skips that visual with the same message and keeps
    the collision geometry; a missing collision mesh raises either way."""
    _write_mesh(tmp_path / "meshes" / "box.stl")
    both = (_geom("collision", '<mesh filename="meshes/box.stl"/>') +
            _geom("visual", '<mesh filename="meshes/gone.stl"/>'))
    urdf = tmp_path / "r.urdf"
    urdf.write_text(robot(link("base", both)))
    with pytest.raises(FileNotFoundError, match=r"link 'base' <visual> #0 .*gone\.stl"):
        load_urdf(urdf)
    with pytest.warns(UserWarning, match=r"(?s)link 'base' <visual> #0 .*gone\.stl.*strict=False skips this visual"):
        sk = load_urdf(urdf, strict=False)
    (kept,) = sk.body("base").shapes
    assert kept.collide and not kept.visual
    urdf.write_text(robot(link("base", _geom("collision", '<mesh filename="meshes/gone.stl"/>'))))
    with pytest.raises(FileNotFoundError, match=r"link 'base' <collision> #0 .*gone\.stl"):
        load_urdf(urdf, strict=False)


def test_package_resolution_order(tmp_path, monkeypatch):
    rel = os.path.join("meshes", "m.stl")
    places = {
        "dirs": tmp_path / "dirs" / "pkg" / rel,
        "is_pkg": tmp_path / "other" / "pkg" / rel,  # a package dir that is the package itself
        "ros": tmp_path / "ros" / "pkg" / rel,
        "ament": tmp_path / "ament" / "share" / "pkg" / rel,
        "urdf_parent": tmp_path / "ws" / "pkg" / rel,
    }
    for p in places.values():
        _write_mesh(p)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ros"))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path / "ament"))
    urdf = tmp_path / "ws" / "robot_description" / "urdf" / "r.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(_mesh_robot("package://pkg/meshes/m.stl"))

    def resolved(**kw):
        return load_urdf(urdf, **kw).body("base").shapes[0].shape.path

    assert resolved(package_dirs=[tmp_path / "dirs", tmp_path / "other" / "pkg"]) == str(places["dirs"])
    assert resolved(package_dirs=[str(tmp_path / "other" / "pkg")]) == str(places["is_pkg"])
    assert resolved(package_dirs=str(tmp_path / "other" / "pkg" / "meshes")) == str(places["is_pkg"])
    assert resolved() == str(places["ros"])
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    assert resolved() == str(places["ament"])
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert resolved() == str(places["urdf_parent"])  # <urdf folder>/../../pkg/...


@pytest.mark.parametrize("bad", [3, 2.5, [3], object()], ids=["int", "float", "list-of-int", "object"])
def test_package_dirs_that_are_not_folders_name_the_argument(bad):
    # package_dirs=3 used to give "'int' object is not iterable"
    with pytest.raises(ValueError, match="package_dirs must be a folder or a list of folders"):
        load_urdf(robot(link("base")), package_dirs=bad)


def test_package_inside_its_own_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    mesh = _write_mesh(tmp_path / "deep" / "my_pkg" / "meshes" / "m.stl")
    urdf = tmp_path / "deep" / "my_pkg" / "robots" / "sub" / "more" / "r.urdf"
    urdf.parent.mkdir(parents=True)
    urdf.write_text(_mesh_robot("package://my_pkg/meshes/m.stl"))
    assert load_urdf(urdf).body("base").shapes[0].shape.path == str(mesh)


def test_file_uri_and_absolute_paths(tmp_path):
    mesh = _write_mesh(tmp_path / "m.stl")
    for name in (f"file://{mesh}", str(mesh), "file://m.stl"):
        urdf = tmp_path / "r.urdf"
        urdf.write_text(_mesh_robot(name))
        assert load_urdf(urdf).body("base").shapes[0].shape.path == str(mesh)


def test_xml_string_relative_meshes(tmp_path, monkeypatch):
    mesh = _write_mesh(tmp_path / "assets" / "m.stl")
    xml = "  \n" + _mesh_robot("m.stl")
    assert load_urdf(xml, package_dirs=[tmp_path / "assets"]).body("base").shapes[0].shape.path == str(mesh)
    monkeypatch.chdir(tmp_path / "assets")
    assert load_urdf(xml).body("base").shapes[0].shape.path == str(mesh)


@pytest.mark.filterwarnings("ignore:.*effort=:UserWarning")  # its joints have effort="0"
def test_real_robot_meshes_resolve(robots_dir):
    """example-robot-data's package://example-robot-data/robots/... with its robots/ folder or none."""
    path = robots_dir / "double_pendulum_description" / "urdf" / "double_pendulum.urdf"
    for dirs in ([robots_dir], None):
        sk = load_urdf(path, package_dirs=dirs)
        meshes = [s.shape for b in sk.bodies for s in b.shapes if isinstance(s.shape, Mesh)]
        assert meshes and all(os.path.isfile(m.path) for m in meshes)
        assert meshes[0].vertices.shape[1] == 3


def test_talos_mirrored_meshes(robots_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk = load_urdf(robots_dir / "talos_data" / "robots" / "talos_reduced.urdf", package_dirs=[robots_dir])
    mirrored = [s.shape for b in sk.bodies for s in b.shapes
                if isinstance(s.shape, Mesh) and np.prod(s.shape.scale) < 0]
    assert mirrored
    m = mirrored[0]
    if m.is_watertight:  # mirrored triangles are re-wound, so the volume stays positive
        tm = trimesh.Trimesh(m.vertices, m.faces)
        assert tm.volume > 0


def test_joint_value_errors_name_the_file_and_joint(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(robot(*AB, joint("j", "a", "b", extra=LIMIT + '<dynamics damping="-1"/>')))
    with pytest.raises(ValueError, match=r"r\.urdf.*joint 'j'.*damping"):
        load_urdf(path)
    path.write_text(robot(*AB, joint("j", "a", "b", "floating", '<origin rpy="0 x 0"/>')))
    with pytest.raises(ValueError, match=r"r\.urdf.*joint 'j' <origin rpy>"):
        load_urdf(path)

"""URDF loader: ``load_urdf(path) -> Skeleton``.

The layout of q and v is exactly Pinocchio's for the same file (``pinocchio.buildModelFromUrdf``, with
``JointModelFreeFlyer()`` for a floating base), except that a ``continuous`` joint is a revolute joint
without limits (nq = 1, where Pinocchio uses cos/sin, nq = 2) and a ``planar`` joint has nq = 3 (x, y,
theta; Pinocchio: 4). Pinocchio reads URDFs through urdfdom, which keeps the child joints of a link in a
map sorted by joint name; so bodies are visited depth-first from the root, the children of each link
in the byte order of their joint names (``joint_order="pinocchio"``, the default). Pass
``joint_order="file"`` to visit children in the order their ``<joint>`` elements appear instead.

Rules, besides the URDF specification:

- The root link (the one link that is no joint's child) is welded to the world by a FixedJoint, or,
  with ``floating_base=True``, attached by ``FreeJoint("root_joint")``. A root link named ``world``
  (without ``floating_base``) is the world itself: its child links are attached to the world (parent
  None) by their own joints, and anything the world link carries (inertial, geometry) is ignored with
  a warning. With ``floating_base=True`` a ``world`` root is an ordinary (massless) link, as in Pinocchio.
- Fixed joints are kept as bodies with a FixedJoint, so every link frame is exact; the world compiler
  merges them.
- ``<mimic>`` is ignored, as Pinocchio does by default: mimic joints load as independent joints and a
  warning names them (``mimic="error"`` raises instead).
- Inertials: ``<inertial>`` gives the inertia about the centre of mass in the ``<origin>`` frame; it is
  rotated into link axes. A link without ``<inertial>`` is massless. Negative mass or a rotational
  inertia that is not positive semi-definite raises ValueError naming the link; one that violates
  the triangle inequality (placeholder values, e.g. anymal's base) is kept exactly, with a warning.
  A massless link may sit anywhere in the tree, but a moving joint whose whole subtree (its link and
  every descendant) is massless has no inertia to move and raises ValueError naming the link (a
  warning when ``strict=False``).
- ``strict=False`` also turns a revolute or prismatic joint without ``<limit>`` (the specification
  requires one) into an unlimited joint with a warning, and skips, with a warning naming the link and
  the problem, unknown geometry and invalid ``<visual>`` geometry (a zero-radius sphere, as in
  pybullet's laikago toes, a mesh ``scale`` of 4 numbers, or a visual mesh whose file cannot be found, as
  romeo_laas_small's). Invalid or missing ``<collision>`` geometry always raises.
- Geometry: ``<collision>`` elements become shapes with ``collide=True, visual=False``, ``<visual>``
  elements shapes with ``collide=False, visual=True``. Meshes are resolved at load time
  (see :mod:`rigidiff.io.resources`; FileNotFoundError lists the paths tried) but read lazily, on first
  use of their vertices. ``load_geometry=False`` skips all geometry and touches no file.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from rigidiff._validate import as_bool, as_name
from rigidiff.inertia import Inertia
from rigidiff.io.resources import resolve_resource
from rigidiff.joints import FixedJoint, FreeJoint, PlanarJoint, PrismaticJoint, RevoluteJoint
from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Sphere
from rigidiff.skeleton import Skeleton
from rigidiff.transform import Transform

__all__ = ["load_urdf"]

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ROOT_JOINT = "root_joint"


@dataclass
class _JointSpec:
    name: str
    type: str
    parent: str
    child: str
    element: ET.Element = field(repr=False)
    index: int = 0


class _Context:
    """What the parse needs besides the XML: where it came from and the options."""

    def __init__(self, where: str, base_dir: str, package_dirs, from_string: bool, strict: bool):
        self.where = where
        self.base_dir = base_dir
        self.package_dirs = package_dirs
        self.from_string = from_string
        self.strict = strict
        self.meshes: dict[tuple, Mesh] = {}

    def lenient(self, message: str):
        """Raise ValueError in strict mode, warn otherwise."""
        if self.strict:
            raise ValueError(f"{self.where}: {message}")
        warnings.warn(f"{self.where}: {message}", UserWarning, stacklevel=4)


def load_urdf(path, floating_base: bool = False, package_dirs=None, load_geometry: bool = True,
              name: str | None = None, strict: bool = True, *, mimic: str = "ignore",
              joint_order: str = "pinocchio") -> Skeleton:
    """Load a URDF file (or an XML string) as a :class:`rigidiff.skeleton.Skeleton`.

    Args:
        path: path of a ``.urdf`` file, or the URDF XML itself (a string starting with ``<``).
        floating_base: attach the root link by ``FreeJoint("root_joint")`` instead of welding it.
        package_dirs: a folder or a list of folders searched first for ``package://`` meshes (and, for
            an XML string, for relative mesh paths).
        load_geometry: read ``<collision>`` and ``<visual>`` elements (False: skip them, touch no file).
        name: skeleton name (default: the ``<robot name>``).
        strict: raise on questionable but loadable input (see the module docstring) instead of warning.
        mimic: ``"ignore"`` (load mimic joints as independent joints, with a warning) or ``"error"``.
        joint_order: ``"pinocchio"`` (children sorted by joint name: Pinocchio's q/v layout) or ``"file"``.

    Returns:
        The skeleton, bodies named after the links and joints after the URDF joints; ``source`` is
        set to the file's absolute path (None for a string).

    Raises:
        FileNotFoundError: the URDF or a mesh cannot be found (the message lists the paths tried).
        ValueError: malformed XML, a broken tree, an unknown joint type, an invalid inertial, ...
    """
    if mimic not in ("ignore", "error"):
        raise ValueError(f"mimic must be 'ignore' or 'error', got {mimic!r}")
    if joint_order not in ("pinocchio", "file"):
        raise ValueError(f"joint_order must be 'pinocchio' or 'file', got {joint_order!r}")
    floating_base, load_geometry = as_bool(floating_base, "floating_base"), as_bool(load_geometry, "load_geometry")
    strict = as_bool(strict, "strict")
    root, file_path = _parse_xml(path)
    if package_dirs is None:
        package_dirs = []
    elif isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    try:
        package_dirs = [os.fspath(d) for d in package_dirs]
    except TypeError:
        raise ValueError(f"package_dirs must be a folder or a list of folders, got {package_dirs!r}") from None
    ctx = _Context(file_path or "<URDF string>", os.path.dirname(file_path) if file_path else os.getcwd(),
                   package_dirs, file_path is None, strict)

    links = _collect_links(root, ctx)
    joints = _collect_joints(root, links, ctx)
    root_link = _find_root(links, joints, ctx)
    children = _children(joints, joint_order)
    _check_connected(root_link, links, children, joints, ctx)

    mimics = [j.name for j in joints if j.element.find("mimic") is not None]
    if mimics and mimic == "error":
        raise ValueError(f"{ctx.where}: mimic joints are not supported (mimic='error'): {mimics}")

    robot_name = name if name is not None else root.get("name") or "robot"
    skeleton = Skeleton(as_name(robot_name, "skeleton name"))
    skeleton.source = file_path

    def add(link_name: str, joint, parent, origin: Transform):
        body = skeleton.add_body(link_name, joint=joint, parent=parent, joint_origin=origin,
                                 inertia=_inertia(links[link_name], link_name, ctx))
        if load_geometry:
            _add_geometry(body, links[link_name], ctx)
        return body

    # (link name, parent body or None, joint, origin), visited depth-first
    stack: list[tuple] = []
    if root_link == "world" and not floating_base:
        _warn_world_contents(links["world"], ctx)
        for spec in reversed(children.get("world", [])):
            stack.append((spec.child, None, *_joint_and_origin(spec, ctx)))
    else:
        if floating_base:
            if ROOT_JOINT in {j.name for j in joints}:
                raise ValueError(f"{ctx.where}: a joint is already named {ROOT_JOINT!r}; it is reserved for the "
                                 f"floating base")
            root_joint = FreeJoint(ROOT_JOINT)
        else:
            root_joint = FixedJoint(_unique_name(ROOT_JOINT, {j.name for j in joints}))
        stack.append((root_link, None, root_joint, Transform()))
    while stack:
        link_name, parent, joint, origin = stack.pop()
        body = add(link_name, joint, parent, origin)
        for spec in reversed(children.get(link_name, [])):
            stack.append((spec.child, body, *_joint_and_origin(spec, ctx)))

    _check_masses(skeleton, ctx)
    unactuated = [b.joint.name for b in skeleton.bodies if b.joint.nv and np.all(b.joint.effort_limit == 0.0)]
    if unactuated:
        warnings.warn(f"{ctx.where}: joints {unactuated} have <limit effort=\"0\">: World.step clips their torques "
                      f"to zero (they are unactuated, and their torque gradients are zero); to actuate one, set "
                      f"skeleton.joint(name).effort_limit = np.full(nv, np.inf)", UserWarning, stacklevel=2)
    if mimics:
        warnings.warn(f"{ctx.where}: URDF mimic joints {mimics} are loaded as independent joints "
                      f"(the mimic relation is ignored, as in Pinocchio)", UserWarning, stacklevel=2)
    return skeleton


# ----------------------------------------------------------------------------------------------- XML


def _parse_xml(source) -> tuple[ET.Element, str | None]:
    """The <robot> element and the absolute file path (None for an XML string)."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        path, where = None, "<URDF string>"
        try:
            root = ET.fromstring(source)
        except ET.ParseError as exc:
            raise ValueError(f"{where}: malformed URDF XML: {exc}") from None
    elif isinstance(source, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(source))
        where = path
        if not os.path.isfile(path):
            raise FileNotFoundError(f"URDF file not found: {path}")
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as exc:
            raise ValueError(f"{path}: malformed URDF XML: {exc}") from None
    else:
        raise ValueError(f"load_urdf needs a file path or a URDF XML string, got {type(source).__name__}")
    if root.tag != "robot":
        raise ValueError(f"{where}: the root element must be <robot>, got <{root.tag}>")
    return root, path


def _floats(text, n: int, what: str, default=None) -> np.ndarray:
    """``n`` finite floats from a whitespace-separated attribute value (``default`` if absent)."""
    if text is None:
        if default is None:
            raise ValueError(f"{what} is missing")
        return np.asarray(default, dtype=float)
    try:
        vals = np.array([float(t) for t in text.split()], dtype=float)
    except ValueError:
        raise ValueError(f"{what} must be {n} number(s), got {text!r}") from None
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise ValueError(f"{what} must be {n} finite number(s), got {text!r}")
    return vals


def _float(el: ET.Element, attr: str, what: str, default=None) -> float:
    return float(_floats(el.get(attr), 1, f"{what} attribute {attr!r}",
                         None if default is None else [default])[0])


def _origin(el: ET.Element, what: str) -> Transform:
    o = el.find("origin")
    if o is None:
        return Transform()
    xyz = _floats(o.get("xyz"), 3, f"{what} <origin xyz>", (0.0, 0.0, 0.0))
    rpy = _floats(o.get("rpy"), 3, f"{what} <origin rpy>", (0.0, 0.0, 0.0))
    return Transform(xyz, rpy=rpy)


def _unique_name(base: str, taken: set) -> str:
    name, k = base, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


# ---------------------------------------------------------------------------------------- tree checks


def _collect_links(root: ET.Element, ctx: _Context) -> dict[str, ET.Element]:
    links: dict[str, ET.Element] = {}
    for el in root.findall("link"):
        name = el.get("name")
        if not name:
            raise ValueError(f"{ctx.where}: a <link> has no name attribute")
        if name in links:
            raise ValueError(f"{ctx.where}: duplicate link name {name!r}")
        links[name] = el
    if not links:
        raise ValueError(f"{ctx.where}: the URDF has no <link>")
    return links


def _collect_joints(root: ET.Element, links: dict, ctx: _Context) -> list[_JointSpec]:
    specs: list[_JointSpec] = []
    names: set[str] = set()
    parent_of: dict[str, str] = {}  # child link -> joint name
    for i, el in enumerate(root.findall("joint")):
        name = el.get("name")
        if not name:
            raise ValueError(f"{ctx.where}: joint #{i} has no name attribute")
        if name in names:
            raise ValueError(f"{ctx.where}: duplicate joint name {name!r}")
        names.add(name)
        jtype = el.get("type")
        if jtype is None:
            raise ValueError(f"{ctx.where}: joint {name!r} has no type attribute")
        ends = {}
        for end in ("parent", "child"):
            e = el.find(end)
            if e is None or not e.get("link"):
                raise ValueError(f"{ctx.where}: joint {name!r} has no <{end} link=...>")
            if e.get("link") not in links:
                raise ValueError(f"{ctx.where}: joint {name!r} refers to {end} link {e.get('link')!r}, "
                                 f"which is not defined")
            ends[end] = e.get("link")
        child = ends["child"]
        if child in parent_of:
            raise ValueError(f"{ctx.where}: link {child!r} has two parents: it is the child of joints "
                             f"{parent_of[child]!r} and {name!r}")
        if ends["parent"] == child:
            raise ValueError(f"{ctx.where}: joint {name!r} connects link {child!r} to itself (a cycle)")
        parent_of[child] = name
        specs.append(_JointSpec(name, jtype, ends["parent"], child, el, i))
    return specs


def _find_root(links: dict, joints: list[_JointSpec], ctx: _Context) -> str:
    children = {j.child for j in joints}
    roots = [name for name in links if name not in children]
    if not roots:
        raise ValueError(f"{ctx.where}: no root link: every link is the child of a joint (the joints form a cycle)")
    if len(roots) > 1:
        raise ValueError(f"{ctx.where}: several root links {roots}; a URDF must be a single tree "
                         f"(connect them with joints)")
    return roots[0]


def _children(joints: list[_JointSpec], joint_order: str) -> dict[str, list[_JointSpec]]:
    children: dict[str, list[_JointSpec]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)
    if joint_order == "pinocchio":
        for lst in children.values():
            lst.sort(key=lambda j: j.name.encode("utf-8"))
    return children


def _check_connected(root: str, links: dict, children: dict, joints: list, ctx: _Context):
    seen = {root}
    stack = [root]
    while stack:
        for spec in children.get(stack.pop(), []):
            seen.add(spec.child)
            stack.append(spec.child)
    lost = [name for name in links if name not in seen]
    if lost:
        cyc = [j.name for j in joints if j.child in lost]
        raise ValueError(f"{ctx.where}: links {lost} are not connected to the root link {root!r}: "
                         f"joints {cyc} form a cycle")


# ------------------------------------------------------------------------------------------- joints


def _joint_and_origin(spec: _JointSpec, ctx: _Context):
    joint = _make_joint(spec, ctx)
    try:
        return joint, _origin(spec.element, f"joint {spec.name!r}")
    except ValueError as exc:
        raise ValueError(f"{ctx.where}: {exc}") from None


def _make_joint(spec: _JointSpec, ctx: _Context):
    try:
        return _build_joint(spec, ctx)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(ctx.where) else f"{ctx.where}: {msg}") from None


def _build_joint(spec: _JointSpec, ctx: _Context):
    el, name, jtype = spec.element, spec.name, spec.type
    what = f"joint {name!r}"
    if jtype not in JOINT_TYPES:
        raise ValueError(f"{what} has unknown type {jtype!r}; URDF joint types are {list(JOINT_TYPES)}")
    kwargs = {}
    dyn = el.find("dynamics")
    if dyn is not None:
        kwargs["damping"] = _float(dyn, "damping", f"{what} <dynamics>", 0.0)
        kwargs["friction"] = _float(dyn, "friction", f"{what} <dynamics>", 0.0)
    if jtype == "fixed":
        return FixedJoint(name)
    if jtype == "floating":
        return FreeJoint(name, **kwargs)
    axis = _floats(el.find("axis").get("xyz") if el.find("axis") is not None else None, 3, f"{what} <axis xyz>",
                   (1.0, 0.0, 0.0))
    if jtype == "planar":
        return PlanarJoint(name, normal=axis, **kwargs)
    limit = el.find("limit")
    if limit is not None:
        kwargs["effort_limit"] = _optional_limit(limit, "effort", what)
        kwargs["velocity_limit"] = _optional_limit(limit, "velocity", what)
        if jtype != "continuous":
            kwargs["lower"] = _float(limit, "lower", f"{what} <limit>", 0.0)
            kwargs["upper"] = _float(limit, "upper", f"{what} <limit>", 0.0)
    elif jtype != "continuous":
        ctx.lenient(f"{what} of type {jtype!r} has no <limit> (required by the URDF specification); "
                    f"with strict=False it is loaded without limits")
    cls = PrismaticJoint if jtype == "prismatic" else RevoluteJoint
    return cls(name, axis=axis, **kwargs)


def _optional_limit(limit: ET.Element, attr: str, what: str):
    if limit.get(attr) is None:
        return None
    v = _float(limit, attr, f"{what} <limit>")
    if v < 0:
        raise ValueError(f"{what} <limit {attr}> must be >= 0, got {v}")
    return v


# ------------------------------------------------------------------------------------------ inertia


def _inertia(link: ET.Element, link_name: str, ctx: _Context) -> Inertia:
    el = link.find("inertial")
    if el is None:
        return Inertia.zero()
    what = f"link {link_name!r} <inertial>"
    mass_el = el.find("mass")
    if mass_el is None:
        raise ValueError(f"{ctx.where}: {what} has no <mass>")
    mass = _float(mass_el, "value", f"{what} <mass>")
    if mass < 0:
        raise ValueError(f"{ctx.where}: {what} has negative mass {mass}")
    I = np.zeros((3, 3))
    ie = el.find("inertia")
    if ie is not None:
        if not any(k in ie.attrib for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")):
            ctx.lenient(f"{what} has an <inertia> without ixx, ixy, ixz, iyy, iyz or izz: its rotational inertia "
                        "would be zero")
        v = {k: _float(ie, k, f"{what} <inertia>", 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array([[v["ixx"], v["ixy"], v["ixz"]], [v["ixy"], v["iyy"], v["iyz"]], [v["ixz"], v["iyz"], v["izz"]]])
    origin = _origin(el, what)
    R = origin.rotation
    I = R @ I @ R.T
    eig, vecs = np.linalg.eigh(I)
    if eig.min() < -1e-9 * max(1.0, eig.max()):
        # some published files carry indefinite tensors (tiago's antenna links): no body has them
        ctx.lenient(f"{what} has an inertia tensor that is not positive semi-definite (principal moments "
                    f"{eig}); with strict=False its negative moments are raised to zero")
        eig = np.maximum(eig, 0.0)
        I = (vecs * eig) @ vecs.T
    try:
        inertia = Inertia(mass, com=origin.translation, rotational_inertia=I, check_triangle=False)
    except ValueError as exc:
        raise ValueError(f"{ctx.where}: {what} is not physical: {exc}") from None
    if eig[0] + eig[1] < eig[2] - 1e-9 * max(1.0, eig[2]):
        # placeholder values such as anymal's all-1e-6 tensor: kept exactly, so results match other engines
        warnings.warn(f"{ctx.where}: {what} violates the triangle inequality of a physical body (principal "
                      f"moments {eig}); kept as written", UserWarning, stacklevel=4)
    return inertia


def _check_masses(skeleton: Skeleton, ctx: _Context):
    subtree: dict[str, float] = {}
    for body in reversed(skeleton.ordered_bodies()):
        subtree[body.name] = body.inertia.mass + sum(subtree[c.name] for c in body.children)
    for body in skeleton.ordered_bodies():
        if body.joint.nv > 0 and subtree[body.name] <= 0.0:
            ctx.lenient(f"link {body.name!r} moves (joint {body.joint.name!r}) but it and all links below it "
                        f"are massless; give it an <inertial> with a positive mass")


def _warn_world_contents(link: ET.Element, ctx: _Context):
    ignored = sorted({c.tag for c in link if c.tag in ("inertial", "visual", "collision")})
    if ignored:
        warnings.warn(f"{ctx.where}: the root link 'world' is the world; its {ignored} elements are ignored",
                      UserWarning, stacklevel=3)


# ----------------------------------------------------------------------------------------- geometry


def _add_geometry(body, link: ET.Element, ctx: _Context):
    for kind in ("collision", "visual"):
        for i, el in enumerate(link.findall(kind)):
            what = f"link {body.name!r} <{kind}> #{i}"
            geom = el.find("geometry")
            if geom is None or len(geom) == 0:
                raise ValueError(f"{ctx.where}: {what} has no <geometry>")
            shape = _shape(geom[0], what, ctx, visual=(kind == "visual"))
            if shape is None:
                continue
            taken = {s.name for s in body.shapes}
            name = el.get("name")
            if not name or name in taken:
                name = _unique_name(f"{body.name}/shape{len(body.shapes)}", taken)
            body.add_shape(shape, origin=_origin(el, what), collide=(kind == "collision"),
                           visual=(kind == "visual"), name=name)


def _shape(g: ET.Element, what: str, ctx: _Context, visual: bool = False):
    """The shape of a geometry element, or None for one skipped (with a warning) under strict=False: an
    unknown geometry type, or an invalid visual (a zero-radius sphere, a 4-number mesh scale, a mesh file
    that cannot be found, ...)."""
    what = f"{what} <{g.tag}>"
    try:
        if g.tag == "box":
            return Box(_floats(g.get("size"), 3, "size"))
        if g.tag == "sphere":
            return Sphere(_float(g, "radius", what))
        if g.tag == "cylinder":
            return Cylinder(_float(g, "radius", what), _float(g, "length", what))
        if g.tag == "capsule":  # not in the URDF specification, but written by some tools
            return Capsule(_float(g, "radius", what), _float(g, "length", what))
        if g.tag == "mesh":
            return _mesh(g, ctx)
    except FileNotFoundError as exc:
        if not visual or ctx.strict:
            raise FileNotFoundError(f"{ctx.where}: {what}: {exc}") from None
        # a picture only (romeo_laas_small's body visual is not shipped): skipped like an invalid visual
        problem = f"{what}: {exc}\n(strict=False skips this visual)"
    except ValueError as exc:
        if not visual:
            raise ValueError(f"{ctx.where}: {what}: {exc}") from None
        problem = f"{what}: {exc} (strict=False skips this visual)"
    else:
        problem = f"{what}: unknown geometry type {g.tag!r} (expected box, cylinder, sphere or mesh)"
    ctx.lenient(problem)
    return None


def _mesh(g: ET.Element, ctx: _Context) -> Mesh:
    filename = g.get("filename")
    if not filename:
        raise ValueError("has no filename attribute")
    scale_text = g.get("scale")
    if scale_text is not None and len(scale_text.split()) == 1:
        scale = _floats(scale_text, 1, "scale")[0]
    else:
        scale = _floats(scale_text, 3, "scale", (1.0, 1.0, 1.0))
    path = resolve_resource(filename, ctx.base_dir, ctx.package_dirs, ctx.from_string)  # _shape names the link
    key = (path, tuple(np.broadcast_to(scale, (3,))))
    if key not in ctx.meshes:
        ctx.meshes[key] = Mesh(path, scale=scale, lazy=True)
    return ctx.meshes[key]

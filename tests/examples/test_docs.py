"""The documentation in docs/ covers the public API, is in sync with the docstrings, and its links resolve."""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import re
from pathlib import Path

import pytest

import rigidiff as rd

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
API_MD = DOCS / "api.md"


@pytest.fixture(scope="module")
def api_text() -> str:
    assert API_MD.is_file(), "docs/api.md is missing: run python docs/generate_api.py"
    return API_MD.read_text()


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("generate_api", DOCS / "generate_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documented(text: str, owner: str, name: str) -> bool:
    return re.search(rf"`{re.escape(owner)}\.{re.escape(name)}[`(]", text) is not None


def test_every_exported_name_is_in_api_md(api_text):
    missing = [n for n in rd.__all__ if f"`rigidiff.{n}" not in api_text]
    assert not missing, f"names of rigidiff.__all__ absent from docs/api.md: {missing}"


def test_every_public_world_member_is_in_api_md(api_text):
    members = [n for n in dir(rd.World) if not n.startswith("_")] + ["time"]
    missing = [n for n in members if not _documented(api_text, "World", n)]
    assert not missing, f"World members absent from docs/api.md: {missing}"


def test_every_public_class_member_is_in_api_md(api_text):
    """Each public member of each exported class is documented on the class or on a base class."""
    missing = []
    for name in rd.__all__:
        cls = getattr(rd, name)
        if not inspect.isclass(cls):
            continue
        bases = [k.__name__ for k in cls.__mro__ if k.__module__.startswith("rigidiff")]
        fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
        for member in dir(cls):
            if member.startswith("_"):
                continue
            owner = next((k for k in cls.__mro__ if member in vars(k)), None)
            if owner is not None and owner.__module__ == "builtins":
                continue  # Python's own (an exception's args, with_traceback)
            if member in fields:
                ok = f"| `{member}` |" in api_text  # a row of the dataclass's field table
            else:
                ok = any(_documented(api_text, b, member) or f"`{b}.{member} =" in api_text for b in bases)
            if not ok:
                missing.append(f"{name}.{member}")
    assert not missing, f"members absent from docs/api.md: {missing}"


def test_models_functions_are_in_api_md(api_text):
    for fn in rd.models.__all__:
        assert f"`rigidiff.models.{fn}(" in api_text


def _normalise(text: str) -> str:
    text = text.split("<!-- cli:")[0]  # argparse's layout varies between Python versions
    return " ".join(text.split())


def test_api_md_is_up_to_date(api_text, generator):
    assert _normalise(generator.render()) == _normalise(api_text), (
        "docs/api.md does not match the docstrings: run python docs/generate_api.py")


def test_docstring_conversion(generator):
    md = generator.docstring_to_md(
        "Summary with ``code`` and <tag>.\n\nArgs:\n    a, b: first\n        continued.\n    c: second.\n"
        "Returns:\n    the result,\n    on two lines.\n\nExample::\n\n    x = 1\n")
    assert "`code`" in md and "&lt;tag>" in md
    assert "- `a`, `b`: first continued." in md and "- `c`: second." in md
    assert "- the result, on two lines." in md
    assert "```python\nx = 1\n```" in md


# ------------------------------------------------------------------------------- links and anchors


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            out.add(_slug(line.lstrip("#")))
    return out


DOC_FILES = sorted(DOCS.glob("*.md"))


def test_expected_documents_exist():
    names = {p.name for p in DOC_FILES}
    assert {"index.md", "conventions.md", "api.md", "urdf.md"} <= names


@pytest.mark.parametrize("path", DOC_FILES, ids=[p.name for p in DOC_FILES])
def test_links_resolve(path: Path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"^[a-z]+://", target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = path if not file_part else (path.parent / file_part)
        if not dest.exists():
            bad.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            bad.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    assert not bad, f"broken links in {path.name}: {bad}"


def test_index_links_every_document():
    text = (DOCS / "index.md").read_text()
    for name in ("conventions.md", "api.md", "urdf.md"):
        assert f"]({name}" in text


def test_joint_table_matches_the_code():
    """The (nq, nv) columns of the joint table in conventions.md are those of the joint classes."""
    text = (DOCS / "conventions.md").read_text()
    rows = re.findall(r"^\|[^|]*`(\w+Joint)`[^|]*\|\s*(\d+)\s*\|\s*(\d+)\s*\|", text, flags=re.M)
    seen = {cls for cls, _, _ in rows}
    expected = {n for n in rd.__all__ if n.endswith("Joint") and n != "Joint"}
    assert seen == expected, f"joint table rows {sorted(seen)} vs classes {sorted(expected)}"
    for cls, nq, nv in rows:
        joint = getattr(rd, cls)
        assert (joint.nq, joint.nv) == (int(nq), int(nv)), f"{cls}: table says ({nq}, {nv})"


def test_step_formula_in_conventions_matches_the_step():
    """The step formula printed in conventions.md, evaluated by hand, reproduces World.step."""
    import numpy as np

    sk = rd.Skeleton("chain")
    a = sk.add_body("a", joint=rd.RevoluteJoint("j1", axis=(0, 1, 0), damping=0.7, stiffness=5.0, rest_position=0.2,
                                                 armature=0.05, effort_limit=1.0),
                    inertia=rd.Inertia(1.0, com=(0, 0, -0.5), rotational_inertia=np.eye(3) * 0.01))
    sk.add_body("b", parent=a, joint=rd.PrismaticJoint("j2", axis=(1, 0, 0), damping=0.3, stiffness=2.0,
                                                       effort_limit=3.0),
                joint_origin=rd.Transform((0, 0, -1)),
                inertia=rd.Inertia(0.5, com=(0, 0, -0.2), rotational_inertia=np.eye(3) * 0.01))
    world = rd.World(dt=0.01)
    world.add_skeleton(sk)
    q, v, tau = np.array([0.5, 0.1]), np.array([0.3, -0.2]), np.array([4.0, -1.0])
    f_ext = {"b": np.array([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])}
    q_next, v_next = world.step(q, v, tau, f_ext=f_ext)

    dt, D, K = world.dt, np.diag([0.7, 0.3]), np.diag([5.0, 2.0])
    tau_c = np.clip(tau, [-1.0, -3.0], [1.0, 3.0])
    d = world.difference(np.array([0.2, 0.0]), q)
    J = world.body_jacobian(q, "b", frame="world")
    rhs = dt * (tau_c - world.bias_forces(q, v) - D @ v - K @ (d + dt * v) + J.T @ f_ext["b"])
    v_formula = v + np.linalg.solve(world.mass_matrix(q) + dt * D + dt * dt * K, rhs)
    np.testing.assert_allclose(v_next, v_formula, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(q_next, world.integrate(q, dt * v_next), rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------- the contributors' page


def test_no_file_points_to_a_document_the_project_does_not_have():
    """Contributors read docs/architecture.md; no file cites a design document outside the project."""
    bad = []
    for folder in ("cpp", "rigidiff", "tests", "docs", "benchmarks", "examples"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in {".py", ".pyx", ".pxi", ".pxd", ".pyi", ".hpp", ".cpp", ".md", ".txt"}:
                continue
            text = path.read_text(errors="replace")
            for needle in ("DESIGN" + ".md", "DESIGN" + ":", "../" + "shared"):
                if needle in text:
                    bad.append(f"{path.relative_to(ROOT)}: {needle}")
    assert not bad, bad


def test_architecture_names_files_that_exist():
    """Every path (cpp/..., rigidiff/..., tests/...) and every source file name on the page exists
    (patterns such as api*.cpp are not checked)."""
    text = (DOCS / "architecture.md").read_text()
    missing = []
    for path in re.findall(r"\b((?:cpp|rigidiff|tests|docs)/[\w/.\-]*\w)(?![\w*])", text):
        if not (ROOT / path).exists():
            missing.append(path)
    sources = {p.name for folder in ("cpp", "rigidiff", "tests") for p in (ROOT / folder).rglob("*")}
    for name in set(re.findall(r"(?<![\w*])([a-z_]+\.(?:cpp|hpp|pxi|pxd|pyx))\b", text)):
        if name not in sources:
            missing.append(name)
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"

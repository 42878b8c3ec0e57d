"""Resolution of resource file names found in robot descriptions (``package://``, ``file://``, relative).

:func:`resolve_resource` turns a file name from a URDF into an existing absolute path, trying, in order:

``package://pkg/rel``
    1. each of ``package_dirs``: ``<dir>/pkg/rel``, and ``<pkgdir>/rel`` when ``<dir>`` is the package
       itself or lies inside it (``<pkgdir>`` is ``<dir>`` or its closest parent folder named ``pkg``);
    2. each entry of ``ROS_PACKAGE_PATH`` (``os.pathsep``-separated), the same two ways;
    3. each entry of ``AMENT_PREFIX_PATH``: ``<prefix>/share/pkg/rel``;
    4. the description's folder and up to three of its parents: ``<folder>/pkg/rel``; then, when the
       description lies inside a folder named ``pkg``, ``<pkgdir>/rel``.

    So example-robot-data's ``package://example-robot-data/robots/...`` resolve with its ``robots/``
    folder (or its ``share/`` folder) as a package dir, and with no package dir at all.
``file:///abs/path`` or an absolute path
    that path (``file://rel`` is relative, like a plain relative name).
a relative name
    ``<base_dir>/rel``, then (when the description came from a string) each ``<dir>/rel`` of
    ``package_dirs``.

If nothing exists, FileNotFoundError lists every path tried.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["resolve_resource", "candidate_paths"]

_PARENT_LEVELS = 3


def _split_env(var: str) -> list[str]:
    return [p for p in os.environ.get(var, "").split(os.pathsep) if p]


def _enclosing_package(folder: str, pkg: str) -> str | None:
    """``folder`` or its closest parent whose name is ``pkg`` (None if there is none)."""
    p = Path(os.path.abspath(folder))
    for a in [p, *p.parents]:
        if a.name == pkg:
            return str(a)
    return None


def _package_candidates(pkg: str, rel: str, package_dirs, base_dir: str) -> list[str]:
    out: list[str] = []
    for d in list(package_dirs) + _split_env("ROS_PACKAGE_PATH"):
        out.append(os.path.join(d, pkg, rel))
        inside = _enclosing_package(d, pkg)
        if inside is not None:
            out.append(os.path.join(inside, rel))
    for prefix in _split_env("AMENT_PREFIX_PATH"):
        out.append(os.path.join(prefix, "share", pkg, rel))
    folder = Path(base_dir)
    for level, parent in enumerate([folder, *folder.parents]):
        if level > _PARENT_LEVELS:
            break
        out.append(os.path.join(str(parent), pkg, rel))
    inside = _enclosing_package(base_dir, pkg)
    if inside is not None:
        out.append(os.path.join(inside, rel))
    return out


def candidate_paths(filename: str, base_dir: str, package_dirs=(), from_string: bool = False) -> list[str]:
    """Every absolute path that :func:`resolve_resource` would try for ``filename``, in order."""
    package_dirs = [os.path.abspath(os.fspath(d)) for d in package_dirs]
    base_dir = os.path.abspath(base_dir)
    if filename.startswith("package://"):
        # tolerate "package:///pkg/rel" (seen in the wild) by dropping the extra slashes
        pkg, _, rel = filename[len("package://"):].lstrip("/").partition("/")
        if not pkg or not rel:
            raise ValueError(f"malformed package URI {filename!r}: expected package://<package>/<path>")
        cands = _package_candidates(pkg, rel, package_dirs, base_dir)
    else:
        name = filename[len("file://"):] if filename.startswith("file://") else filename
        if not name:
            raise ValueError(f"empty resource file name {filename!r}")
        if os.path.isabs(name):
            cands = [name]
        else:
            cands = [os.path.join(base_dir, name)]
            if from_string:
                cands += [os.path.join(d, name) for d in package_dirs]
    seen: set[str] = set()
    unique = []
    for c in cands:
        c = os.path.normpath(c)
        if c not in seen:
            seen.add(c)
            unique.append(c)
    return unique


def resolve_resource(filename: str, base_dir: str, package_dirs=(), from_string: bool = False) -> str:
    """The first existing file among :func:`candidate_paths`; FileNotFoundError listing them otherwise.

    Args:
        filename: the name as written in the description (``package://...``, ``file://...``, a path).
        base_dir: folder of the description file (the working directory for a description string).
        package_dirs: folders that hold packages (or are packages), tried first.
        from_string: True when the description is a string, so relative names also try ``package_dirs``.
    """
    cands = candidate_paths(filename, base_dir, package_dirs, from_string)
    for c in cands:
        if os.path.isfile(c):
            return c
    tried = "\n  ".join(cands)
    raise FileNotFoundError(f"cannot find resource {filename!r}; tried:\n  {tried}")

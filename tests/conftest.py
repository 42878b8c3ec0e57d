"""Fixtures shared by the whole test suite."""

import site
import sys
from pathlib import Path

import pytest


def find_robots_dir():
    """``<site-packages>/cmeel.prefix/share/example-robot-data/robots`` if installed, else None."""
    roots = [Path(p) for p in sys.path + site.getsitepackages() if p]
    for root in roots:
        prefix = root if root.name == "cmeel.prefix" else root / "cmeel.prefix"
        for cand in (prefix, *[p for p in prefix.parents if p.name == "cmeel.prefix"]):
            robots = cand / "share" / "example-robot-data" / "robots"
            if robots.is_dir():
                return robots
    return None


ROBOTS_DIR = find_robots_dir()


@pytest.fixture(scope="session")
def robots_dir():
    """Folder of example-robot-data's robots (skips the test when the package is not installed)."""
    if ROBOTS_DIR is None:
        pytest.skip("example-robot-data is not installed")
    return ROBOTS_DIR

"""threads=None means every core, or the RIGIDIFF_THREADS environment variable when it is set."""

import os

import numpy as np
import pytest

import rigidiff as rd
from rigidiff._validate import as_threads


def test_unset_means_every_core(monkeypatch):
    monkeypatch.delenv("RIGIDIFF_THREADS", raising=False)
    assert as_threads(None) == (os.cpu_count() or 1)
    monkeypatch.setenv("RIGIDIFF_THREADS", "  ")
    assert as_threads(None) == (os.cpu_count() or 1)


def test_variable_sets_the_default(monkeypatch):
    monkeypatch.setenv("RIGIDIFF_THREADS", "3")
    assert as_threads(None) == 3
    assert as_threads(2) == 2  # an explicit count wins
    world = rd.World(dt=1e-2, solver="projective")
    assert world.threads == 3
    world.threads = None
    assert world.threads == 3
    monkeypatch.setenv("RIGIDIFF_THREADS", "1")
    world.threads = None
    assert world.threads == 1


@pytest.mark.parametrize("text", ["0", "-2", "two", "1.5", "5000"])
def test_bad_variable_is_named(monkeypatch, text):
    monkeypatch.setenv("RIGIDIFF_THREADS", text)
    with pytest.raises(ValueError, match=f"RIGIDIFF_THREADS environment variable must be an integer.*{text!r}"):
        as_threads(None)
    with pytest.raises(ValueError, match="RIGIDIFF_THREADS"):
        rd.World(dt=1e-2, solver="projective")
    assert as_threads(4) == 4  # an explicit count does not read the variable


def test_batches_follow_the_variable(monkeypatch):
    world = rd.World(dt=1e-2)
    world.add_skeleton(rd.load_urdf(rd.models.path("arm7")))
    q, v = world.neutral_configuration(), np.zeros(world.nv)
    Q, V, T = np.tile(q, (4, 1)), np.tile(v, (4, 1)), np.zeros((4, world.nv))
    monkeypatch.setenv("RIGIDIFF_THREADS", "1")
    one = world.step_batch(Q, V, T)
    monkeypatch.setenv("RIGIDIFF_THREADS", "2")
    two = world.step_batch(Q, V, T)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)
    monkeypatch.setenv("RIGIDIFF_THREADS", "nope")
    with pytest.raises(ValueError, match="RIGIDIFF_THREADS"):
        world.step_batch(Q, V, T)

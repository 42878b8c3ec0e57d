"""Shipped models: each loads with load_urdf and in Pinocchio, with the expected sizes and masses."""

import os
import warnings

import numpy as np
import pytest

from rigidiff import models
from rigidiff.io.urdf import load_urdf
from rigidiff.shapes import Mesh

# name -> (nq, nv) with a fixed base
EXPECTED = {"cartpole": (2, 2), "double_pendulum": (2, 2), "arm7": (7, 7), "quadruped": (12, 12)}


def test_available_and_path():
    assert set(EXPECTED) <= set(models.available())
    for name in EXPECTED:
        p = models.path(name)
        assert os.path.isabs(p) and os.path.isfile(p) and p.endswith(f"{name}.urdf")
    with pytest.raises(IndexError, match="cartpole"):
        models.path("no_such_robot")
    with pytest.raises(IndexError):
        models.path(None)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_model_loads_cleanly(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no mimic, no placeholder inertia, no missing limit
        sk = load_urdf(models.path(name))
    assert (sk.nq, sk.nv) == EXPECTED[name]
    assert sk.name == name
    sk_float = models.load(name, floating_base=True)
    assert (sk_float.nq, sk_float.nv) == (EXPECTED[name][0] + 7, EXPECTED[name][1] + 6)
    for b in sk.bodies:
        eig = np.linalg.eigvalsh(b.inertia.rotational_inertia)
        assert eig[0] >= 0 and eig[0] + eig[1] >= eig[2] * (1 - 1e-9), b.name  # physical (triangle inequality)


def test_model_masses():
    def masses(name):
        return {b.name: b.inertia.mass for b in load_urdf(models.path(name)).bodies}

    cp = masses("cartpole")
    assert cp["cart"] == 1.0 and cp["pole"] == 0.1
    assert masses("double_pendulum") == {"base": 0.0, "link1": 1.0, "link2": 1.0}
    assert masses("quadruped")["base"] == 2.0
    assert 15.0 < sum(masses("arm7").values()) < 20.0  # a panda weighs about 18 kg


def test_arm7_mesh_resolves_through_the_urdf_folder(monkeypatch):
    monkeypatch.delenv("ROS_PACKAGE_PATH", raising=False)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    sk = load_urdf(models.path("arm7"))
    meshes = [s.shape for s in sk.body("hand").shapes if isinstance(s.shape, Mesh)]
    assert len(meshes) == 2 and meshes[0] is meshes[1]  # the visual and collision elements share one Mesh
    mesh = meshes[0]
    assert os.path.dirname(mesh.path) == os.path.join(os.path.dirname(models.path("arm7")), "meshes")
    assert os.path.getsize(mesh.path) < 50_000
    assert mesh.is_watertight and mesh.volume > 0
    # the hand's URDF inertial is the mesh's own volume integral
    ref = mesh.inertia(0.7)
    hand = sk.body("hand").inertia
    np.testing.assert_allclose(hand.com, ref.com, atol=1e-8)
    np.testing.assert_allclose(hand.rotational_inertia, ref.rotational_inertia, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_model_loads_in_pinocchio(name):
    pin = pytest.importorskip("pinocchio")
    path = models.path(name)
    sk = load_urdf(path, floating_base=True)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    assert [b.joint.name for b in sk.ordered_bodies() if b.joint.nv > 0] == list(model.names[1:])
    n_cont = sum(1 for b in sk.bodies if b.joint.type == "revolute" and b.joint.continuous)
    assert (sk.nq, sk.nv) == (model.nq - n_cont, model.nv)
    assert sk.total_mass == pytest.approx(pin.computeTotalMass(model), rel=1e-12)
    geom = pin.buildGeomFromUrdf(model, path, pin.GeometryType.COLLISION,
                                 package_dirs=[os.path.dirname(os.path.dirname(path))])
    assert geom.ngeoms == sum(1 for b in sk.bodies for s in b.shapes if s.collide)


def test_example_robot_data_dir_finds_the_installed_robots(robots_dir, monkeypatch):
    found = models.example_robot_data_dir()
    assert found == robots_dir  # the test suite's own search
    assert (found / "panda_description" / "urdf" / "panda.urdf").is_file()
    monkeypatch.setattr("sys.path", [])
    monkeypatch.setattr("site.getsitepackages", lambda: [])
    assert models.example_robot_data_dir() is None

"""rigidiff: a differentiable physics engine with an exact articulated-body core.

Conventions (state layout, quaternion order, Jacobian frames) are in docs/conventions.md.
"""

import importlib.util as _importlib_util

if _importlib_util.find_spec("rigidiff._core") is None:  # a source checkout whose extension is not built
    raise ImportError(f"rigidiff is not built in this source tree ({__path__[0]} has no compiled _core): "
                      "pip install . (or pip install -e .) and run from elsewhere")

from rigidiff import lcp, models, mpc, sysid, testing, trajopt, viz
from rigidiff._version import __version__
from rigidiff.collision import DistanceResult, distance
from rigidiff.config import show_config
from rigidiff.contacts import ContactOptions, ContactSet, StepContacts
from rigidiff.errors import UnknownNameError
from rigidiff.inertia import Inertia
from rigidiff.io.urdf import load_urdf
from rigidiff.jacobians import Gradients, StepJacobians
from rigidiff.joints import (
    BallJoint,
    FixedJoint,
    FreeJoint,
    Joint,
    PlanarJoint,
    PrismaticJoint,
    RevoluteJoint,
    TranslationalJoint,
    UniversalJoint,
)
from rigidiff.parameters import Parameters
from rigidiff.shapes import Box, Capsule, Cylinder, Mesh, Plane, Shape, Sphere
from rigidiff.skeleton import Body, ShapeInstance, Skeleton
from rigidiff.trajectory import Trajectory
from rigidiff.transform import Transform
from rigidiff.particles import ParticleSet
from rigidiff.warm_start import WarmStart
from rigidiff.world import JointInfo, Layout, World
from rigidiff.barrier_world import BarrierWorld
from rigidiff.deformable import HexMesh, OpenLoopControl, ProjectiveMaterial, ProjectiveWorld, TetMesh

__all__ = [
    "BarrierWorld",
    "HexMesh",
    "OpenLoopControl",
    "ProjectiveMaterial",
    "ProjectiveWorld",
    "TetMesh",
    "__version__",
    "show_config",
    "UnknownNameError",
    "Inertia",
    "Joint",
    "FixedJoint",
    "RevoluteJoint",
    "PrismaticJoint",
    "BallJoint",
    "FreeJoint",
    "PlanarJoint",
    "UniversalJoint",
    "TranslationalJoint",
    "Shape",
    "Box",
    "Sphere",
    "Capsule",
    "Cylinder",
    "Plane",
    "Mesh",
    "Skeleton",
    "Body",
    "ShapeInstance",
    "Transform",
    "World",
    "StepJacobians",
    "Gradients",
    "Parameters",
    "Trajectory",
    "JointInfo",
    "Layout",
    "ParticleSet",
    "load_urdf",
    "distance",
    "DistanceResult",
    "ContactSet",
    "StepContacts",
    "ContactOptions",
    "WarmStart",
    "lcp",
    "models",
    "mpc",
    "sysid",
    "testing",
    "trajopt",
    "viz",
]

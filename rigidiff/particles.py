"""Particles: point masses with 3 translational dofs each, that collide as spheres (docs/particles.md).

A ``ParticleSet`` is made by ``World.add_particles``. Its particles follow the skeletons in q and v (in
the order the sets were added); each has q = its world position (x, y, z), v = its world velocity, and
tau = the external force on it in world axes. A particle of radius r touches the ground, every shape of
every skeleton and the other particles as a sphere of radius r (r = 0: a point). Every function of the
world (step, rollout, step_batch, step_jacobians, step_vjp, rollout backward, last_contacts,
parameters) treats particles like any other body, with exact derivatives.

In the core a particle is a body with a point mass on a three-axis translational joint attached to the
world: its Jacobian from its velocity to the velocity of any point on it is the identity, and it has no
rotation (a particle slides, it never rolls).
"""

from __future__ import annotations

import numpy as np

from rigidiff._validate import MAX_COLLISION_LENGTH, as_name, as_scalar, real_array
from rigidiff.inertia import Inertia
from rigidiff.joints import TranslationalJoint
from rigidiff.shapes import Sphere
from rigidiff.skeleton import Skeleton

__all__ = ["ParticleSet"]


class _PointShape(Sphere):
    """The collision shape of a particle without size: a sphere of radius zero."""

    def __init__(self):  # noqa: D107 (bypasses Sphere's check that the radius is positive)
        self.radius = 0.0

    def __repr__(self) -> str:
        return "Point()"


def _per_particle(value, n: int, what: str, minimum: float, top: float = np.inf,
                  strict: bool = False) -> np.ndarray:
    """(n,) values from a scalar or an (n,) array, each finite and in [minimum, top] (> minimum if strict).
    ``what`` is the argument's name; the errors name it and the particle (``masses[2]``)."""
    arr = real_array(value, what, f"({n},) or a number")
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape != (n,)):
        raise ValueError(f"{what} must be a number or an array of shape ({n},) (one per row of positions), "
                         f"got shape {arr.shape}")
    arr = np.broadcast_to(arr, (n,)).copy()
    bad = ~np.isfinite(arr) | (arr <= minimum if strict else arr < minimum) | (arr > top)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        bound = f"> {minimum}" if strict else f">= {minimum}"
        if np.isfinite(top):
            bound += f" and <= {top}"
        raise ValueError(f"{what}[{i}] (particle {i}) must be finite and {bound}, got {arr[i]}")
    return arr


class ParticleSet:
    """A set of particles of a World (made by ``World.add_particles``; see the module docstring).

    Attributes:
        name: the set's name (unique among the world's skeletons and particle sets).
        radius: collision radius of every particle (0: points).
        skeleton: the bodies of the particles, ``"p0"``, ``"p1"``, ... (body and joint names; the body
            ``"<name>/p3"`` in ``world.body_names`` when the plain name is ambiguous).
    """

    def __init__(self, name: str, positions, masses, radius: float = 0.0, friction=0.5, restitution=0.0):
        self.name = as_name(name, "particle set name")
        pos = np.array(real_array(positions, "positions", "(n, 3)"))
        if pos.ndim == 1 and pos.shape == (3,):
            pos = pos[None]
        if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] == 0:
            raise ValueError(f"positions must be an (n, 3) array with n >= 1, got shape {pos.shape}")
        if not np.all(np.isfinite(pos)):
            i = int(np.flatnonzero(~np.isfinite(pos).all(axis=1))[0])
            raise ValueError(f"positions[{i}] (particle {i}) is not finite: {pos[i]}")
        n = len(pos)
        mass = _per_particle(masses, n, "masses", 0.0, strict=True)
        self.radius = as_scalar(radius, "radius", minimum=0.0)
        if self.radius > MAX_COLLISION_LENGTH:
            raise ValueError(f"radius must be at most {MAX_COLLISION_LENGTH:g} m (a larger sphere's squared "
                             f"distances overflow and its contacts vanish), got {self.radius:g}")
        mu = _per_particle(friction, n, "friction", 0.0)
        e = _per_particle(restitution, n, "restitution", 0.0, 1.0)
        self._initial = pos
        self.skeleton = Skeleton(self.name, self_collision=True)
        shape = Sphere(self.radius) if self.radius > 0.0 else _PointShape()
        for i in range(n):
            body = self.skeleton.add_body(f"p{i}", joint=TranslationalJoint(f"p{i}"), inertia=Inertia(mass[i]))
            body.add_shape(shape, friction=mu[i], restitution=e[i], name=f"p{i}")

    def __len__(self) -> int:
        return len(self._initial)

    @property
    def count(self) -> int:
        """Number of particles."""
        return len(self._initial)

    @property
    def initial_positions(self) -> np.ndarray:
        """(n, 3) positions given to ``add_particles``: the set's part of ``world.neutral_configuration()``."""
        return self._initial.copy()

    @property
    def masses(self) -> np.ndarray:
        """(n,) masses (``world.set_parameters`` changes them)."""
        return np.array([b.inertia.mass for b in self.skeleton.bodies])

    def _contact(self, field: str) -> np.ndarray:
        return np.array([getattr(b.shapes[0], field) for b in self.skeleton.bodies])

    @property
    def friction(self) -> np.ndarray:
        """(n,) friction coefficients (combined with the other shape's in a contact)."""
        return self._contact("friction")

    @property
    def restitution(self) -> np.ndarray:
        """(n,) restitution coefficients (combined with the other shape's in a contact)."""
        return self._contact("restitution")

    def __repr__(self) -> str:
        return f"ParticleSet({self.name!r}, n={self.count}, radius={self.radius:g})"

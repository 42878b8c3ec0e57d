"""Materials of Projective Dynamics bodies."""

from __future__ import annotations

from rigidiff._validate import as_scalar

__all__ = ["ProjectiveMaterial", "ENERGIES"]

#: the energies a material may combine: the PD energies "corotated" (as-rigid-as-possible, weight 2 mu: the
#: element's deformation gradient pulled towards its nearest rotation) and "volume" (weight lambda: towards the
#: nearest volume-preserving matrix, det = 1), and the hyperelastic "neohookean" and "corotated_hyperelastic"
#: (Stomakhin et al.'s fixed corotated); the core's mask bit of each
ENERGIES = ("corotated", "volume", "neohookean", "corotated_hyperelastic")
_MASK = {"corotated": 1, "volume": 2, "neohookean": 4, "corotated_hyperelastic": 8}


class ProjectiveMaterial:
    """An isotropic material of Projective Dynamics (docs/deformable.md).

    Args:
        youngs_modulus: E in Pa (> 0).
        poisson_ratio: nu in [0, 0.5).
        density: kg/m^3 (> 0).
        kind: "corotated", "volume", "neohookean", "corotated_hyperelastic", or a tuple of them: the energies
            of the body. Each quadrature sample of volume V carries (mu V) |F - R|^2 for "corotated"
            (mu = E / (2 (1 + nu)), R the rotation nearest to F), (lambda V / 2) |F - D|^2 for "volume"
            (lambda = E nu / ((1 + nu)(1 - 2 nu)), D the nearest matrix of determinant 1),
            V (mu/2 (tr F^T F - 3) - mu log J + lambda/2 (log J)^2) for "neohookean" (J = det F; infinite for an
            inverted element, which the line search refuses), and V (mu |F - R|^2 + lambda/2 (J - 1)^2) for
            "corotated_hyperelastic" (Stomakhin et al. 2012's fixed corotated: the "corotated" energy plus a
            volume term; finite for an inverted element, which it pushes back). With nu = 0, "corotated" is
            linear elasticity at small strain; "neohookean" and "corotated_hyperelastic" are, at any nu.

    ValueError naming the argument for a value out of range.
    """

    def __init__(self, youngs_modulus: float, poisson_ratio: float = 0.3, density: float = 1000.0,
                 kind="corotated"):
        self.youngs_modulus = as_scalar(youngs_modulus, "youngs_modulus", minimum=0.0, strict=True)
        nu = as_scalar(poisson_ratio, "poisson_ratio")
        if not 0.0 <= nu < 0.5:
            raise ValueError(f"poisson_ratio must be in [0, 0.5), got {nu}")
        self.poisson_ratio = nu
        self.density = as_scalar(density, "density", minimum=0.0, strict=True)
        if not isinstance(kind, (str, tuple, list)):
            raise ValueError(f"kind must be one of {list(ENERGIES)} or a tuple of them, got {kind!r}")
        energies = (kind,) if isinstance(kind, str) else tuple(kind)
        if not energies or any(e not in ENERGIES for e in energies) or len(set(energies)) != len(energies):
            raise ValueError(f"kind must be one of {list(ENERGIES)} or a tuple of them, got {kind!r}")
        self.energies = energies

    @property
    def energy_mask(self) -> int:
        """The core's bit mask of the energies."""
        return sum(_MASK[e] for e in self.energies)

    @property
    def lame(self) -> tuple:
        """(mu, lambda) in Pa."""
        E, nu = self.youngs_modulus, self.poisson_ratio
        return E / (2.0 * (1.0 + nu)), E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))

    def __repr__(self) -> str:
        return (f"ProjectiveMaterial(youngs_modulus={self.youngs_modulus}, poisson_ratio={self.poisson_ratio}, "
                f"density={self.density}, kind={self.energies if len(self.energies) > 1 else self.energies[0]!r})")


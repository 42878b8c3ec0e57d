// Friction directions of a contact and their derivatives: the tangent basis turns with body B, so it is
// smooth in the state, with no singularity when the normal is parallel to a world axis.
#pragma once

#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// The local axis of B (0, 1 or 2; columns of Rb) that seeds the basis: the first one whose component
/// along the normal is below 0.6 in magnitude (one always is, since the three squares sum to 1).
int frictionSeedAxis(const Vec3& n, const Mat3& Rb);

/// Unit friction directions (2 or 4) of normal n with B's world rotation Rb, into t[0..directions):
///   t1 = (a - (n.a) n) / |a - (n.a) n| (a the seed axis of B), t2 = n x t1, and with 4 directions
///   also (t1 + t2)/sqrt2 and (t2 - t1)/sqrt2.
void frictionBasis(const Vec3& n, const Mat3& Rb, int directions, Vec3* t);

/// Derivatives of the directions of frictionBasis: given the change dn of the normal and the angular
/// velocity wb of B (which turns the seed axis: da = wb x a), writes dt[0..directions).
void frictionBasisDerivative(const Vec3& n, const Mat3& Rb, int directions, const Vec3& dn, const Vec3& wb,
                             Vec3* dt);

}  // namespace rigidiff

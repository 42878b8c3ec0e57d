// Additive continuous collision detection (ccd_types.hpp) of a point–triangle pair: the start positions
// (p, t0, t1, t2) move linearly to the *_end ones over t in [0, 1].
#pragma once

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// Point p against the triangle (t0, t1, t2); a triangle that degenerates to a segment on the way
/// counts as its three edges. No allocation.
/// invalid_argument for non-finite points or bad options.
CcdResult pointTriangleCcd(const Vec3& p, const Vec3& t0, const Vec3& t1, const Vec3& t2, const Vec3& p_end,
                           const Vec3& t0_end, const Vec3& t1_end, const Vec3& t2_end,
                           const CcdOptions& options = CcdOptions());

}  // namespace rigidiff

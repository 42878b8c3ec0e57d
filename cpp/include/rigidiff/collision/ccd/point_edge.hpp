// Additive continuous collision detection (ccd_types.hpp) of a point–edge pair: the start positions
// (p, e0, e1) move linearly to the *_end ones over t in [0, 1].
#pragma once

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// Point p against the segment (e0, e1). No allocation.
/// invalid_argument for non-finite points or bad options.
CcdResult pointEdgeCcd(const Vec3& p, const Vec3& e0, const Vec3& e1, const Vec3& p_end, const Vec3& e0_end,
                       const Vec3& e1_end, const CcdOptions& options = CcdOptions());

}  // namespace rigidiff

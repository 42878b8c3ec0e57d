// Additive continuous collision detection (ccd_types.hpp) of a point–point pair: the start positions
// (p0, p1) move linearly to the *_end ones over t in [0, 1].
#pragma once

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// Two points. No allocation.
/// invalid_argument for non-finite points or bad options.
CcdResult pointPointCcd(const Vec3& p0, const Vec3& p1, const Vec3& p0_end, const Vec3& p1_end,
                        const CcdOptions& options = CcdOptions());

}  // namespace rigidiff

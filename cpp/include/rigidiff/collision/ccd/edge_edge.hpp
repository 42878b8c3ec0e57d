// Additive continuous collision detection (ccd_types.hpp) of an edge–edge pair: the start positions
// (ea0, ea1, eb0, eb1) move linearly to the *_end ones over t in [0, 1].
#pragma once

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// The segments (ea0, ea1) and (eb0, eb1). No allocation.
/// invalid_argument for non-finite points or bad options.
CcdResult edgeEdgeCcd(const Vec3& ea0, const Vec3& ea1, const Vec3& eb0, const Vec3& eb1, const Vec3& ea0_end,
                      const Vec3& ea1_end, const Vec3& eb0_end, const Vec3& eb1_end,
                      const CcdOptions& options = CcdOptions());

}  // namespace rigidiff

// Range checks of the CCD options (collision/ccd/ccd_types.hpp).
#include <cmath>

#include "rigidiff/collision/ccd/ccd_types.hpp"
#include "rigidiff/macros.hpp"

namespace rigidiff {

void checkCcdOptions(const CcdOptions& o) {
  RD_CHECK_ARG(std::isfinite(o.min_distance) && o.min_distance >= 0.0,
               "min_distance must be finite and >= 0, got " << o.min_distance);
  RD_CHECK_ARG(o.t_max > 0.0 && o.t_max <= 1.0, "t_max must be in (0, 1], got " << o.t_max);
  RD_CHECK_ARG(o.conservative_rescaling > 0.0 && o.conservative_rescaling < 1.0,
               "conservative_rescaling must be in (0, 1), got " << o.conservative_rescaling);
  RD_CHECK_ARG(o.max_iterations >= 1, "max_iterations must be >= 1, got " << o.max_iterations);
}

}  // namespace rigidiff

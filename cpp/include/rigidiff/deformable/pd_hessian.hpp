// The Hessian of a Projective Dynamics world's energy E at x (PdHessian, pd_model.hpp), kept as one dense
// block per element (3k x 3k for an element of k nodes, its samples' w G^T (I - dP/dF) G summed, the
// projections differentiated) and the contact penalty's per-vertex terms. Built once per Newton iteration or adjoint, after which a product costs a
// gather, a small dense product and a scatter per element instead of an SVD derivative per sample.
#pragma once

#include <vector>

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {

/// Builds the Hessian of E (elastic and contact penalty) at x. runtime_error from a degenerate element's
/// volume projection. With `only` (one flag per element), the other elements' blocks are left zero (for products
/// with vectors that vanish on their nodes). With a cache (pdEnergy's), the SVDs and volume projections
/// recorded there for the same F are reused. Returns the number of samples that reused them.
int pdHessianBuild(const PdModel& model, const Points& x, PdHessian& hessian,
                    const std::vector<char>* only = nullptr, const PdSampleCache* cache = nullptr);

/// out = hess E(x) z (n x 3, overwritten) for the Hessian built at x.
void pdHessianProduct(const PdModel& model, const PdHessian& hessian, const Points& z, Points& out);

}  // namespace deformable
}  // namespace rigidiff

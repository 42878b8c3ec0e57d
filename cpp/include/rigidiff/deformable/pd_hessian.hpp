// The Hessian of a Projective Dynamics world's energy E at x, kept as one dense block per element (3k x 3k for
// an element of k nodes, its samples' w G^T (I - dP/dF) G summed, the projections differentiated) and the
// contact penalty's per-vertex terms. Built once per Newton iteration or adjoint, after which a product costs a
// gather, a small dense product and a scatter per element instead of an SVD derivative per sample.
#pragma once

#include <vector>

#include "rigidiff/deformable/pd_model.hpp"

namespace rigidiff {
namespace deformable {

/// The side of an element's block in storage (a hexahedron's 3 x 8 dofs; a tetrahedron uses its top-left 12).
constexpr int kElementBlock = 24;

struct PdHessian {
  /// element e's block, column-major, at blocks[e * kElementBlock^2] (rows 3 a + r: node a, axis r)
  std::vector<double> blocks;
  Points x;                    ///< where it was built (the penalty's terms are evaluated there)
};

/// Builds the Hessian of E (elastic and contact penalty) at x. runtime_error from a degenerate element's
/// volume projection.
void pdHessianBuild(const PdModel& model, const Points& x, PdHessian& hessian);

/// out = hess E(x) z (n x 3, overwritten) for the Hessian built at x.
void pdHessianProduct(const PdModel& model, const PdHessian& hessian, const Points& z, Points& out);

}  // namespace deformable
}  // namespace rigidiff

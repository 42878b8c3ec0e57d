// The orthogonality energy of an affine body (ABD eq. 7): E = w ||A A^T - I||_F^2 with w = kappa V (the
// stiffness times the rest volume), which holds A near a rotation. It depends on the A block only, so
// its gradient and Hessian are zero on p. Rows a_k of A as in affine_body.hpp.
#pragma once

#include "rigidiff/collision/distance/distance_types.hpp"
#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// E(q) for the body coordinates q (12) and weight w = kappa V.
double orthogonalityEnergy(const double* q, double weight);
/// dE/dq (12): 4 w (A A^T - I) A on the rows of A.
Vec12 orthogonalityGradient(const double* q, double weight);
/// d2E/dq2 (12 x 12): on rows (i, k) of A, 4 w (delta_ik A^T A + a_k a_i^T + C_ik I), C = A A^T - I.
/// Not positive semi-definite far from a rotation: a solver projects it.
Mat12 orthogonalityHessian(const double* q, double weight);

}  // namespace rigidiff

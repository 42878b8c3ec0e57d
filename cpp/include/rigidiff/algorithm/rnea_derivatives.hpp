// Analytic derivatives of the recursive Newton-Euler algorithm (Carpentier & Mansard, RSS 2018),
// derived and run in the world frame.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Fills data.dtau_dq and data.dtau_dv (model.nv x model.nv): the partial derivatives of
/// tau = rnea(q, v, a) with respect to q (in the tangent space: perturbations through integrate)
/// and v. Also fills data.tau. External wrenches are not included.
/// \param[in] q (model.nq), v (model.nv), a (model.nv)
/// Throws invalid_argument for models with universal joints (not supported yet).
/// kinematics_ready: data.oMi and data.J (world-frame subspaces) already hold q's kinematics, as an
/// aba() call at q leaves them; the pass then skips forward kinematics.
void computeRNEADerivatives(const Model& model, Data& data, const double* q, const double* v, const double* a,
                            bool kinematics_ready = false);

}  // namespace rigidiff

// Analytic derivatives of forward dynamics.
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// Fills data.ddq (forward dynamics), data.ddq_dq, data.ddq_dv (model.nv x model.nv) and data.Minv
/// (= d ddq / d tau) at (q, v, tau): ddq_dx = -M^-1 dtau_dx evaluated at a = ddq.
/// \param[in] q (model.nq), v (model.nv), tau (model.nv)
/// \param[in] frame_wrenches (nframes x 6) world-axes wrenches at the frame origins, or nullptr
void computeABADerivatives(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                           const double* frame_wrenches = nullptr);

}  // namespace rigidiff

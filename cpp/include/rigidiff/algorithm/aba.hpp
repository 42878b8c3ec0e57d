// Articulated-body algorithm (forward dynamics) and solves with its factorisation (the inverse of the
// joint-space inertia is in minverse.hpp).
#pragma once

#include "rigidiff/multibody/data.hpp"

namespace rigidiff {

/// ddq = (M + diag(extra_diag))^-1 (tau - C v - g + sum J^T fext), armature included in M.
/// \param[in] q (model.nq), v (model.nv), tau (model.nv)
/// \param[in] with_fext use data.fext (per-joint wrenches in joint frames)
/// \param[in] extra_diag (model.nv) added to M's diagonal, or nullptr (the step's implicit terms)
/// \return data.ddq (model.nv). Throws runtime_error if an articulated inertia is singular.
const VecX& aba(const Model& model, Data& data, const double* q, const double* v, const double* tau, bool with_fext,
                const double* extra_diag = nullptr);

/// x = (M + diag(extra_diag))^-1 b in O(n), reusing the articulated-body factorisation that the last
/// aba() call left in data (same q and extra_diag): one backward and one forward sweep, no velocity or
/// gravity terms. b (model.nv) and x (model.nv) may alias. Overwrites data.u, data.pA, data.oa_gf.
void abaSolve(const Model& model, Data& data, const double* b, double* x);

}  // namespace rigidiff

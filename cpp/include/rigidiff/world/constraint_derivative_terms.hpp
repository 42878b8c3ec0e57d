// The pieces of the constrained step's derivatives that its Jacobians (contact_step_derivatives.hpp) and
// its reverse mode (contact_step_vjp.hpp) share: the clamped set and its impulse response K, the
// geometric terms d(J^T x)/dq, G_q and G_v of the rows, and the pseudo-inverse of the clamping system.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

/// Where d(J^T x)/dq at fixed impulses (Fq, nv x nv) goes: added into a dense matrix, or, without
/// forming it, its transposed product with weights (product += Fq^T weights).
struct ImpulseDerivativeSink {
  MatX* dense = nullptr;
  const double* weights = nullptr;  ///< (nv)
  double* product = nullptr;        ///< (nv)
  void add(int row, int col, double value) const {
    if (dense)
      (*dense)(row, col) += value;
    else
      product[col] += value * weights[row];
  }
};

/// From cd.classes (the solved classes, or whatever the caller swapped in): the clamped rows and their
/// slots, K = (M + E)^-1 J^T P (a clamped normal carries its friction rows at the bound) and J_C, into
/// cd.deriv. Returns false when no constraint acts (no clamped row and no impulse).
bool prepareClampedRows(const Model& model, ContactStepData& cd);

/// The rows' geometric terms after prepareClampedRows, with vq the start velocity and vn the step
/// velocity: d(J^T x)/dq into `sink`, G_q and G_v (nc x nv: d target_C - (dJ_C) v'), the bouncing rows,
/// and cd.deriv.active (the dofs that move a body of an active contact). Needs data.J at q.
void constraintGeometryTerms(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                             const ContactOptions& options, const Ref<const VecX>& vq, const Ref<const VecX>& vn,
                             double dt, const ImpulseDerivativeSink& sink);

/// Q^+ = U V^T (Q = J_C K) with thin factors (rows by slot, one block of columns per island) into
/// cd.deriv.U and cd.deriv.V; after prepareClampedRows.
void clampedPseudoInverseFactors(ContactStepData& cd);

/// mu = (Q^+)^T z (nc), island by island (Q is block-diagonal by island): with the decomposition the
/// island's LCP solve left when it describes the island's block, else with one of that block alone,
/// never assembling U, V or the whole Q; after prepareClampedRows. Equals V U^T z of
/// clampedPseudoInverseFactors up to round-off and the rank threshold (relative to the island's block
/// instead of the whole Q when some island has no decomposition of its own).
void clampedPseudoInverseTransposeProduct(const Model& model, ContactStepData& cd, const Ref<const VecX>& z,
                                          Ref<VecX> mu);

}  // namespace rigidiff

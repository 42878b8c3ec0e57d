// The pieces of the constrained step's derivatives that its Jacobians (contact_step_derivatives.hpp) and
// its reverse mode (contact_step_vjp.hpp) share: the clamped set and its impulse response K, the
// geometric terms d(J^T x)/dq, G_q and G_v of the rows, and the pseudo-inverse of the clamping system.
#pragma once

#include "rigidiff/world/contact_step.hpp"

namespace rigidiff {

/// Where the rows' geometric terms go: d(J^T x)/dq at fixed impulses (Fq, nv x nv) and the clamped
/// rows' G_q, G_v (nc x nv) into dense matrices, or, without forming them, their transposed products
/// g_q += Fq^T w + G_q^T mu and g_v += G_v^T mu.
struct ConstraintTermSink {
  MatX* Fq = nullptr;  ///< dense: all three matrices set
  MatX* Gq = nullptr;
  MatX* Gv = nullptr;
  const double* w = nullptr;   ///< products: (nv)
  const double* mu = nullptr;  ///< (nc)
  double* g_q = nullptr;       ///< (nv)
  double* g_v = nullptr;       ///< (nv)
  void addFq(int row, int col, double value) const {
    if (Fq)
      (*Fq)(row, col) += value;
    else
      g_q[col] += value * w[row];
  }
};

/// While alive, cd.classes holds cd.classOverride if that is sized to the step's rows (an explored
/// contact mode: the derivatives are that mode's), and the step's own classes are given back after.
struct ClassOverrideScope {
  explicit ClassOverrideScope(ContactStepData& data)
      : cd(data), active(static_cast<int>(data.classOverride.size()) == data.rowCount() && data.rowCount() > 0) {
    if (active) cd.classes.swap(cd.classOverride);
  }
  ~ClassOverrideScope() {
    if (active) cd.classes.swap(cd.classOverride);
  }
  ClassOverrideScope(const ClassOverrideScope&) = delete;
  ClassOverrideScope& operator=(const ClassOverrideScope&) = delete;
  ContactStepData& cd;
  const bool active;
};

/// From cd.classes (the solved classes, or whatever the caller swapped in): the clamped rows and their
/// slots into cd.deriv. Returns false when no constraint acts (no clamped row and no impulse).
bool clampedRowSlots(const Model& model, ContactStepData& cd);

/// clampedRowSlots, then K = (M + E)^-1 J^T P (nv x nc: a clamped normal carries its friction rows at
/// the bound) and J_C (nc x nv) into cd.deriv.
bool prepareClampedRows(const Model& model, ContactStepData& cd);

/// d combine(a, b) / da for a contact coefficient combined from its two shapes' a and b (at a tie of
/// min or max each gets half).
double combineDerivative(Combine how, double a, double b);

/// After clampedRowSlots: z = K^T lambda (nc) and y -= J_C^T mu (nv), each row read on the dofs of its
/// trees only (K and J_C are not formed).
void clampedResponseTransposeProduct(const Model& model, const ContactStepData& cd, const Ref<const VecX>& lambda,
                                     Ref<VecX> z);
void subtractClampedRowsTransposeProduct(const Model& model, const ContactStepData& cd, const Ref<const VecX>& mu,
                                         Ref<VecX> y);

/// The rows' geometric terms after clampedRowSlots, with vq the start velocity and vn the step velocity:
/// d(J^T x)/dq and G_q, G_v (nc x nv: d target_C - (dJ_C) v') into `sink` (a dense G_q, G_v is zeroed
/// here, a dense Fq by the caller), the bouncing rows, and cd.deriv.active (the dofs that move a body
/// of an active contact). Needs data.J at q.
void constraintGeometryTerms(const Model& model, const Data& data, const CollisionModel& cmodel, ContactStepData& cd,
                             const ContactOptions& options, const Ref<const VecX>& vq, const Ref<const VecX>& vn,
                             double dt, const ConstraintTermSink& sink);

/// Q^+ = U V^T (Q = J_C K) with thin factors (rows by slot, one block of columns per island) into
/// cd.deriv.U and cd.deriv.V; after prepareClampedRows.
void clampedPseudoInverseFactors(ContactStepData& cd);

/// mu = (Q^+)^T z (nc), island by island (Q is block-diagonal by island): with the decomposition the
/// island's LCP solve left when it describes the island's block, else with one of that block alone,
/// never assembling U, V or the whole Q. Equals V U^T z of
/// clampedPseudoInverseFactors up to round-off and the rank threshold (relative to the island's block
/// instead of the whole Q when some island has no decomposition of its own).
void clampedPseudoInverseTransposeProduct(const Model& model, ContactStepData& cd, const Ref<const VecX>& z,
                                          Ref<VecX> mu);

}  // namespace rigidiff

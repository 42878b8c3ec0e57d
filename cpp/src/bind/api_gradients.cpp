// Bindings of the parameter Jacobians, the reverse mode and the kinematic derivatives (declared in
// rigidiff/bind/api.hpp).
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/kinematics_derivatives.hpp"
#include "rigidiff/algorithm/regressor.hpp"
#include "rigidiff/bind/api.hpp"
#include "rigidiff/bind/checks.hpp"
#include "rigidiff/world/step_derivatives.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"
#include "rigidiff/world/step_vjp.hpp"

namespace rigidiff {
namespace bind {


void jointInertiaParameters(const Model& m, double* theta) {
  for (int i = 1; i < m.njoints; ++i) Eigen::Map<Vec10>(theta + 10 * (i - 1)) = inertiaParameters(m.inertias[i]);
}

void inverseDynamicsRegressor(const Model& m, Data& d, const double* q, const double* v, const double* a, double* Y) {
  checkState(m, q, v);
  checkFinite(a, m.nv, "a");
  copyOut(rigidiff::inverseDynamicsRegressor(m, d, q, v, a), Y, "inverse_dynamics_regressor");
}

namespace {
void mapGradients(const Model& m, const double* Q, const double* in, int N, double* out, bool to_tangent) {
  const long nin = to_tangent ? m.nq : m.nv, nout = to_tangent ? m.nv : m.nq;
  for (int s = 0; s < N; ++s) {
    const double* q = Q + static_cast<long>(s) * m.nq;
    checkFinite(q, m.nq, "q");
    checkFinite(in + s * nin, nin, "gradient");
    if (to_tangent)
      tangentGradient(m, q, in + s * nin, out + s * nout);
    else
      coordinateGradient(m, q, in + s * nin, out + s * nout);
  }
}
}  // namespace

void tangentGradients(const Model& m, const double* Q, const double* Gc, int N, double* Gt) {
  mapGradients(m, Q, Gc, N, Gt, true);
}

void coordinateGradients(const Model& m, const double* Q, const double* Gt, int N, double* Gc) {
  mapGradients(m, Q, Gt, N, Gc, false);
}

namespace {
void copyRows(const Mat6X& M, double* out, const char* what) {
  Eigen::Map<Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>>(out, 6, M.cols()) = M;
  checkResult(out, 6 * static_cast<long>(M.cols()), what);
}
}  // namespace

void frameVelocityDerivatives(const Model& m, Data& d, const double* q, const double* v, int f, bool local,
                              double* dv_dq, double* dv_dv) {
  checkState(m, q, v);
  checkFrame(m, f);
  const ReferenceFrame rf = local ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned;
  rigidiff::frameVelocityDerivatives(m, d, q, v, f, rf, d.Ftmp.data(), d.U.data());
  copyRows(d.Ftmp, dv_dq, "body_velocity_derivatives");
  copyRows(d.U, dv_dv, "body_velocity_derivatives");
}

void frameAccelerationDerivatives(const Model& m, Data& d, const double* q, const double* v, const double* a, int f,
                                  bool local, double* da_dq, double* da_dv, double* da_da) {
  checkState(m, q, v);
  checkFinite(a, m.nv, "a");
  checkFrame(m, f);
  const ReferenceFrame rf = local ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned;
  rigidiff::frameAccelerationDerivatives(m, d, q, v, a, f, rf, d.Ftmp.data(), d.U.data(), d.dJ.data());
  copyRows(d.Ftmp, da_dq, "body_acceleration_derivatives");
  copyRows(d.U, da_dv, "body_acceleration_derivatives");
  copyRows(d.dJ, da_da, "body_acceleration_derivatives");
}

void centerOfMassVelocityDerivatives(const Model& m, Data& d, const double* q, const double* v, double* out) {
  checkState(m, q, v);
  rigidiff::centerOfMassVelocityDerivatives(m, d, q, v, d.Jcom.data());
  Eigen::Map<Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor>>(out, 3, m.nv) = d.Jcom;
  checkResult(out, 3L * m.nv, "center_of_mass_velocity_derivatives");
}

}  // namespace bind
}  // namespace rigidiff

// Helpers shared by the ABA-family algorithms (not part of the public C++ API).
#pragma once

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "rigidiff/macros.hpp"
#include "rigidiff/multibody/data.hpp"

namespace rigidiff {
namespace detail {

/// When a joint's articulated inertia D = S^T Ia S (+ armature and the step's implicit damping and
/// stiffness) counts as singular: its smallest eigenvalue must exceed kSingularTolerance times the
/// scale |s|^2 max_k Ia(k, k) (s: the joint's longest subspace column). The passes hold Ia at the
/// world origin, and that scale bounds the round-off D carries there: a body with a zero principal
/// inertia about a joint axis leaves D at 1e-16 to 1e-15 of it, of either sign, while the links of
/// example-robot-data's robots stay above 1e-14 of it in random states with their base up to 100 m from
/// the origin (docs/conventions.md, "Errors and warnings").
constexpr double kSingularTolerance = 1e-14;

/// The scale of D's round-off (see kSingularTolerance): |s|^2 max_k Ia(k, k), >= 0.
inline double singularScale(double s_squared_norm, const Mat6& Ia) {
  return s_squared_norm * std::max(0.0, Ia.diagonal().maxCoeff());
}

/// Far from the world origin the world-origin scale grows as the distance^4 while D's actual round-off
/// grows far less (a quadruped 1 km away keeps its accelerations to 3e-7): a D below kSingularTolerance of
/// that scale is judged again at the joint's own origin p (s and Ia referred to p), and refused there
/// only below kSingularTolerance of that scale, or below kFarSingularTolerance of the world-origin one,
/// where D is round-off whatever it should be (some 10 km away for a small robot).
constexpr double kFarSingularTolerance = 1e-18;

/// The scale of D's round-off with the subspace columns S (6 x n, at the world origin) and Ia referred to
/// the point p: |s_p|^2 max_k Ia_p(k, k), with the longest column s_p of S at p.
template <typename Cols>
double singularScaleAt(const Cols& S, const Mat6& Ia, const Vec3& p) {
  Mat6 T = Mat6::Identity();  // motion at p -> motion at the origin: v0 = v_p + p x w
  T.template topRightCorner<3, 3>() = skew(p);
  const Mat6 Ip = T.transpose() * Ia * T;
  double s2 = 0.0;
  for (Eigen::Index c = 0; c < S.cols(); ++c) {
    const Vec3 w = S.col(c).template tail<3>();
    const Vec3 v = S.col(c).template head<3>() + w.cross(p);
    s2 = std::max(s2, v.squaredNorm() + w.squaredNorm());
  }
  return singularScale(s2, Ip);
}

// D^-1 of an N x N SPD matrix (N <= 6, read from the top-left corner of D) by an explicit Cholesky
// factorisation D = L L^T and D^-1 = L^-T L^-1: plain loops over a size known at compile time. Returns false
// unless D is positive definite.
template <int N, typename Derived>
bool invertSpdFixed(const Eigen::MatrixBase<Derived>& D, Mat6& Dinv) {
  double L[N][N] = {}, Li[N][N] = {};
  for (int j = 0; j < N; ++j) {
    double d = D(j, j);
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 0.0)) return false;
    L[j][j] = std::sqrt(d);
    for (int i = j + 1; i < N; ++i) {
      double s = D(i, j);
      for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k];
      L[i][j] = s / L[j][j];
    }
  }
  for (int j = 0; j < N; ++j) {  // Li = L^-1, lower triangular
    Li[j][j] = 1.0 / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      double s = 0.0;
      for (int k = j; k < i; ++k) s -= L[i][k] * Li[k][j];
      Li[i][j] = s / L[i][i];
    }
  }
  for (int i = 0; i < N; ++i)
    for (int j = 0; j <= i; ++j) {
      double s = 0.0;
      for (int k = i; k < N; ++k) s += Li[k][i] * Li[k][j];
      Dinv(i, j) = Dinv(j, i) = s;
    }
  return true;
}

// D^-1 of a small SPD matrix (n <= 6) of a size known at run time: dispatched to invertSpdFixed
template <typename Derived>
bool invertSmallSpd(const Eigen::MatrixBase<Derived>& D, Mat6& Dinv) {
  switch (D.rows()) {
    case 1: return invertSpdFixed<1>(D, Dinv);
    case 2: return invertSpdFixed<2>(D, Dinv);
    case 3: return invertSpdFixed<3>(D, Dinv);
    case 4: return invertSpdFixed<4>(D, Dinv);
    case 5: return invertSpdFixed<5>(D, Dinv);
    case 6: return invertSpdFixed<6>(D, Dinv);
    default: return false;
  }
}

// D = S^T Yaba S + diag(armature + extra) of a joint of N dofs with U = Yaba S written into U, inverted into
// Dinv: fixed-size products (free and ball joints)
template <int N>
bool jointInertiaFixed(const Model& model, const Mat6& Yaba, const Mat6X& Sall, int c0, const double* extra_diag,
                       Mat6X& Uall, Mat6& Dinv) {
  using Cols = Eigen::Matrix<double, 6, N>;
  const Cols S = Sall.middleCols<N>(c0);
  Cols U;
  U.noalias() = Yaba * S;
  Uall.middleCols<N>(c0) = U;
  Eigen::Matrix<double, N, N> D;
  D.noalias() = S.transpose() * U;
  D.diagonal() += model.armature.segment<N>(c0);
  if (extra_diag) D.diagonal() += Eigen::Map<const Eigen::Matrix<double, N, 1>>(extra_diag + c0);
  return invertSpdFixed<N>(D, Dinv);
}

// D^-1 of a free joint that carries one body and nothing below it, without armature or implicit terms:
// there S = Ad(oMi) and Yaba = Ad^-T I Ad^-1, so D is the body's spatial inertia I in its own frame, whose
// inverse is T^-1 diag(I3 / m, Ic^-1) T^-T (T moves the origin's twist to the centre of mass, C = [c]x):
// [[I3 / m - C K C, C K], [-K C, K]] with K = Ic^-1. No square root and one 3 x 3 inverse instead of a
// 6 x 6 factorisation. False when m or Ic is not positive definite.
inline bool invertLeafFreeInertia(const Inertia& I, Mat6& Dinv) {
  const Mat3& Ic = I.Ic;
  const double m00 = Ic(0, 0), minor2 = Ic(0, 0) * Ic(1, 1) - Ic(0, 1) * Ic(1, 0);
  const double det = Ic.determinant();
  if (!(I.mass > 0.0) || !(m00 > 0.0) || !(minor2 > 0.0) || !(det > 0.0)) return false;  // Sylvester
  Mat3 K = Ic.inverse();
  K = 0.5 * (K + K.transpose());
  const Mat3 C = skew(I.com);
  const Mat3 CK = C * K;
  Dinv.topLeftCorner<3, 3>().noalias() = -CK * C;
  Dinv.topLeftCorner<3, 3>().diagonal().array() += 1.0 / I.mass;
  Dinv.topRightCorner<3, 3>() = CK;
  Dinv.bottomLeftCorner<3, 3>() = CK.transpose();
  Dinv.bottomRightCorner<3, 3>() = K;
  return true;
}

// A free joint with one body below it and nothing added to its diagonal (invertLeafFreeInertia applies)
inline bool isLeafFreeJoint(const Model& model, int i, const double* extra_diag) {
  const JointModel& jm = model.joints[i];
  if (jm.type != JointType::Free || model.subtree_nv[i] != 6) return false;
  for (int k = jm.idx_v; k < jm.idx_v + 6; ++k)
    if (model.armature[k] != 0.0 || (extra_diag && extra_diag[k] != 0.0)) return false;
  return true;
}

/// Inverts D = S^T Yaba S + diag(armature + extra) of joint i into data.Dinv[i], with U = Yaba S
/// written into data.U. S is the (6, nv) subspace matrix the pass works with (local or world).
/// Returns false when D is singular: not positive definite, or 1 / trace(D^-1) (within a factor n of its
/// smallest eigenvalue, and robust to the round-off a Cholesky pivot of a singular D can gather) at
/// or below kSingularTolerance of its scale.
inline bool invertJointInertia(const Model& model, Data& data, const Mat6X& Sall, int i, const double* extra_diag) {
  const JointModel& jm = model.joints[i];
  const int n = jm.nv;
  const auto S = Sall.middleCols(jm.idx_v, n);
  bool spd;
  if (isLeafFreeJoint(model, i, extra_diag)) {
    data.U.middleCols<6>(jm.idx_v).noalias() = data.Yaba[i] * S;
    spd = invertLeafFreeInertia(model.inertias[i], data.Dinv[i]);
  } else if (n == 6) {
    spd = jointInertiaFixed<6>(model, data.Yaba[i], Sall, jm.idx_v, extra_diag, data.U, data.Dinv[i]);
  } else {
    auto U = data.U.middleCols(jm.idx_v, n);
    U.noalias() = data.Yaba[i] * S;
    MatJJ D(n, n);
    D.noalias() = S.transpose() * U;
    D.diagonal() += model.armature.segment(jm.idx_v, n);
    if (extra_diag) D.diagonal() += Eigen::Map<const VecX>(extra_diag + jm.idx_v, n);
    spd = invertSmallSpd(D, data.Dinv[i]);
  }
  if (!spd) return false;
  const double trace = data.Dinv[i].topLeftCorner(n, n).trace();
  const double scale = singularScale(S.colwise().squaredNorm().maxCoeff(), data.Yaba[i]);
  if (kSingularTolerance * scale * trace < 1.0) return true;
  return kFarSingularTolerance * scale * trace < 1.0 &&
         kSingularTolerance * singularScaleAt(S, data.Yaba[i], data.oMi[i].p) * trace < 1.0;
}

/// True when the one-dof articulated inertia D along s is singular (at or below kSingularTolerance of
/// its scale, judged again at the joint's origin p when that is far from the world origin) or not finite.
inline bool singularPivot(double D, const Vec6& s, const Mat6& Ia, const Vec3& p) {
  if (D > kSingularTolerance * singularScale(s.squaredNorm(), Ia) && D < INFINITY) return false;
  if (!(D < INFINITY) || !(D > kFarSingularTolerance * singularScale(s.squaredNorm(), Ia))) return true;
  return !(D > kSingularTolerance * singularScaleAt(s, Ia, p));  // a joint far from the origin
}

/// Beyond this distance from the world origin a refused articulated inertia is blamed on the state first:
/// a robot there is far out of the range a simulation usually reaches (it got there by diverging, or was
/// placed there), and double precision starts to lose its light links (the test above).
constexpr double kFarDistance = 1e3;

// the largest entry of q, named as the offending value of a state out of range; when that entry is far below
// `scale` (the joint's distance, or infinity for an overflow), q did not put it there: the model did
inline std::string largestEntryNote(const Model& model, const double* q, double scale) {
  if (q == nullptr || model.nq == 0) return std::string();
  int k = 0;
  for (int j = 1; j < model.nq; ++j)
    if (!(std::abs(q[j]) <= std::abs(q[k]))) k = j;  // a NaN wins
  std::ostringstream os;
  os << " (the largest entry of q is q[" << k << "] = " << q[k];
  if (std::abs(q[k]) < 1e-3 * scale && std::abs(q[k]) < 1e6)
    os << ", too small for that: check the model, its joints' origins, masses and inertias";
  os << ")";
  return os.str();
}

// the bodies' masses when they span more than double precision resolves (a heavy body's articulated
// inertia then swallows a light one's): named, since the message would otherwise blame a missing mass
inline std::string massRangeNote(const Model& model) {
  double lightest = INFINITY, heaviest = 0.0;
  for (int j = 1; j < model.njoints; ++j) {
    const double m = model.inertias[j].mass;
    if (m > 0.0) {
      lightest = std::min(lightest, m);
      heaviest = std::max(heaviest, m);
    }
  }
  if (!(heaviest > 1e15 * lightest)) return std::string();
  std::ostringstream os;
  os << "; the bodies' masses span " << lightest << " to " << heaviest
     << " kg, more than double precision resolves in one articulated inertia: check the masses (set_parameters, "
        "the URDF)";
  return os.str();
}

/// `D`: the joint's articulated inertia along its axis when known; a value that is not finite means overflow
/// `distance`: how far the joint's origin is from the world origin (beyond kFarDistance the state is blamed)
/// `q`: the configuration, whose largest entry is named when the state is blamed (may be null)
[[noreturn]] inline void throwSingular(const Model& model, int i, double D = 0.0, double distance = 0.0,
                                       const double* q = nullptr) {
  if (!std::isfinite(D))
    RD_THROW(std::runtime_error, "the state is out of range: the articulated inertia of joint '"
                                     << model.names[i] << "' is not finite (" << D
                                     << "): the state holds values too large for double precision"
                                     << largestEntryNote(model, q, INFINITY) << massRangeNote(model));
  if (distance > kFarDistance) {
    std::ostringstream far;
    far << std::setprecision(3) << distance;
    RD_THROW(std::runtime_error, "the state is out of range: joint '"
                                     << model.names[i] << "' is " << far.str() << " m from the world origin"
                                     << largestEntryNote(model, q, distance)
                                     << ", where double precision no longer resolves its articulated inertia (an "
                                        "eigenvalue of it is below "
                                     << kSingularTolerance
                                     << " of its round-off scale, docs/conventions.md); if steps took it there, the "
                                        "simulation diverged (a smaller dt, smaller velocities or torques); otherwise "
                                        "simulate near the origin"
                                     << massRangeNote(model));
  }
  RD_THROW(std::runtime_error, "articulated inertia of joint '"
                                   << model.names[i]
                                   << "' is singular: the bodies it moves have no mass or inertia along its axes "
                                      "(an eigenvalue of it is below "
                                   << kSingularTolerance
                                   << " of its round-off scale, docs/conventions.md); give them mass and inertia "
                                      "(Body.inertia) or give the joint a rotor inertia (Joint.armature)"
                                   << massRangeNote(model));
}

}  // namespace detail
}  // namespace rigidiff

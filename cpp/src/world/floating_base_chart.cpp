// Free, ball and planar joints in the barrier and projective worlds' steps (world/floating_base_chart.hpp).
#include "rigidiff/world/floating_base_chart.hpp"

#include <cmath>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/spatial/explog.hpp"
#include "rigidiff/world/free_joint_motion.hpp"

namespace rigidiff {

namespace {

bool rotationGroup(const JointModel& j) {
  return j.type == JointType::Free || j.type == JointType::Ball || j.type == JointType::Planar;
}

using Mat2 = Eigen::Matrix2d;
using Vec2 = Eigen::Vector2d;

// the in-plane rotation by angle t, and J = R(pi / 2) (J x = normal x x in the plane's axes)
Mat2 rotation2(double t) {
  Mat2 R;
  R << std::cos(t), -std::sin(t), std::sin(t), std::cos(t);
  return R;
}
const Mat2 kJ = (Mat2() << 0.0, -1.0, 1.0, 0.0).finished();

}  // namespace

bool hasRotationGroupJoints(const Model& model) {
  for (int i = 1; i < model.njoints; ++i)
    if (rotationGroup(model.joints[i])) return true;
  return false;
}

void checkTurnsBelowPi(const Model& model, double h, const VecX& v) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const double turn = h * (j.type == JointType::Planar ? std::abs(v[j.idx_v + 2])
                                                          : v.segment<3>(j.idx_v + j.nv - 3).norm());
    RD_CHECK_ARG(turn < M_PI, "v: joint '" << model.names[i] << "' would turn by " << turn << " rad in one step "
                                          << "(|w| dt); the implicit step holds a free, ball or planar joint's turn "
                                          << "per step below pi: take a smaller dt");
  }
}

void stepDisplacement(const Model& model, const double* q_n, const double* q, double* dq) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    const double *a = q_n + j.idx_q, *b = q + j.idx_q;
    double* d = dq + j.idx_v;
    if (j.type == JointType::Free) {
      const Mat3 Rn = quaternionToMatrix(a + 3);
      Eigen::Map<Vec3> lin(d), ang(d + 3);
      lin = Rn.transpose() * (Vec3(b[0], b[1], b[2]) - Vec3(a[0], a[1], a[2]));
      ang = log3(Rn.transpose() * quaternionToMatrix(b + 3));
    } else if (j.type == JointType::Ball) {
      Eigen::Map<Vec3> ang(d);
      ang = log3(quaternionToMatrix(a).transpose() * quaternionToMatrix(b));
    } else if (j.type == JointType::Planar) {  // (R_n^T (x - x_n), theta - theta_n)
      Eigen::Map<Vec2> lin(d);
      lin = rotation2(a[2]).transpose() * Vec2(b[0] - a[0], b[1] - a[1]);
      d[2] = b[2] - a[2];
    } else {
      for (int k = 0; k < j.nv; ++k) d[k] = b[k] - a[k];
    }
  }
}

void displacementJacobian(const Model& model, const double* dq, MatX& Jd) {
  Jd.setIdentity(model.nv, model.nv);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const int o = j.idx_v, a = o + j.nv - 3;  // a: the angular part
    if (j.type == JointType::Planar) {  // the translation turns into the start frame: E = R(dq_w)
      Jd.block<2, 2>(o, o) = rotation2(dq[o + 2]);
      continue;
    }
    const Vec3 w(dq[a], dq[a + 1], dq[a + 2]);
    if (j.type == JointType::Free) Jd.block<3, 3>(o, o) = exp3(w);
    Jd.block<3, 3>(a, a) = Jr3inv(w);
  }
}

namespace {

// d (Jr3inv(phi)^T b) / d phi. With K = [phi]x, Jr3inv = I + K / 2 + e K^2, e(t) = (1 - (t/2) cot(t/2)) / t^2
// (t = |phi|), so Jr3inv^T b = b - phi x b / 2 + e (phi (phi . b) - t^2 b).
Mat3 inverseJacobianTransposeDerivative(const Vec3& phi, const Vec3& b) {
  const double t2 = phi.squaredNorm(), t = std::sqrt(t2);
  double e, de_t;  // e and e'(t) / t
  if (t < 1e-2) {  // the series: e = 1/12 + t^2/720 + t^4/30240
    e = 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0;
    de_t = 1.0 / 360.0 + t2 / 7560.0;
  } else {
    const double cot = std::cos(0.5 * t) / std::sin(0.5 * t), csc2 = 1.0 + cot * cot;
    const double f = 1.0 - 0.5 * t * cot, df = -0.5 * cot + 0.25 * t * csc2;
    e = f / t2;
    de_t = df / (t2 * t) - 2.0 * f / (t2 * t2);
  }
  const double pb = phi.dot(b);
  return 0.5 * skew(b) + e * (phi * b.transpose() + pb * Mat3::Identity() - 2.0 * b * phi.transpose()) +
         de_t * (phi * pb - t2 * b) * phi.transpose();
}

}  // namespace

void displacementJacobianDerivative(const Model& model, const double* dq, const double* r, MatX& V) {
  V.setZero(model.nv, model.nv);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const int o = j.idx_v, a = o + j.nv - 3;
    if (j.type == JointType::Planar) {  // d (E^T r_lin) / d dq_w = -J E^T r_lin
      V.block<2, 1>(o, o + 2) = -kJ * rotation2(dq[o + 2]).transpose() * Vec2(r[o], r[o + 1]);
      continue;
    }
    const Vec3 phi(dq[a], dq[a + 1], dq[a + 2]);
    if (j.type == JointType::Free)  // E^T r_lin turns by -[d]x as E = exp3(phi) moves by E exp3(Jr3(phi) d phi)
      V.block<3, 3>(o, a) = skew(exp3(phi).transpose() * Vec3(r[o], r[o + 1], r[o + 2])) * Jr3(phi);
    V.block<3, 3>(a, a) = inverseJacobianTransposeDerivative(phi, Vec3(r[a], r[a + 1], r[a + 2]));
  }
}

void displacementStartJacobian(const Model& model, const double* dq, MatX& Dn) {
  Dn = -MatX::Identity(model.nv, model.nv);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const int o = j.idx_v, a = o + j.nv - 3;
    if (j.type == JointType::Planar) {  // R(theta_n + d_w)^T (x - x_n - R_n d_lin): -I, and -J dq_lin in d_w
      Dn.block<2, 1>(o, o + 2) = -kJ * Vec2(dq[o], dq[o + 1]);
      continue;
    }
    const Vec3 phi(dq[a], dq[a + 1], dq[a + 2]);
    // R_n^T (p - p_n) with R_n -> R_n exp3(d), p_n -> p_n + R_n d_lin; exp3(phi) -> exp3(-d) exp3(phi)
    if (j.type == JointType::Free) Dn.block<3, 3>(o, a) = skew(Vec3(dq[o], dq[o + 1], dq[o + 2]));
    Dn.block<3, 3>(a, a) = -Jr3inv(phi) * exp3(phi).transpose();
  }
}

void displacementInverseJacobian(const Model& model, const double* dq, MatX& A) {
  A.setIdentity(model.nv, model.nv);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (!rotationGroup(j)) continue;
    const int o = j.idx_v, a = o + j.nv - 3;
    if (j.type == JointType::Planar) {  // E^T = R(dq_w)^T turns the start frame's translation into the iterate's
      A.block<2, 2>(o, o) = rotation2(dq[o + 2]).transpose();
      continue;
    }
    const Vec3 w(dq[a], dq[a + 1], dq[a + 2]);
    if (j.type == JointType::Free) A.block<3, 3>(o, o) = exp3(w).transpose();
    A.block<3, 3>(a, a) = Jr3(w);
  }
}

void chainChartHessianToDisplacement(const Model& model, const double* dq, const VecX& g, MatX& H) {
  MatX A;
  displacementInverseJacobian(model, dq, A);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    // a planar joint's chain chart (its translation along the child frame's axes, then its turn) is the step's
    // chart at q, and dq -> delta is affine there: A alone carries its Hessian
    if (!rotationGroup(j) || j.type == JointType::Planar) continue;
    const int a = j.idx_v + j.nv - 3;
    const Vec3 phi(dq[a], dq[a + 1], dq[a + 2]), ga(g[a], g[a + 1], g[a + 2]);
    Mat3 U = Mat3::Zero();  // the strict upper triangle of [g]x
    U(0, 1) = -ga[2], U(0, 2) = ga[1], U(1, 2) = -ga[0];
    const Vec3 r = Jr3(phi).transpose() * ga;
    H.block<3, 3>(a, a) += U - inverseJacobianTransposeDerivative(phi, r) * Jr3inv(phi);
  }
  H = A.transpose() * H * A;
  H = 0.5 * (H + H.transpose()).eval();
}

void moveState(const Model& model, int rest, const double* q, const double* dq, double alpha, double* out) {
  VecX step = alpha * Eigen::Map<const VecX>(dq, model.nv);
  if (model.nq > 0) integrate(model, q, step.data(), out, Motion::Step);
  for (int i = 1; i < model.njoints; ++i) {  // a planar joint on R^2 x SO(2), as a free joint on R^3 x SO(3)
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    const double *a = q + j.idx_q, *d = step.data() + j.idx_v;
    Eigen::Map<Vec2>(out + j.idx_q) = Vec2(a[0], a[1]) + rotation2(a[2]) * Vec2(d[0], d[1]);
    out[j.idx_q + 2] = a[2] + d[2];
  }
  for (int i = 0; i < rest; ++i) out[model.nq + i] = q[model.nq + i] + alpha * dq[model.nv + i];
}

// A planar joint's velocity (u, w) in its child frame, stepped as a free joint's (free_joint_motion.hpp): the
// shift dt (w J u, 0) predicts a velocity fixed in space, and the step's u~ is re-expressed in the new frame,
// u_out = E^T u~ with E = R(dt w~).

void addStepFrameTurn(const Model& model, const double* v, double dt, double* v_step) {
  addFreeFrameTurn(model, v, dt, v_step);
  addPlanarFrameTurn(model, v, dt, v_step);
}

void addStepFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D) {
  addFreeFrameTurnJacobian(model, v, dt, D);
  addPlanarFrameTurnJacobian(model, v, dt, D);
}

void addPlanarFrameTurn(const Model& model, const double* v, double dt, double* v_step) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    const double* u = v + j.idx_v;
    Eigen::Map<Vec2>(v_step + j.idx_v) += dt * u[2] * (kJ * Vec2(u[0], u[1]));
  }
}

void addFrameTurnDampingForce(const Model& model, const double* v, const VecX& v_step, double dt, VecX& f) {
  for (int i = 0; i < model.nv; ++i) {
    const double k = model.damping[i] + dt * model.stiffness[i];
    if (k != 0.0) f[i] += k * (v_step[i] - v[i]);
  }
}

void addPlanarFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    const int o = j.idx_v;
    D.block<2, 2>(o, o) += dt * v[o + 2] * kJ;
    D.block<2, 1>(o, o + 2) += dt * (kJ * Vec2(v[o], v[o + 1]));
  }
}

void reexpressStepVelocities(const Model& model, double dt, const double* v_step, double* v_out) {
  reexpressFreeVelocities(model, dt, v_step, v_out);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    const int o = j.idx_v;
    Eigen::Map<Vec2>(v_out + o) = rotation2(dt * v_step[o + 2]).transpose() * Vec2(v_step[o], v_step[o + 1]);
    v_out[o + 2] = v_step[o + 2];
  }
}

namespace {

// a planar joint's block of the re-expression's Jacobian T: [[E^T, -dt J E^T u~], [0, 1]]
Mat3 planarReexpression(const double* v_step, double dt) {
  const Mat2 Et = rotation2(dt * v_step[2]).transpose();
  Mat3 T = Mat3::Identity();
  T.topLeftCorner<2, 2>() = Et;
  T.block<2, 1>(0, 2) = -dt * kJ * Et * Vec2(v_step[0], v_step[1]);
  return T;
}

}  // namespace

void reexpressStepVelocityRows(const Model& model, double dt, const double* v_step, MatX& D) {
  reexpressVelocityRows(model, dt, v_step, D);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    D.middleRows<3>(j.idx_v) = planarReexpression(v_step + j.idx_v, dt) * D.middleRows<3>(j.idx_v);
  }
}

void reexpressStepCotangent(const Model& model, double dt, const double* v_step, const double* g_out,
                            double* g_step) {
  reexpressCotangent(model, dt, v_step, g_out, g_step);
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Planar) continue;
    const int o = j.idx_v;
    Eigen::Map<Vec3>(g_step + o) = planarReexpression(v_step + o, dt).transpose() * Vec3(g_out[o], g_out[o + 1],
                                                                                         g_out[o + 2]);
  }
}

}  // namespace rigidiff

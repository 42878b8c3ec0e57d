#include "rigidiff/algorithm/configuration_derivatives.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// SE(2) with tangent x = (vx, vy, w) in the local frame (the planar joint's group, angle unwrapped).

// Right Jacobian of the SE(2) exponential at x (3 x 3): exp(x + d) = exp(x) exp(Jr d + O(d^2)).
Mat3 se2Jr(const double* x) {
  const double w = x[2], w2 = w * w;
  double a, b, m, n;  // sin(w)/w, (1 - cos w)/w, (w - sin w)/w^2, (1 - cos w)/w^2
  if (std::abs(w) < 1e-2) {
    a = 1.0 - w2 / 6.0 + w2 * w2 / 120.0;
    n = 0.5 - w2 / 24.0 + w2 * w2 / 720.0;
    b = w * n;
    m = w * (1.0 / 6.0 - w2 / 120.0 + w2 * w2 / 5040.0);
  } else {
    const double sh = std::sin(0.5 * w);
    a = std::sin(w) / w;
    b = 2.0 * sh * sh / w;  // 1 - cos w = 2 sin^2(w/2), without cancellation
    m = (w - std::sin(w)) / w2;
    n = b / w;
  }
  Mat3 J;
  J << a, b, m * x[0] - n * x[1],  //
      -b, a, n * x[0] + m * x[1],  //
      0.0, 0.0, 1.0;
  return J;
}

// Inverse of se2Jr(x) (3 x 3); singular when w is a non-zero multiple of 2 pi.
Mat3 se2JrInv(const double* x) {
  const Mat3 J = se2Jr(x);
  const double a = J(0, 0), b = J(0, 1), det = a * a + b * b;
  Mat3 Ji;
  Ji.topLeftCorner<2, 2>() << a / det, -b / det, b / det, a / det;
  Ji.topRightCorner<2, 1>() = -Ji.topLeftCorner<2, 2>() * J.topRightCorner<2, 1>();
  Ji.bottomRows<1>() << 0.0, 0.0, 1.0;
  return Ji;
}

// Adjoint of exp(x)^-1 (3 x 3), exp(x) = (rotation by w, translation V(w) (vx, vy)).
// Ad(R, p) = [[R, (py, -px)], [0, 1]]; exp(x)^-1 = (R^T, -R^T p).
Mat3 se2AdExpInv(const double* x) {
  const double w = x[2];
  double a, b;  // sin(w)/w, (1 - cos w)/w
  if (std::abs(w) < 1e-4) {
    a = 1.0 - w * w / 6.0;
    b = w / 2.0 - w * w * w / 24.0;
  } else {
    const double sh = std::sin(0.5 * w);
    a = std::sin(w) / w;
    b = 2.0 * sh * sh / w;
  }
  const double c = std::cos(w), s = std::sin(w);
  const double tx = a * x[0] - b * x[1], ty = b * x[0] + a * x[1];  // translation of exp(x)
  const double px = -(c * tx + s * ty), py = -(-s * tx + c * ty);   // translation of exp(x)^-1
  Mat3 A;
  A << c, s, py,   //
      -s, c, -px,  //
      0.0, 0.0, 1.0;
  return A;
}

}  // namespace

void dIntegrateJointBlock(const JointModel& j, const double* x, int arg, MatJJ& B, Motion motion) {
  B.resize(j.nv, j.nv);
  switch (j.type) {
    case JointType::Ball: {
      const Vec3 w(x[0], x[1], x[2]);
      if (arg == 0)
        B = exp3(w).transpose();  // Ad(exp3(-w))
      else
        B = Jr3(w);
      break;
    }
    case JointType::Free: {
      if (motion == Motion::Step) {  // p' = p + R x_lin, R' = R E
        const Vec3 lin(x[0], x[1], x[2]), ang(x[3], x[4], x[5]);
        const Mat3 Et = exp3(ang).transpose();
        B.setZero();
        B.topLeftCorner<3, 3>() = Et;
        if (arg == 0) {
          B.topRightCorner<3, 3>() = -Et * skew(lin);
          B.bottomRightCorner<3, 3>() = Et;
        } else {
          B.bottomRightCorner<3, 3>() = Jr3(ang);
        }
        break;
      }
      const Vec6 tw = Eigen::Map<const Vec6>(x);
      if (arg == 0)
        B = exp6(tw).inverse().actionMatrix();
      else
        B = Jr6(tw);
      break;
    }
    case JointType::Planar: B = (arg == 0) ? se2AdExpInv(x) : se2Jr(x); break;
    default: B.setIdentity();
  }
}

namespace {

// Joint j's block of dDifference (arg 0: d/dq0, arg 1: d/dq1) at the joint's parts of q0, q1.
// d/dq1: log(exp(d) exp(e)) = d + Jr^-1(d) e; d/dq0: log(exp(-e) exp(d)) = d - Jl^-1(d) e, Jl(d) = Jr(-d)
void dDifferenceBlock(const JointModel& j, const double* q0, const double* q1, int arg, MatJJ& B) {
  const double sign = (arg == 0) ? -1.0 : 1.0;
  if (j.type != JointType::Ball && j.type != JointType::Free && j.type != JointType::Planar) {
    B = sign * MatJJ::Identity(j.nv, j.nv);
    return;
  }
  double d[6];
  jointDifference(j, q0, q1, d);
  for (int k = 0; k < j.nv; ++k) d[k] *= sign;
  switch (j.type) {
    case JointType::Ball: B = sign * Jr3inv(Vec3(d[0], d[1], d[2])); break;
    case JointType::Free: B = sign * Jr6inv(Eigen::Map<const Vec6>(d)); break;
    default: B = sign * se2JrInv(d);
  }
}

// Rotation of a unit quaternion (x, y, z, w) given as q / |q|, and |q|.
Mat3 unitQuaternionRotation(const double* q, Vec4& qhat, double& norm) {
  qhat = Vec4(q[0], q[1], q[2], q[3]);
  norm = qhat.norm();
  RD_CHECK_ARG(norm > 1e-12 && std::isfinite(norm), "a quaternion of q is zero or not finite");
  qhat /= norm;
  return quaternionToMatrix(qhat.data());
}

}  // namespace

void dIntegrate(const Model& model, const double* /*q*/, const double* dv, int arg, double* Jp, Motion motion) {
  RD_CHECK_ARG(arg == 0 || arg == 1, "dIntegrate: arg must be 0 (d/dq) or 1 (d/d dv), got " << arg);
  Eigen::Map<MatX> J(Jp, model.nv, model.nv);
  J.setZero();
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    dIntegrateJointBlock(j, dv + j.idx_v, arg, B, motion);
    J.block(j.idx_v, j.idx_v, j.nv, j.nv) = B;
  }
}

void dDifference(const Model& model, const double* q0, const double* q1, int arg, double* Jp) {
  RD_CHECK_ARG(arg == 0 || arg == 1, "dDifference: arg must be 0 (d/dq0) or 1 (d/dq1), got " << arg);
  Eigen::Map<MatX> J(Jp, model.nv, model.nv);
  J.setZero();
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    dDifferenceBlock(j, q0 + j.idx_q, q1 + j.idx_q, arg, B);
    J.block(j.idx_v, j.idx_v, j.nv, j.nv) = B;
  }
}

void dIntegrateTransposeProduct(const Model& model, const double* dv, int arg, const double* g, double* out,
                                Motion motion) {
  RD_CHECK_ARG(arg == 0 || arg == 1, "dIntegrateTransposeProduct: arg must be 0 or 1, got " << arg);
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    Eigen::Map<const VecJ> gj(g + j.idx_v, j.nv);
    Eigen::Map<VecJ> oj(out + j.idx_v, j.nv);
    if (j.type != JointType::Ball && j.type != JointType::Free && j.type != JointType::Planar) {
      oj = gj;
      continue;
    }
    dIntegrateJointBlock(j, dv + j.idx_v, arg, B, motion);
    oj.noalias() = B.transpose() * gj;
  }
}

void dDifferenceTransposeProduct(const Model& model, const double* q0, const double* q1, int arg, const double* g,
                                 double* out) {
  RD_CHECK_ARG(arg == 0 || arg == 1, "dDifferenceTransposeProduct: arg must be 0 or 1, got " << arg);
  MatJJ B;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    Eigen::Map<const VecJ> gj(g + j.idx_v, j.nv);
    Eigen::Map<VecJ> oj(out + j.idx_v, j.nv);
    dDifferenceBlock(j, q0 + j.idx_q, q1 + j.idx_q, arg, B);
    oj.noalias() = B.transpose() * gj;
  }
}

namespace {
// The gradient maps of tangentGradient (to_tangent: in = coordinates, out = tangent) and
// coordinateGradient (in = tangent, out = coordinates), joint by joint.
void mapGradient(const Model& model, const double* q, const double* in, double* out, bool to_tangent) {
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    const double* qj = q + j.idx_q;
    const double* x = in + (to_tangent ? j.idx_q : j.idx_v);
    double* y = out + (to_tangent ? j.idx_v : j.idx_q);
    switch (j.type) {
      case JointType::Ball:
      case JointType::Free: {
        const int o = (j.type == JointType::Free) ? 3 : 0;
        Vec4 qh;
        double norm;
        const Mat3 R = unitQuaternionRotation(qj + o, qh, norm);
        const Vec3 qv = qh.head<3>(), g(x[o], x[o + 1], x[o + 2]);
        if (o == 3) {  // translation: p' = p + R d_lin
          const Vec3 lin = to_tangent ? Vec3(R.transpose() * Vec3(x[0], x[1], x[2])) : Vec3(R * Vec3(x[0], x[1], x[2]));
          for (int k = 0; k < 3; ++k) y[k] = lin[k];
        }
        if (to_tangent) {
          // integrate(q, d) = q (x) exp(d / 2): dq/d(angular) = 1/2 [[w 1 + [v]x], [-v^T]]
          const Vec3 ang = 0.5 * (qh[3] * g - qv.cross(g) - x[o + 3] * qv);
          for (int k = 0; k < 3; ++k) y[o + k] = ang[k];
        } else {
          // chart of the normalised quaternion: d(angular) = 2 Im(qhat* (x) dqhat), dqhat = (1 - qhat qhat^T) dq / |q|
          const Vec3 vec = (2.0 / norm) * (qh[3] * g + qv.cross(g));
          for (int k = 0; k < 3; ++k) y[o + k] = vec[k];
          y[o + 3] = -(2.0 / norm) * qv.dot(g);
        }
        break;
      }
      case JointType::Planar: {  // (x, y)' = (x, y) + R(theta) (dx, dy)
        const double c = std::cos(qj[2]), s = to_tangent ? std::sin(qj[2]) : -std::sin(qj[2]);
        y[0] = c * x[0] + s * x[1];
        y[1] = -s * x[0] + c * x[1];
        y[2] = x[2];
        break;
      }
      default:
        for (int k = 0; k < j.nv; ++k) y[k] = x[k];
    }
  }
}
}  // namespace

void tangentGradient(const Model& model, const double* q, const double* g_coord, double* g_tan) {
  mapGradient(model, q, g_coord, g_tan, true);
}

void coordinateGradient(const Model& model, const double* q, const double* g_tan, double* g_coord) {
  mapGradient(model, q, g_tan, g_coord, false);
}

}  // namespace rigidiff

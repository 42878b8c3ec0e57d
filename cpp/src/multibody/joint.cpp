#include "rigidiff/multibody/joint.hpp"

#include <cmath>

#include "rigidiff/macros.hpp"

namespace rigidiff {

namespace {

// SE(2) exponential in the plane: local displacement of a motion (vx, vy, w) for unit time.
void se2Exp(double vx, double vy, double w, double& dx, double& dy) {
  double a, b;  // sin(w)/w, (1 - cos(w))/w
  if (std::abs(w) < 1e-4) {
    a = 1.0 - w * w / 6.0;
    b = w / 2.0 - w * w * w / 24.0;
  } else {
    a = std::sin(w) / w;
    b = 2.0 * std::sin(0.5 * w) * std::sin(0.5 * w) / w;  // (1 - cos w) / w, without cancellation
  }
  dx = a * vx - b * vy;
  dy = b * vx + a * vy;
}

Vec3 unit(const Vec3& a, const char* what) {
  const double n = a.norm();
  RD_CHECK_ARG(n > 1e-12 && std::isfinite(n), what << " must be a finite non-zero vector");
  return a / n;
}

}  // namespace

void jointDims(JointType type, int& nq, int& nv) {
  switch (type) {
    case JointType::Universe:
      nq = 0;
      nv = 0;
      return;
    case JointType::Revolute:
    case JointType::Prismatic:
      nq = 1;
      nv = 1;
      return;
    case JointType::Ball:
      nq = 4;
      nv = 3;
      return;
    case JointType::Free:
      nq = 7;
      nv = 6;
      return;
    case JointType::Planar:
      nq = 3;
      nv = 3;
      return;
    case JointType::Universal:
      nq = 2;
      nv = 2;
      return;
    case JointType::Translational:
      nq = 3;
      nv = 3;
      return;
  }
  RD_THROW(std::invalid_argument, "unknown joint type code " << static_cast<int>(type));
}

JointModel makeJoint(JointType type, const Vec3& axis, const Vec3& axis2) {
  JointModel j;
  j.type = type;
  jointDims(type, j.nq, j.nv);
  if (type == JointType::Revolute || type == JointType::Prismatic || type == JointType::Universal ||
      type == JointType::Planar)
    j.axis = unit(axis, "joint axis");
  if (type == JointType::Universal) {
    j.axis2 = unit(axis2, "joint axis2");
    RD_CHECK_ARG(j.axis.cross(j.axis2).norm() > 1e-6, "universal joint axes must not be parallel");
  }
  if (type == JointType::Planar) {
    // e1: the world axis least aligned with the normal, projected on the plane (x first on ties)
    int k = 0;
    for (int i = 1; i < 3; ++i)
      if (std::abs(j.axis[i]) < std::abs(j.axis[k]) - 1e-12) k = i;
    Vec3 a = Vec3::Unit(k);
    j.e1 = (a - a.dot(j.axis) * j.axis).normalized();
    j.e2 = j.axis.cross(j.e1);
  }
  return j;
}

SE3 jointTransform(const JointModel& j, const double* q) {
  switch (j.type) {
    case JointType::Revolute: return SE3(axisAngle(j.axis, q[0]), Vec3::Zero());
    case JointType::Prismatic: return SE3(Mat3::Identity(), j.axis * q[0]);
    case JointType::Ball: return SE3(quaternionToMatrix(q), Vec3::Zero());
    case JointType::Free: return SE3(quaternionToMatrix(q + 3), Vec3(q[0], q[1], q[2]));
    case JointType::Planar: return SE3(axisAngle(j.axis, q[2]), q[0] * j.e1 + q[1] * j.e2);
    case JointType::Universal: return SE3(axisAngle(j.axis, q[0]) * axisAngle(j.axis2, q[1]), Vec3::Zero());
    case JointType::Translational: return SE3(Mat3::Identity(), Vec3(q[0], q[1], q[2]));
    case JointType::Universe: break;
  }
  return SE3();
}

void jointSubspace(const JointModel& j, const double* q, double* Sp) {
  Eigen::Map<Mat6X> S(Sp, 6, j.nv);
  S.setZero();
  switch (j.type) {
    case JointType::Revolute: S.col(0).tail<3>() = j.axis; break;
    case JointType::Prismatic: S.col(0).head<3>() = j.axis; break;
    case JointType::Ball: S.bottomRows<3>().setIdentity(); break;
    case JointType::Free: S.setIdentity(); break;
    case JointType::Planar:
      S.col(0).head<3>() = j.e1;
      S.col(1).head<3>() = j.e2;
      S.col(2).tail<3>() = j.axis;
      break;
    case JointType::Universal:
      S.col(0).tail<3>() = axisAngle(j.axis2, q[1]).transpose() * j.axis;
      S.col(1).tail<3>() = j.axis2;
      break;
    case JointType::Translational: S.topRows<3>().setIdentity(); break;
    case JointType::Universe: break;
  }
}

Vec6 jointBias(const JointModel& j, const double* q, const double* v) {
  Vec6 c = Vec6::Zero();
  if (j.type == JointType::Universal) {
    const Vec3 a1c = axisAngle(j.axis2, q[1]).transpose() * j.axis;  // axis1 in the child frame
    c.tail<3>() = v[0] * v[1] * a1c.cross(j.axis2);
  }
  return c;
}

void jointIntegrate(const JointModel& j, const double* q, const double* dv, double* out, Motion motion) {
  switch (j.type) {
    case JointType::Ball: {
      const Mat3 R = quaternionToMatrix(q) * exp3(Vec3(dv[0], dv[1], dv[2]));
      const Vec4 qn = matrixToQuaternion(R);
      // keep the hemisphere of the input so trajectories of q stay continuous
      const double sgn = (qn.dot(Vec4(q[0], q[1], q[2], q[3])) < 0.0) ? -1.0 : 1.0;
      for (int k = 0; k < 4; ++k) out[k] = sgn * qn[k];
      return;
    }
    case JointType::Free: {
      const SE3 M(quaternionToMatrix(q + 3), Vec3(q[0], q[1], q[2]));
      SE3 Mn;
      if (motion == Motion::Step) {  // R^3 x SO(3)
        Mn.R = M.R * exp3(Vec3(dv[3], dv[4], dv[5]));
        Mn.p = M.p + M.R * Vec3(dv[0], dv[1], dv[2]);
      } else {
        Vec6 tw;
        tw << dv[0], dv[1], dv[2], dv[3], dv[4], dv[5];
        Mn = M * exp6(tw);
      }
      const Vec4 qn = matrixToQuaternion(Mn.R);
      const double sgn = (qn.dot(Vec4(q[3], q[4], q[5], q[6])) < 0.0) ? -1.0 : 1.0;
      for (int k = 0; k < 3; ++k) out[k] = Mn.p[k];
      for (int k = 0; k < 4; ++k) out[3 + k] = sgn * qn[k];
      return;
    }
    case JointType::Planar: {
      double dx, dy;
      se2Exp(dv[0], dv[1], dv[2], dx, dy);
      const double c = std::cos(q[2]), s = std::sin(q[2]);
      out[0] = q[0] + c * dx - s * dy;
      out[1] = q[1] + s * dx + c * dy;
      out[2] = q[2] + dv[2];
      return;
    }
    default:
      for (int k = 0; k < j.nq; ++k) out[k] = q[k] + dv[k];
  }
}

void jointDifference(const JointModel& j, const double* q0, const double* q1, double* d) {
  switch (j.type) {
    case JointType::Ball: {
      const Vec3 w = log3(quaternionToMatrix(q0).transpose() * quaternionToMatrix(q1));
      for (int k = 0; k < 3; ++k) d[k] = w[k];
      return;
    }
    case JointType::Free: {
      const SE3 M0(quaternionToMatrix(q0 + 3), Vec3(q0[0], q0[1], q0[2]));
      const SE3 M1(quaternionToMatrix(q1 + 3), Vec3(q1[0], q1[1], q1[2]));
      const Vec6 tw = log6(M0.actInv(M1));
      for (int k = 0; k < 6; ++k) d[k] = tw[k];
      return;
    }
    case JointType::Planar: {
      const double w = q1[2] - q0[2];
      const double c = std::cos(q0[2]), s = std::sin(q0[2]);
      // displacement in the q0 frame, then invert the SE(2) left Jacobian
      const double px = c * (q1[0] - q0[0]) + s * (q1[1] - q0[1]);
      const double py = -s * (q1[0] - q0[0]) + c * (q1[1] - q0[1]);
      double a, b;
      if (std::abs(w) < 1e-4) {
        a = 1.0 - w * w / 6.0;
        b = w / 2.0 - w * w * w / 24.0;
      } else {
        a = std::sin(w) / w;
        b = 2.0 * std::sin(0.5 * w) * std::sin(0.5 * w) / w;  // (1 - cos w) / w, without cancellation
      }
      const double det = a * a + b * b;
      d[0] = (a * px + b * py) / det;
      d[1] = (-b * px + a * py) / det;
      d[2] = w;
      return;
    }
    default:
      for (int k = 0; k < j.nq; ++k) d[k] = q1[k] - q0[k];
  }
}

void jointNeutral(const JointModel& j, double* q) {
  for (int k = 0; k < j.nq; ++k) q[k] = 0.0;
  if (j.type == JointType::Ball) q[3] = 1.0;
  if (j.type == JointType::Free) q[6] = 1.0;
}

}  // namespace rigidiff

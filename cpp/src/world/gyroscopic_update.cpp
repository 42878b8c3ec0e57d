#include "rigidiff/world/gyroscopic_update.hpp"

#include <iomanip>

#include "rigidiff/algorithm/aba_detail.hpp"
#include "rigidiff/macros.hpp"
#include "rigidiff/spatial/explog.hpp"

namespace rigidiff {

namespace {
// Newton's method stops after a step below kNewtonStep |y|: convergence is quadratic, so the error it leaves
// is of the order of that step squared, below round-off
constexpr double kNewtonStep = 1e-9;

// Newton's method on F(y) = 0 from y, in at most `iterations` steps: with `damped`, each step is halved until |F|
// decreases (Armijo). `solve(y, F, J)` sets F(y) and its Jacobian J. True when the steps shrank below kNewtonStep |y|
// or |F| <= ftol (a damped search can stall at round-off, where |F| no longer decreases).
template <class Solve>
bool newton(Solve&& solve, Vec3& y, int iterations, bool damped, double ftol) {
  Vec3 F;
  Mat3 J;
  for (int it = 0; it < iterations; ++it) {
    solve(y, F, J);
    if (F.norm() <= ftol) return true;
    const Vec3 step = J.inverse() * F;
    if (!step.allFinite()) return false;
    double t = 1.0;
    if (damped) {
      Vec3 Ft;
      Mat3 Jt;
      for (; t > 1e-8; t *= 0.5) {
        solve(y - t * step, Ft, Jt);
        if (Ft.norm() <= (1.0 - 1e-4 * t) * F.norm()) break;
      }
    }
    y -= t * step;
    if (t == 1.0 && step.norm() <= kNewtonStep * y.norm()) return true;
  }
  return false;
}

// Past about half a turn per step the equations below have several roots and plain Newton steps can run off:
// a step that did not converge starts again with damped steps, and raises if those do not converge either.
[[noreturn]] void notConverged(const char* joint, const Vec3& w, double dt) {
  RD_THROW(std::runtime_error, "the implicit gyroscopic update of joint '" << (joint ? joint : "?") << "' did not "
           "converge: its body turns by " << std::setprecision(3) << w.norm() * dt << " rad in one step "
           "(|omega| dt); use a smaller dt, or World(gyroscopic=\"explicit\")");
}

// y with exp3(dt y / 2) Ig y = Ig w, by Newton's method from the first-order y = w - dt/2 Ig^-1 (w x Ig w);
// Jinv: the inverse of the Jacobian J of the equation at the solution (then dy/dw = J^-1 Ig)
Vec3 midpointRate(const Mat3& Ig, const Vec3& w, double dt, Mat3* Jinv, const char* joint) {
  const Vec3 h = Ig * w;
  const Vec3 y0 = w - (0.5 * dt) * (Ig.inverse() * w.cross(h));  // Ig: symmetric positive definite, 3 x 3
  // exp3(th) Ig y - h, and J: d(exp3(th) a)/d th = -exp3(th) [a]x Jr3(th)
  auto residual = [&](const Vec3& y, Vec3& F, Mat3& J) {
    const Vec3 th = 0.5 * dt * y, Igy = Ig * y;
    const Mat3 E = exp3(th);
    J = E * Ig - (0.5 * dt) * E * skew(Igy) * Jr3(th);
    F = E * Igy - h;
  };
  Vec3 y = y0;
  if (!newton(residual, y, 30, false, 0.0)) {
    y = y0;
    if (!newton(residual, y, 100, true, 1e-13 * h.norm())) notConverged(joint, w, dt);
  }
  if (Jinv) {
    Vec3 F;
    Mat3 J;
    residual(y, F, J);
    *Jinv = J.inverse();
  }
  return y;
}

// the body's 6x6 (free) or 3x3 (ball) block of M without armature, and d/dtheta_k of it
Mat6 bodyBlock(const Model& model, const GyroscopicJoint& g) {
  Mat6 B = Mat6::Zero();
  if (g.n == 6)
    B = model.inertia_matrices[g.i];
  else
    B.topLeftCorner<3, 3>() = model.inertia_matrices[g.i].bottomRightCorner<3, 3>();
  return B;
}

// d Ig / d theta_k and d B / d theta_k for the inertiaParameters (m, h = m c, Io's xx, xy, xz, yy, yz, zz).
// Ball joints: Ig = B = Io. Free joints: Ig = Ic = Io - (|h|^2 I - h h^T) / m, B = [[m I, -[h]x], [[h]x, Io]].
void inertiaDerivatives(const Model& model, const GyroscopicJoint& g, Mat3 dIg[10], Mat6 dB[10]) {
  static const int pairs[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
  for (int k = 0; k < 10; ++k) {
    dIg[k].setZero();
    dB[k].setZero();
  }
  const int a = g.oa - g.o;  // where Io sits in B
  for (int e = 0; e < 6; ++e) {
    dIg[4 + e](pairs[e][0], pairs[e][1]) = dIg[4 + e](pairs[e][1], pairs[e][0]) = 1.0;
    dB[4 + e].block<3, 3>(a, a) = dIg[4 + e];
  }
  if (g.n != 6) return;
  const Inertia& I = model.inertias[g.i];
  const double m = I.mass;
  const Vec3 h = m * I.com;
  dIg[0] = (h.squaredNorm() * Mat3::Identity() - h * h.transpose()) / (m * m);
  dB[0].topLeftCorner<3, 3>().setIdentity();
  for (int k = 0; k < 3; ++k) {
    const Vec3 ek = Vec3::Unit(k);
    dIg[1 + k] = -(2.0 * h[k] * Mat3::Identity() - ek * h.transpose() - h * ek.transpose()) / m;
    dB[1 + k].topRightCorner<3, 3>() = -skew(ek);
    dB[1 + k].bottomLeftCorner<3, 3>() = skew(ek);
  }
}

// s = (exp3(th)^T - I) Ig w and ds/dw, th = dt w / 2, since d(exp3(th)^T a)/d th = [exp3(th)^T a]x Jr3(th)
Vec3 halfImpulse(const Mat3& Ig, const Vec3& w, double dt, Mat3* ds) {
  const Vec3 th = 0.5 * dt * w, h = Ig * w;
  const Mat3 Et = exp3(th).transpose();
  if (ds) *ds = Et * Ig + (0.5 * dt) * skew(Et * h) * Jr3(th) - Ig;
  return Et * h - h;
}
}  // namespace

namespace {
// B^-1 (n x n in the top-left corner), B the joint's block of M (armature included)
Mat6 inverseJointBlock(const Model& model, const GyroscopicJoint& g, double dt, bool with_passive) {
  Mat6 B = bodyBlock(model, g), Binv = Mat6::Zero();
  for (int k = 0; k < g.n; ++k) {
    B(k, k) += model.armature[g.o + k];
    if (with_passive) B(k, k) += dt * model.damping[g.o + k] + dt * dt * model.stiffness[g.o + k];
  }
  // symmetric positive definite: the ABA's small Cholesky inverse (plain loops, no heap, no blocked solver)
  if (!detail::invertSmallSpd(B.topLeftCorner(g.n, g.n), Binv))
    RD_THROW(std::runtime_error, "articulated inertia of joint '" << model.names[g.i] << "' is singular");
  return Binv;
}

bool anyNonZero(const VecX& x, int o, int n) { return !x.segment(o, n).isZero(0.0); }
}  // namespace

GyroscopicJoint gyroscopicJoint(const Model& model, int i, double dt) {
  const JointModel& j = model.joints[i];
  GyroscopicJoint g;
  g.i = i;
  g.name = model.names[i].c_str();
  g.o = j.idx_v;
  g.n = j.nv;
  g.oa = j.idx_v + (j.type == JointType::Free ? 3 : 0);
  const int a = g.oa - g.o;
  // Ig: about the centre of mass (free joint), about the joint origin (ball joint)
  g.Ig = j.type == JointType::Free ? model.inertias[i].Ic : Mat3(model.inertia_matrices[i].bottomRightCorner<3, 3>());
  // the body is alone below the joint, on a static parent: B and A are the joint's whole blocks of M and M + E
  const bool armature = anyNonZero(model.armature, g.o, g.n);
  const bool passive = anyNonZero(model.damping, g.o, g.n) || anyNonZero(model.stiffness, g.o, g.n);
  if (!armature && !passive) {  // a rigid body: a couple t changes w by Ig^-1 t, u by c x (Ig^-1 t)
    const Mat3 Iginv = g.Ig.inverse();
    g.CB.middleRows<3>(a) = Iginv;
    if (a == 3) g.CB.topRows<3>() = skew(model.inertias[i].com) * Iginv;
    g.CA = g.CB;
    return g;
  }
  g.CB = inverseJointBlock(model, g, dt, false).middleCols<3>(a);
  g.CA = passive ? Mat63(inverseJointBlock(model, g, dt, true).middleCols<3>(a)) : g.CB;
  return g;
}

Vec3 gyroscopicImpulse(const GyroscopicJoint& g, const Vec3& w, double dt, Mat3* dr) {
  const Vec3 h = g.Ig * w;
  Mat3 Jinv;
  const Vec3 y = midpointRate(g.Ig, w, dt, dr ? &Jinv : nullptr, g.name);
  // the explicit gyroscopic impulse given back, the implicit one (exp3(dt y / 2) - I) Ig y = Ig (w - y) taken
  if (dr) *dr = dt * (skew(w) * g.Ig - skew(h)) - g.Ig + g.Ig * Jinv * g.Ig;
  return dt * w.cross(h) - g.Ig * (w - y);
}

Vec6 gyroscopicShift(const GyroscopicJoint& g, const Vec3& w, double dt, Mat63* dS) {
  Mat3 dr;
  const Vec3 r = gyroscopicImpulse(g, w, dt, dS ? &dr : nullptr);
  if (dS) *dS = g.CA * dr;
  return g.CA * r;
}

void gyroscopicShiftInertiaDerivatives(const Model& model, const GyroscopicJoint& g, const Vec3& w, double dt,
                                       Vec3 dr[10]) {
  Mat3 dIg[10], Jinv;
  Mat6 dB[10];
  inertiaDerivatives(model, g, dIg, dB);
  const Vec3 y = midpointRate(g.Ig, w, dt, &Jinv, g.name);
  const Mat3 E = exp3(0.5 * dt * y);
  for (int k = 0; k < 10; ++k) {  // J dy = dIg w - exp3(dt y / 2) dIg y
    const Vec3 dy = Jinv * (dIg[k] * w - E * (dIg[k] * y));
    dr[k] = dt * w.cross(dIg[k] * w) - dIg[k] * (w - y) + g.Ig * dy;
  }
}

Vec6 gyroscopicHalfImpulse(const GyroscopicJoint& g, const double* x, double dt, Mat6* Z) {
  const int a = g.oa - g.o;
  Vec6 z = Vec6::Zero();
  for (int k = 0; k < g.n; ++k) z[k] = x[k];
  Mat3 ds;
  const Vec3 s = halfImpulse(g.Ig, Vec3(x[a], x[a + 1], x[a + 2]), dt, Z ? &ds : nullptr);
  z += g.CB * s;
  if (Z) {
    Z->setIdentity();
    Z->middleCols<3>(a) += g.CB * ds;
  }
  return z;
}

Vec6 invertGyroscopicHalfImpulse(const GyroscopicJoint& g, const Vec6& z, double dt) {
  const int a = g.oa - g.o;
  const Mat3 Cw = g.CB.middleRows<3>(a);
  const Vec3 zw = z.segment<3>(a);
  auto residual = [&](const Vec3& w, Vec3& F, Mat3& J) {  // w + Cw s(w) = zw
    Mat3 ds;
    F = w + Cw * halfImpulse(g.Ig, w, dt, &ds) - zw;
    J = Mat3::Identity() + Cw * ds;
  };
  Vec3 w = zw;
  if (!newton(residual, w, 30, false, 0.0)) {
    w = zw;
    if (!newton(residual, w, 100, true, 1e-13 * zw.norm())) notConverged(g.name, zw, dt);
  }
  Vec6 x = z - g.CB * halfImpulse(g.Ig, w, dt, nullptr);
  x.segment<3>(a) = w;
  return x;
}

void gyroscopicHalfImpulseParameterDerivatives(const Model& model, const GyroscopicJoint& g, const double* x,
                                               double dt, Vec6 dz_theta[10], Vec6 dz_armature[6]) {
  const int a = g.oa - g.o;
  Mat3 dIg[10];
  Mat6 dB[10];
  inertiaDerivatives(model, g, dIg, dB);
  const Vec3 w(x[a], x[a + 1], x[a + 2]);
  const Mat3 EtI = exp3(0.5 * dt * w).transpose() - Mat3::Identity();
  const Vec6 delta = g.CB * halfImpulse(g.Ig, w, dt, nullptr);  // z - x
  // z = x + B^-1 P^T s: dz = B^-1 (P^T ds - dB (z - x))
  const Mat6 Binv = inverseJointBlock(model, g, dt, false);
  for (int k = 0; k < 10; ++k) {
    Vec6 f = -dB[k] * delta;
    f.segment<3>(a) += EtI * (dIg[k] * w);
    dz_theta[k] = Binv * f;
  }
  for (int k = 0; k < 6; ++k) dz_armature[k] = k < g.n ? Vec6(-Binv.col(k) * delta[k]) : Vec6::Zero();
}

}  // namespace rigidiff

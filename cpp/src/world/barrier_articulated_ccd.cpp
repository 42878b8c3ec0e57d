// Conservative CCD along a joint-space path (world/barrier_articulated.hpp). Along q(t) = q + t dq a link
// point x(t) moves on a curve. Over a substep [t0, t1] of length D its distance from the chord between x(t0)
// and x(t1) (at the same t) is at most A D^2 / 8, A a bound of |x''| (the interpolation error of a curve
// whose second derivative is bounded by A). With W_r and W_p the sums of |dq_c| over the revolute and
// prismatic dofs that move the link, and r a bound of the distance from the point to any revolute joint
// origin of its chain during the substep, |x''| <= 2 W_r^2 r + 2 W_r W_p, and r <= (r0 + W_p D) e^(W_r D)
// (Gronwall, from |d/dt (x - o_j)| <= W_r r + W_p). Testing the chords by additive CCD with a minimum
// separation of the two sides' bounds keeps the true surfaces apart (docs/affine.md, "Skeletons").
// A free joint moves on the step's chart, q (+) t delta = (p + t R delta_lin, R exp3(t delta_ang)): a straight
// translation at |delta_lin| and then a turn about the fixed axis R delta_ang through its origin at |delta_ang|,
// i.e. a prismatic and a revolute dof of the chain; a ball joint is the turn alone (docs/affine.md, "Floating
// bases"). A planar joint moves on R^2 x SO(2) alike: a straight translation at |delta_xy| in its plane and a turn
// at |delta_w| about the normal through its origin.
#include <algorithm>
#include <cmath>

#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/world/barrier_articulated.hpp"
#include "rigidiff/world/barrier_contacts.hpp"
#include "rigidiff/world/floating_base_chart.hpp"

namespace rigidiff {

namespace {

// substeps before the search stops where it got (a shorter step is always safe)
constexpr int kMaxSubsteps = 200;
// a substep turns no revolute chain by more than this (rad), which keeps e^(W_r D) below e^0.5
constexpr double kMaxTurn = 0.5;
// the deviation allowed per side, as a fraction of the smallest gap at the start of the move
constexpr double kDeviationFraction = 0.1;

// joints that turn their link about their origin (free and ball joints: at the rate |delta_ang|; planar joints at
// |delta_w|)
bool revolute(JointType t) {
  return t == JointType::Revolute || t == JointType::Free || t == JointType::Ball || t == JointType::Planar;
}

// the sums of |dq_c| over the revolute (w_r) and prismatic (w_p) dofs that move joint j's link; a free joint adds
// |dq_lin| to w_p and |dq_ang| to w_r, a ball joint |dq_ang| to w_r, a planar joint |dq_xy| to w_p and |dq_w| to w_r
void chainSpeeds(const Model& model, int j, const double* dq, double& w_r, double& w_p) {
  w_r = w_p = 0.0;
  for (int i = j; i > 0; i = model.parents[i]) {
    const JointModel& jm = model.joints[i];
    const double* d = dq + jm.idx_v;
    if (jm.type == JointType::Free) {
      w_p += Eigen::Map<const Vec3>(d).norm();
      w_r += Eigen::Map<const Vec3>(d + 3).norm();
    } else if (jm.type == JointType::Ball) {
      w_r += Eigen::Map<const Vec3>(d).norm();
    } else if (jm.type == JointType::Planar) {
      w_p += std::hypot(d[0], d[1]);
      w_r += std::abs(d[2]);
    } else {
      for (int c = 0; c < jm.nv; ++c) (revolute(jm.type) ? w_r : w_p) += std::abs(d[c]);
    }
  }
}

// the largest distance from a vertex of x to a revolute joint origin of joint j's chain (kinematics in data)
double chainReach(const Model& model, const Data& data, int j, const std::vector<Vec3>& x) {
  double out = 0.0;
  for (int i = j; i > 0; i = model.parents[i]) {
    if (!revolute(model.joints[i].type)) continue;
    for (const Vec3& p : x) out = std::max(out, (p - data.oMi[i].p).norm());
  }
  return out;
}

}  // namespace

double articulatedCollisionFreeStep(const ArticulatedBarrier& art, ArticulatedBarrierData& ad, BarrierWorldData& data,
                                    const double* q, const double* dq, double gap) {
  const BarrierWorldModel& contact = ad.contact;
  const int nsurf = static_cast<int>(art.surfaces.size());
  const int nbodies = static_cast<int>(contact.bodies.size()) - nsurf;
  const int n = art.nq() + 12 * nbodies;
  const bool rotations = hasRotationGroupJoints(art.model);
  const double target = kDeviationFraction * gap;
  std::vector<double> w_r(nsurf), w_p(nsurf), accel(nsurf), deviation(contact.bodies.size(), 0.0);
  double w_max = 0.0;
  for (int k = 0; k < nsurf; ++k) {
    chainSpeeds(art.model, art.surfaces[k].joint, dq, w_r[k], w_p[k]);
    w_max = std::max(w_max, w_r[k]);
  }
  VecX qt(n), y0(contact.nq()), y1(contact.nq());
  contactCoordinates(art, ad.data, nbodies, q, y0.data());
  double t = 0.0;
  for (int sub = 0; sub < kMaxSubsteps && t < 1.0; ++sub) {
    barrierPositions(contact, y0.data(), data.x);
    double D = 1.0 - t;
    if (w_max > 0.0) D = std::min(D, kMaxTurn / w_max);
    // each surface's bound of |x''| over a substep of at most D (the kinematics in ad.data are at q + t dq)
    double a_max = 0.0;
    for (int k = 0; k < nsurf; ++k) {
      const int j = art.surfaces[k].joint;
      const double r0 = j == 0 ? 0.0 : chainReach(art.model, ad.data, j, data.x[nbodies + k]);
      const double r = (r0 + w_p[k] * D) * std::exp(w_r[k] * D);
      accel[k] = 2.0 * w_r[k] * w_r[k] * r + 2.0 * w_r[k] * w_p[k];
      a_max = std::max(a_max, accel[k]);
    }
    if (a_max > 0.0) D = std::min(D, std::sqrt(8.0 * target / a_max));
    for (int k = 0; k < nsurf; ++k) deviation[nbodies + k] = accel[k] * D * D / 8.0;
    if (rotations)
      moveState(art.model, 12 * nbodies, q, dq, t + D, qt.data());
    else
      for (int i = 0; i < n; ++i) qt[i] = q[i] + (t + D) * dq[i];
    contactCoordinates(art, ad.data, nbodies, qt.data(), y1.data());
    barrierPositions(contact, y1.data(), data.x_end);
    barrierCandidates(contact, data, true, 2.0 * target);
    const double tau = collisionFreeStepOfCandidates(contact, data, deviation.data());
    if (tau < 1.0) return t + tau * D;
    t += D;
    y0.swap(y1);
  }
  return std::min(t, 1.0);
}

}  // namespace rigidiff

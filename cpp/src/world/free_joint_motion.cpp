#include "rigidiff/world/free_joint_motion.hpp"

#include <algorithm>

#include "rigidiff/spatial/explog.hpp"
#include "rigidiff/world/gyroscopic_update.hpp"
#include "rigidiff/world/step_parameter_derivatives.hpp"

namespace rigidiff {

namespace {
// Free and ball joints are the only ones with nq > nv: without them every function here is a no-op
bool hasQuaternions(const Model& model) { return model.nq != model.nv; }

// f(o, u, w) for every free joint: o its first velocity index, (u, w) its part of v
template <typename F>
void forEachFreeJoint(const Model& model, const double* v, F&& f) {
  if (!hasQuaternions(model)) return;
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    if (j.type != JointType::Free) continue;
    const int o = j.idx_v;
    f(o, Vec3(v[o], v[o + 1], v[o + 2]), Vec3(v[o + 3], v[o + 4], v[o + 5]));
  }
}

// Whether joint i's body turns with no gyroscopic torque at any rate: its rotational inertia Ig (about the
// centre of mass for a free joint, the joint origin for a ball joint) is a multiple of the identity, as a
// sphere's or a cube's. Then w x Ig w = 0, the implicit update's rate is y = w and both its maps are the
// identity, (a)'s shift and (b)'s half impulse zero, and so are their derivatives in the state; not those in
// the inertia, which break the symmetry.
bool isIsotropic(const Model& model, int i) {
  const Mat3 Ig = model.joints[i].type == JointType::Free ? model.inertias[i].Ic
                                                          : Mat3(model.inertia_matrices[i].bottomRightCorner<3, 3>());
  return Ig(0, 1) == 0.0 && Ig(0, 2) == 0.0 && Ig(1, 2) == 0.0 && Ig(1, 0) == 0.0 && Ig(2, 0) == 0.0 &&
         Ig(2, 1) == 0.0 && Ig(0, 0) == Ig(1, 1) && Ig(1, 1) == Ig(2, 2);
}

// a gyroscopic joint whose maps in the state are not the identity
bool turnsGyroscopically(const Model& model, int i) { return isGyroscopicJoint(model, i) && !isIsotropic(model, i); }

// f(g) for every gyroscopic joint g (gyroscopic_update.hpp); with `skip_isotropic`, not those whose state
// maps are the identity (isIsotropic): the maps in the state skip them, their inertia derivatives do not
template <typename F>
void forEachGyroscopicJoint(const Model& model, double dt, F&& f, bool skip_isotropic = true) {
  if (!model.implicit_gyroscopic || !hasQuaternions(model)) return;
  // only root joints qualify: visit them alone, each subtree's dofs following its root's (depth-first order)
  for (int i = 1; i < model.njoints;) {
    if (skip_isotropic ? turnsGyroscopically(model, i) : isGyroscopicJoint(model, i)) f(gyroscopicJoint(model, i, dt));
    const int next = model.joints[i].idx_v + model.subtree_nv[i];
    if (next >= model.nv) break;
    i = model.dof_joint[next];
  }
}

Vec3 angularPart(const GyroscopicJoint& g, const double* v) { return Vec3(v[g.oa], v[g.oa + 1], v[g.oa + 2]); }
}  // namespace

bool hasStepMaps(const Model& model) {
  if (!hasQuaternions(model)) return false;
  for (int i = 1; i < model.njoints; ++i)
    if (model.joints[i].type == JointType::Free || isGyroscopicJoint(model, i)) return true;
  return false;
}

void addFreeFrameTurn(const Model& model, const double* v, double dt, double* v_step) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    Eigen::Map<Vec3>(v_step + o) += dt * w.cross(u);
  });
}

void addFrameTurnVelocity(const Model& model, const double* v, double dt, double* v_step) {
  addFreeFrameTurn(model, v, dt, v_step);
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    Eigen::Map<VecX>(v_step + g.o, g.n) += gyroscopicShift(g, angularPart(g, v), dt, nullptr).head(g.n);
  });
}

void subtractFrameTurnAcceleration(const Model& model, const double* v, double* a) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) { Eigen::Map<Vec3>(a + o) -= w.cross(u); });
}

void addGyroscopicAcceleration(const Model& model, const double* v, double dt, double* a) {
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    Eigen::Map<VecX>(a + g.o, g.n) += gyroscopicShift(g, angularPart(g, v), dt, nullptr).head(g.n) / dt;
  });
}

void addFreeFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    D.block<3, 3>(o, o) += dt * skew(w);
    D.block<3, 3>(o, o + 3) -= dt * skew(u);
  });
}

void addFrameTurnJacobian(const Model& model, const double* v, double dt, Eigen::Ref<MatX> D) {
  addFreeFrameTurnJacobian(model, v, dt, D);
  Mat63 dS;
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    gyroscopicShift(g, angularPart(g, v), dt, &dS);
    D.block(g.o, g.oa, g.n, 3) += dS.topRows(g.n);
  });
}

void addGyroscopicImpulses(const Model& model, const double* v, double dt, double scale, double* f) {
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    Eigen::Map<Vec3>(f + g.oa) += scale * gyroscopicImpulse(g, angularPart(g, v), dt, nullptr);
  });
}

void addGyroscopicImpulseJacobian(const Model& model, const double* v, double dt, double scale, Eigen::Ref<MatX> D) {
  Mat3 dr;
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    gyroscopicImpulse(g, angularPart(g, v), dt, &dr);
    D.block<3, 3>(g.oa, g.oa) += scale * dr;
  });
}

void subtractRowsTimesFrameTurnJacobian(const Model& model, const double* v, double dt, const MatX& rows,
                                        Eigen::Ref<MatX> out) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    out.middleCols<3>(o).noalias() -= rows.middleCols<3>(o) * (dt * skew(w));
    out.middleCols<3>(o + 3).noalias() += rows.middleCols<3>(o) * (dt * skew(u));
  });
  Mat63 dS;
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    gyroscopicShift(g, angularPart(g, v), dt, &dS);
    out.middleCols<3>(g.oa).noalias() -= rows.middleCols(g.o, g.n) * dS.topRows(g.n);
  });
}

void addFrameTurnTranspose(const Model& model, const double* v, double dt, const double* g, double* g_v) {
  forEachFreeJoint(model, v, [&](int o, const Vec3& u, const Vec3& w) {
    // S^T: [dt [w]x]^T gu = dt gu x w on u, [-dt [u]x]^T gu = dt u x gu on w
    const Vec3 gu(g[o], g[o + 1], g[o + 2]);
    Eigen::Map<Vec3>(g_v + o) += dt * gu.cross(w);
    Eigen::Map<Vec3>(g_v + o + 3) += dt * u.cross(gu);
  });
  Mat63 dS;
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& j) {
    gyroscopicShift(j, angularPart(j, v), dt, &dS);
    Eigen::Map<Vec3>(g_v + j.oa) += dS.topRows(j.n).transpose() * Eigen::Map<const VecX>(g + j.o, j.n);
  });
}

int reexpressionBlock(const Model& model, int i, const double* v_step, double dt, Mat6& Tj) {
  const JointModel& j = model.joints[i];
  const bool gyro = turnsGyroscopically(model, i), free = j.type == JointType::Free;
  if (!free && !gyro) return 0;
  const double* x = v_step + j.idx_v;
  Vec6 z = Vec6::Zero();
  Tj.setIdentity();
  if (gyro)
    z = gyroscopicHalfImpulse(gyroscopicJoint(model, i, dt), x, dt, &Tj);  // Tj = dz/dx
  else
    z.head<6>() = Eigen::Map<const Vec6>(x);
  if (free) {  // u_out = E^T z_u with E = exp3(dt w~), w~ the rotation the step made
    const Vec3 th = dt * Vec3(x[3], x[4], x[5]);
    const Mat3 Et = exp3(th).transpose();
    Tj.topRows<3>() = (Et * Tj.topRows<3>()).eval();
    // d(E(th)^T z_u)/d th = [E^T z_u]x Jr3(th), since E(th + d)^T = (I - [Jr3(th) d]x) E(th)^T to first order
    Tj.block<3, 3>(0, 3) += dt * skew(Et * z.head<3>()) * Jr3(th);
  }
  return j.nv;
}

void reexpressFreeVelocities(const Model& model, double dt, const double* v_step, double* v_out) {
  if (v_out != v_step) std::copy(v_step, v_step + model.nv, v_out);
  for (int i = 1; i < model.njoints && hasQuaternions(model); ++i) {
    const JointModel& j = model.joints[i];
    const bool gyro = turnsGyroscopically(model, i), free = j.type == JointType::Free;
    if (!free && !gyro) continue;
    const int o = j.idx_v;
    const Vec3 w_step(v_step[o + j.nv - 3], v_step[o + j.nv - 2], v_step[o + j.nv - 1]);
    if (gyro) {
      const Vec6 z = gyroscopicHalfImpulse(gyroscopicJoint(model, i, dt), v_step + o, dt, nullptr);
      for (int k = 0; k < j.nv; ++k) v_out[o + k] = z[k];
    }
    if (free) Eigen::Map<Vec3>(v_out + o) = exp3(dt * w_step).transpose() * Eigen::Map<const Vec3>(v_out + o);
  }
}

void stepAcceleration(const Model& model, double dt, const double* v, const double* v_next, double* a) {
  const int nv = model.nv;
  std::copy(v_next, v_next + nv, a);  // v~ first, then a in place
  for (int i = 1; i < model.njoints; ++i) {
    const JointModel& j = model.joints[i];
    const int o = j.idx_v;
    if (turnsGyroscopically(model, i)) {
      // (b) inverted: its rotation w~ from w_out alone, then (free joints) z_u = E u_out, and x = z - CB s
      const GyroscopicJoint g = gyroscopicJoint(model, i, dt);
      Vec6 z = Vec6::Zero();
      for (int k = 0; k < j.nv; ++k) z[k] = v_next[o + k];
      Vec6 x = invertGyroscopicHalfImpulse(g, z, dt);
      if (j.type == JointType::Free) {
        const Vec3 zu = exp3(dt * x.segment<3>(3)) * z.head<3>();
        x.head<3>() += zu - z.head<3>();
      }
      for (int k = 0; k < j.nv; ++k) a[o + k] = x[k];
    } else if (j.type == JointType::Free) {
      Eigen::Map<Vec3>(a + o) = exp3(dt * Eigen::Map<const Vec3>(v_next + o + 3)) * Eigen::Map<const Vec3>(v_next + o);
    }
  }
  Eigen::Map<VecX> am(a, nv);
  am = (am - Eigen::Map<const VecX>(v, nv)) / dt;
  subtractFrameTurnAcceleration(model, v, a);
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {  // and (a)'s impulse: forces only
    Eigen::Map<VecX>(a + g.o, g.n) -= gyroscopicShift(g, angularPart(g, v), dt, nullptr).head(g.n) / dt;
  });
}

void reexpressCotangent(const Model& model, double dt, const double* v_step, const double* g_out, double* g_step) {
  if (g_step != g_out) std::copy(g_out, g_out + model.nv, g_step);
  Mat6 T;
  Vec6 x;
  for (int i = 1; i < model.njoints && hasQuaternions(model); ++i) {
    const int n = reexpressionBlock(model, i, v_step, dt, T);
    if (n == 0) continue;
    const int o = model.joints[i].idx_v;
    for (int k = 0; k < n; ++k) x[k] = g_out[o + k];  // read before g_step (it may alias) is written
    Eigen::Map<VecX>(g_step + o, n) = T.topLeftCorner(n, n).transpose() * x.head(n);
  }
}

void addGyroscopicImpulseInertiaColumns(const Model& model, const double* v, double dt, const MatX& response,
                                        Eigen::Ref<RowMatX> D) {
  Vec3 dr[10];
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    gyroscopicShiftInertiaDerivatives(model, g, angularPart(g, v), dt, dr);
    for (int k = 0; k < 10; ++k) D.col(10 * (g.i - 1) + k).noalias() += response.middleCols<3>(g.oa) * dr[k];
  }, false);
}

namespace {
// f(g, dz_theta, dz_armature): (b)'s parameter derivatives of each gyroscopic joint, carried to v_out's rows
// (a free joint's u_out = E^T z_u)
template <typename F>
void forEachRateParameterDerivative(const Model& model, const double* v_step, double dt, F&& f) {
  Vec6 dz_theta[10], dz_arm[6];
  forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
    gyroscopicHalfImpulseParameterDerivatives(model, g, v_step + g.o, dt, dz_theta, dz_arm);
    if (g.n == 6) {
      const Mat3 Et = exp3(dt * Eigen::Map<const Vec3>(v_step + g.oa)).transpose();
      for (Vec6& d : dz_theta) d.head<3>() = (Et * d.head<3>()).eval();
      for (Vec6& d : dz_arm) d.head<3>() = (Et * d.head<3>()).eval();
    }
    f(g, dz_theta, dz_arm);
  }, false);
}
}  // namespace

void addGyroscopicRateParameterColumns(const Model& model, const double* v_step, double dt, int groups,
                                       Eigen::Ref<RowMatX> D) {
  const int arm0 = (groups & kParamInertia) ? 10 * (model.njoints - 1) : 0;
  addGyroscopicRateParameterColumns(model, v_step, dt, (groups & kParamInertia) ? 0 : -1,
                                    (groups & kParamArmature) ? arm0 : -1, D);
}

void addGyroscopicRateParameterColumns(const Model& model, const double* v_step, double dt, int inertia0,
                                       int armature0, Eigen::Ref<RowMatX> D) {
  forEachRateParameterDerivative(model, v_step, dt, [&](const GyroscopicJoint& g, const Vec6* dz_theta,
                                                         const Vec6* dz_arm) {
    for (int k = 0; k < 10 && inertia0 >= 0; ++k)
      D.block(g.o, inertia0 + 10 * (g.i - 1) + k, g.n, 1) += dz_theta[k].head(g.n);
    for (int k = 0; k < g.n && armature0 >= 0; ++k) D.block(g.o, armature0 + g.o + k, g.n, 1) += dz_arm[k].head(g.n);
  });
}

void addGyroscopicParameterVJP(const Model& model, const double* v, const double* v_step, double dt,
                               const double* lam, const double* g_out, double* g_theta, double* g_armature) {
  if (g_theta) {
    Vec3 dr[10];
    forEachGyroscopicJoint(model, dt, [&](const GyroscopicJoint& g) {
      gyroscopicShiftInertiaDerivatives(model, g, angularPart(g, v), dt, dr);
      const Vec3 w = Eigen::Map<const Vec3>(lam + g.oa) / dt;  // lam / dt: the adjoint of a generalized force
      for (int k = 0; k < 10; ++k) g_theta[10 * (g.i - 1) + k] += dr[k].dot(w);
    }, false);
  }
  addGyroscopicRateParameterVJP(model, v_step, dt, g_out, g_theta, g_armature);
}

void addGyroscopicRateParameterVJP(const Model& model, const double* v_step, double dt, const double* g_out,
                                   double* g_theta, double* g_armature) {
  if (!g_theta && !g_armature) return;
  forEachRateParameterDerivative(model, v_step, dt, [&](const GyroscopicJoint& g, const Vec6* dz_theta,
                                                         const Vec6* dz_arm) {
    const Eigen::Map<const VecX> go(g_out + g.o, g.n);
    for (int k = 0; k < 10 && g_theta; ++k) g_theta[10 * (g.i - 1) + k] += dz_theta[k].head(g.n).dot(go);
    for (int k = 0; k < g.n && g_armature; ++k) g_armature[g.o + k] += dz_arm[k].head(g.n).dot(go);
  });
}

}  // namespace rigidiff

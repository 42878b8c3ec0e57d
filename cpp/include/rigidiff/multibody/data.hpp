// Data: every buffer and result of the algorithms for one Model, sized once at construction so
// that no algorithm allocates. One Data per thread.
#pragma once

#include <vector>

#include "rigidiff/multibody/model.hpp"

namespace rigidiff {

struct Data {
  explicit Data(const Model& model);
  Data(const Data&) = delete;  // the step-Jacobian maps point into this object's own storage
  Data& operator=(const Data&) = delete;

  /// Points the six step Jacobians (dq_dq, dq_dv, dq_dtau, dv_dq, dv_dv, dv_dtau) at 6 nv^2 doubles of
  /// caller memory (each block column-major, one after the other), or back at data's own storage
  /// (nullptr). Lets a caller receive them without a copy.
  void setStepJacobianStorage(double* external);

  // kinematics (per joint, index 0 = world)
  std::vector<SE3> liMi;   ///< joint i in its parent joint frame
  std::vector<SE3> oMi;    ///< joint i in the world
  std::vector<Vec6> v;     ///< spatial velocity of joint i, in frame i
  std::vector<Vec6> a;     ///< spatial acceleration of joint i, in frame i (gravity excluded)
  std::vector<Vec6> a_gf;  ///< spatial acceleration with -gravity added at the root, in frame i
  std::vector<Vec6> vJ;    ///< joint velocity S qdot, in frame i
  std::vector<Vec6> c;     ///< bias acceleration c_J + v x vJ, in frame i
  std::vector<Vec6> f;     ///< spatial force transmitted by joint i, in frame i
  std::vector<Vec6> fext;  ///< external wrench on joint i's body, in frame i
  Mat6X S;                 ///< (6, nv) motion subspaces, columns at idx_v, child frames

  // dynamics
  std::vector<Mat6> Yaba;              ///< articulated inertias (world frame in aba, joint frames in computeMinverse)
  std::vector<Vec6> pA;                ///< articulated bias forces
  std::vector<Vec6> ov;                ///< spatial velocities in the world frame (at the world origin)
  std::vector<Vec6> oc;                ///< bias accelerations in the world frame
  std::vector<Vec6> oa_gf;             ///< spatial accelerations (with -gravity at the root) in the world frame
  std::vector<Mat6> Dinv;              ///< inverse of the joint-space articulated inertia (top-left nv_i block)
  std::vector<Inertia> Ycrb;           ///< composite rigid-body inertias, frame i
  std::vector<OriginInertia> oYcrb10;  ///< composite inertias at the world origin (crba)
  std::vector<Mat6X> Fcol;             ///< (6, nv) per joint: force columns (crba, M^-1 passes)
  Mat6X U;                             ///< (6, nv) Yaba S columns
  Mat6X Ftmp;                          ///< (6, nv) scratch rows
  VecX u;                              ///< (nv) ABA joint-space bias
  VecX tau;                            ///< (nv) rnea output
  VecX ddq;                            ///< (nv) aba output
  MatX M;                              ///< (nv, nv) joint-space inertia (full, armature included)
  MatX Minv;                           ///< (nv, nv) its inverse

  // jacobians and centre of mass
  Mat6X J;                       ///< (6, nv) joint jacobians = world-frame motion subspaces (at the world origin)
  Mat6X dJ;                      ///< (6, nv) their time derivative
  std::vector<double> mass_sub;  ///< subtree masses
  std::vector<Vec3> com_sub;     ///< subtree centres of mass, world frame
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jcom;  ///< (3, nv)

  // derivatives
  std::vector<Mat6> oYcrb;  ///< composite inertias, world frame
  std::vector<Mat6> oBcrb;  ///< composite inertia rates [v x*] Y - Y [v x], world frame
  std::vector<Vec6> oH;     ///< composite momenta, world frame
  std::vector<Vec6> oF;     ///< composite forces, world frame
  MatX dtau_dq, dtau_dv;    ///< (nv, nv) rnea derivatives
  Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor> dP, dC;  ///< (nv, 6) per-dof rows of the rnea derivatives
  MatX ddq_dq, ddq_dv;                                               ///< (nv, nv) aba derivatives
  VecX ddq_tmp;                                                      ///< (nv)
  Eigen::Index step_nv = 0;                                          ///< model.nv
  VecX step_jacobian_storage;  ///< 6 nv^2: the default memory of the six maps below
  /// (nv, nv) step Jacobians, q in the tangent space (see setStepJacobianStorage)
  Eigen::Map<MatX> dq_dq{nullptr, 0, 0}, dq_dv{nullptr, 0, 0}, dq_dtau{nullptr, 0, 0}, dv_dq{nullptr, 0, 0},
      dv_dv{nullptr, 0, 0}, dv_dtau{nullptr, 0, 0};

  // parameters and reverse mode
  MatX Yreg;                           ///< (nv, 10 (njoints - 1)) inverse-dynamics regressor
  std::vector<Vec6> fbar, abar, vbar;  ///< cotangents of joint forces, accelerations, velocities
  VecX vjp_q, vjp_v, vjp_theta;        ///< outputs of rneaVJP (nv, nv, 10 (njoints - 1))
  VecX lam, gvt, vjp_tmp, carry_q, carry_v, carry_q2, carry_v2, q_next, v_next;  ///< reverse-mode scratch

  // scratch of the step
  VecX tau_eff, extra_diag, dq_tmp, v_tmp;
  /// (nv) the velocity that moved q in the last step: v' before each free joint's linear velocity is
  /// re-expressed in the joint's new frame (world/free_joint_motion.hpp); equal to v' without free joints
  VecX v_step;
};

}  // namespace rigidiff

#include "rigidiff/trajopt/cost_terms.hpp"

#include <Eigen/Core>
#include <algorithm>

#include "rigidiff/algorithm/configuration.hpp"
#include "rigidiff/algorithm/configuration_derivatives.hpp"
#include "rigidiff/algorithm/jacobian.hpp"
#include "rigidiff/algorithm/kinematics.hpp"
#include "rigidiff/multibody/data.hpp"
#include "rigidiff/multibody/model.hpp"
#include "rigidiff/spatial/explog.hpp"

namespace rigidiff {

namespace cost_terms_detail {

using RowMap = Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

MatX rowMajor(const double* W, int n) {
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(W, n, n);
}

// g += J^T Wr and H = J^T W J for a difference Jacobian J that is the identity outside the rows and
// columns in `moved` (J - I lives on moved x moved), which keeps a free joint's block from costing nv^3
void addThroughDifference(const MatX& J, const std::vector<int>& moved, const MatX& W, const VecX& Wr, double* g,
                          MatX* H) {
  const int nv = static_cast<int>(Wr.size());
  for (int j = 0; j < nv; ++j) g[j] += Wr(j);
  for (int j : moved) {
    g[j] -= Wr(j);
    for (int i : moved) g[j] += J(i, j) * Wr(i);
  }
  if (!H) return;
  MatX M = W;  // W J: only the columns in `moved` change
  for (int j : moved) {
    M.col(j).setZero();
    for (int i : moved) M.col(j) += J(i, j) * W.col(i);
  }
  *H = M;  // J^T (W J): only the rows in `moved` change
  for (int j : moved) {
    H->row(j).setZero();
    for (int i : moved) H->row(j) += J(i, j) * M.row(i);
  }
}

}  // namespace cost_terms_detail

TrajectoryCosts::TrajectoryCosts(int T, int nq, int nv) : T_(T), nq_(nq), nv_(nv) {}

void TrajectoryCosts::addState(const int* knots, int n, const double* q_target, const double* v_target,
                               const double* Wq, const double* Wv) {
  State s;
  s.knots.assign(knots, knots + n);
  if (q_target) s.q_target.assign(q_target, q_target + static_cast<long>(T_ + 1) * nq_);
  if (v_target) s.v_target.assign(v_target, v_target + static_cast<long>(T_ + 1) * nv_);
  s.Wq = cost_terms_detail::rowMajor(Wq, nv_);
  s.Wv = cost_terms_detail::rowMajor(Wv, nv_);
  states_.push_back(std::move(s));
}

void TrajectoryCosts::addControl(const double* target, const double* W) {
  Control c;
  c.target.assign(target, target + static_cast<long>(T_) * nv_);
  c.W = cost_terms_detail::rowMajor(W, nv_);
  controls_.push_back(std::move(c));
}

void TrajectoryCosts::addBody(int f, const int* knots, int n, const double* point, const double* position,
                              const double* W, const double* R, const double* Wr) {
  Body b;
  b.frame = f;
  b.at.assign(T_ + 1, 0);
  for (int i = 0; i < n; ++i) b.at[knots[i]] = 1;
  b.point = Eigen::Map<const Vec3>(point);
  b.has_position = position != nullptr;
  b.position = b.has_position ? Vec3(Eigen::Map<const Vec3>(position)) : Vec3::Zero();
  b.W = cost_terms_detail::rowMajor(W, 3);
  b.has_orientation = R != nullptr;
  b.R = b.has_orientation ? Mat3(cost_terms_detail::rowMajor(R, 3)) : Mat3::Identity();
  b.Wr = cost_terms_detail::rowMajor(Wr, 3);
  bodies_.push_back(std::move(b));
}

double TrajectoryCosts::evaluate(const Model& m, Data& d, const double* Q, const double* V, const double* TAU,
                                 double* gq, double* gv, double* gtau, double* hxx, double* huu) const {
  const int nv = nv_, nx = 2 * nv;
  const long knots = T_ + 1;
  const bool grad = gq != nullptr, hess = hxx != nullptr;
  if (grad) {
    std::fill(gq, gq + knots * nv, 0.0);
    std::fill(gv, gv + knots * nv, 0.0);
    std::fill(gtau, gtau + static_cast<long>(T_) * nv, 0.0);
  }
  if (hess) {
    std::fill(hxx, hxx + knots * nx * nx, 0.0);
    std::fill(huu, huu + static_cast<long>(T_) * nv * nv, 0.0);
  }
  double value = 0.0;
  VecX r(nv), Wr(nv);
  MatX J(nv, nv), JtWJ(nv, nv);
  std::vector<int> moved;
  for (const State& s : states_) {
    for (int t : s.knots) {
      cost_terms_detail::RowMap H(hxx ? hxx + t * nx * nx : nullptr, nx, nx);
      if (!s.q_target.empty()) {
        const double* target = s.q_target.data() + static_cast<long>(t) * nq_;
        difference(m, target, Q + static_cast<long>(t) * nq_, r.data());
        Wr.noalias() = s.Wq * r;
        value += 0.5 * r.dot(Wr);
        if (grad) {
          dDifference(m, target, Q + static_cast<long>(t) * nq_, 1, J.data());
          moved.clear();
          for (int i = 0; i < nv; ++i)  // i moves when its row or its column is not e_i
            for (int j = 0; j < nv; ++j)
              if (J(i, j) != (i == j ? 1.0 : 0.0) || J(j, i) != (i == j ? 1.0 : 0.0)) {
                moved.push_back(i);
                break;
              }
          cost_terms_detail::addThroughDifference(J, moved, s.Wq, Wr, gq + static_cast<long>(t) * nv, hess ? &JtWJ : nullptr);
          if (hess) H.topLeftCorner(nv, nv) += JtWJ;
        }
      }
      if (!s.v_target.empty()) {
        for (int i = 0; i < nv; ++i) r(i) = V[static_cast<long>(t) * nv + i] - s.v_target[static_cast<long>(t) * nv + i];
        Wr.noalias() = s.Wv * r;
        value += 0.5 * r.dot(Wr);
        if (grad) Eigen::Map<VecX>(gv + static_cast<long>(t) * nv, nv) += Wr;
        if (hess) H.bottomRightCorner(nv, nv) += s.Wv;
      }
    }
  }
  for (const Control& c : controls_) {
    for (long t = 0; t < T_; ++t) {
      for (int i = 0; i < nv; ++i) r(i) = TAU[t * nv + i] - c.target[t * nv + i];
      Wr.noalias() = c.W * r;
      value += 0.5 * r.dot(Wr);
      if (grad) Eigen::Map<VecX>(gtau + t * nv, nv) += Wr;
      if (hess) cost_terms_detail::RowMap(huu + t * nv * nv, nv, nv) += c.W;
    }
  }
  if (!bodies_.empty()) {
    Mat6X Jf(6, nv);
    Eigen::Matrix<double, 3, Eigen::Dynamic> Jp(3, nv), Jr(3, nv);
    for (long t = 0; t < knots; ++t) {
      bool any = false;
      for (const Body& b : bodies_) any = any || b.at[t];
      if (!any) continue;
      const double* q = Q + t * nq_;
      if (grad)
        computeJointJacobians(m, d, q);  // forward kinematics included
      else
        forwardKinematics(m, d, q);
      for (const Body& b : bodies_) {
        if (!b.at[t]) continue;
        const SE3 M = framePlacement(m, d, b.frame);
        if (grad) frameJacobian(m, d, b.frame, ReferenceFrame::LocalWorldAligned, Jf.data());
        if (b.has_position) {
          const Vec3 arm = M.R * b.point;
          const Vec3 e = M.p + arm - b.position;
          const Vec3 We = b.W * e;
          value += 0.5 * e.dot(We);
          if (grad) {
            // velocity of the point: v_origin + omega x arm
            Jp = Jf.topRows<3>() - skew(arm) * Jf.bottomRows<3>();
            Eigen::Map<VecX>(gq + t * nv, nv) += Jp.transpose() * We;
            if (hess) cost_terms_detail::RowMap(hxx + t * nx * nx, nx, nx).topLeftCorner(nv, nv) += Jp.transpose() * b.W * Jp;
          }
        }
        if (b.has_orientation) {
          const Vec3 e = log3(b.R.transpose() * M.R);
          const Vec3 We = b.Wr * e;
          value += 0.5 * e.dot(We);
          if (grad) {
            Jr = Jr3inv(e) * M.R.transpose() * Jf.bottomRows<3>();
            Eigen::Map<VecX>(gq + t * nv, nv) += Jr.transpose() * We;
            if (hess) cost_terms_detail::RowMap(hxx + t * nx * nx, nx, nx).topLeftCorner(nv, nv) += Jr.transpose() * b.Wr * Jr;
          }
        }
      }
    }
  }
  return value;
}

}  // namespace rigidiff

// The cost terms of rigidiff.trajopt (trajopt/costs.py) over a whole trajectory in one call: value,
// gradient and Gauss-Newton Hessian of state, control and body-target terms at every knot.
#pragma once

#include <vector>

#include "rigidiff/fwd.hpp"

namespace rigidiff {

struct Model;
struct Data;

/// The terms of one problem of T steps; weights and targets are copied in, every array row-major.
/// Gradients with respect to q are tangent-space cotangents (nv per knot), as in costs.py.
class TrajectoryCosts {
 public:
  TrajectoryCosts(int T, int nq, int nv);

  /// 0.5 |difference(q_target_t, q_t)|^2_Wq + 0.5 |v_t - v_target_t|^2_Wv at the given knots;
  /// q_target ((T + 1) x nq) or v_target ((T + 1) x nv) may be null (that part left out); Wq, Wv nv x nv.
  void addState(const int* knots, int n, const double* q_target, const double* v_target, const double* Wq,
                const double* Wv);
  /// 0.5 |tau_t - target_t|^2_W over t < T; target T x nv, W nv x nv.
  void addControl(const double* target, const double* W);
  /// 0.5 |p_t - position|^2_W for the point `point` (body frame) of frame f, plus 0.5 |log(R^T R_t)|^2_Wr
  /// when R (3 x 3) is given, at the given knots; position or R may be null (not both).
  void addBody(int f, const int* knots, int n, const double* point, const double* position, const double* W,
               const double* R, const double* Wr);

  /// The summed value at Q ((T + 1) x nq), V ((T + 1) x nv), TAU (T x nv). Unless null, overwrites
  /// gq, gv ((T + 1) x nv), gtau (T x nv) with the gradient, and hxx ((T + 1) x 2nv x 2nv, over (q
  /// tangent, v)), huu (T x nv x nv) with the Gauss-Newton Hessian (all or none of the five).
  double evaluate(const Model& m, Data& d, const double* Q, const double* V, const double* TAU, double* gq,
                  double* gv, double* gtau, double* hxx, double* huu) const;

  int horizon() const { return T_; }
  bool empty() const { return states_.empty() && controls_.empty() && bodies_.empty(); }

 private:
  struct State {
    std::vector<int> knots;
    std::vector<double> q_target, v_target;  // empty: that part left out
    MatX Wq, Wv;
  };
  struct Control {
    std::vector<double> target;
    MatX W;
  };
  struct Body {
    int frame;
    std::vector<char> at;  // (T + 1) flags: the knots of the term
    Vec3 point, position;
    bool has_position, has_orientation;
    Mat3 W, R, Wr;
  };
  int T_, nq_, nv_;
  std::vector<State> states_;
  std::vector<Control> controls_;
  std::vector<Body> bodies_;
};

}  // namespace rigidiff

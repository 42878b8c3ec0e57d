// DiffPD's complementarity contact on the ground planes, balls and boxes (pd_complementarity.hpp).
//
// With E the constraint directions (one column n_p at the coordinates of pair p's vertex) and A = I3 x L the PD
// matrix, the inverse on the subspace E^T u = 0 is A^-1 - A^-1 E S^-1 E^T A^-1 with S = E^T A^-1 E (notes: the
// Schur form of DiffPD's low-rank update, Alg. 4). A^-1 E's column p is n_p x L^-1 e_i, so the active set
// costs one scalar back-substitution per pair and a small dense Cholesky, and the factor of L never changes.
#include "rigidiff/deformable/pd_complementarity.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {
namespace {

// The pairs [first, last) of the vertex at pair `first` (pairs are sorted by vertex).
int pairsEnd(const PdActiveSet& active, int first) {
  int last = first + 1;
  while (last < active.size() && active.vertex[last] == active.vertex[first]) ++last;
  return last;
}

// The normals (3 x k) of pairs [first, last).
Eigen::Matrix3Xd normals(const PdActiveSet& active, int first, int last) {
  Eigen::Matrix3Xd N(3, last - first);
  for (int p = first; p < last; ++p) N.col(p - first) = active.normal[p];
  return N;
}

void pushPair(int i, int o, const Vec3& normal, double offset, PdActiveSet& active) {
  active.vertex.push_back(i), active.obstacle.push_back(o);
  active.normal.push_back(normal), active.offset.push_back(offset);
}

Vec3 gather(const PdModel& model, const VecX& g, int i) {
  const int nf = model.free_count, r = model.free_index[i];
  return Vec3(g[r], g[nf + r], g[2 * nf + r]);
}

void scatter(const PdModel& model, const Vec3& value, int i, VecX& g) {
  const int nf = model.free_count, r = model.free_index[i];
  for (int c = 0; c < 3; ++c) g[c * nf + r] = value[c];
}

}  // namespace

void pdTouchingPairs(const PdModel& model, const Points& q, const Points& v, const Points& x, bool below,
                     PdActiveSet& active) {
  active.clear();
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    for (int o = 0; o < model.obstacleCount(); ++o) {
      Vec3 normal;
      double offset;
      pdHoldingPlane(model, o, q.row(i).transpose(), v.row(i).transpose(), &normal, &offset);
      const double gap = normal.dot(x.row(i).transpose()) - offset;
      if (gap <= kContactGap && (below || gap >= -kContactGap)) pushPair(i, o, normal, offset, active);
    }
  }
}

void pdActiveSetFactorise(const PdModel& model, const PdData& data, PdActiveSet& active) {
  if (active.stamp == data.factor_stamp) return;
  const int c = active.size(), nf = model.free_count;
  Eigen::MatrixXd unit = Eigen::MatrixXd::Zero(nf, c);
  for (int p = 0; p < c; ++p) unit(model.free_index[active.vertex[p]], p) = 1.0;
  active.columns = c ? Eigen::MatrixXd(data.factor.solve(unit)) : Eigen::MatrixXd(nf, 0);
  Eigen::MatrixXd S(c, c);
  for (int a = 0; a < c; ++a)
    for (int b = 0; b < c; ++b)
      S(a, b) = active.normal[a].dot(active.normal[b]) * active.columns(model.free_index[active.vertex[a]], b);
  active.schur.compute(S);
  if (c && active.schur.info() != Eigen::Success)
    throw std::runtime_error("the complementarity contact's active set is degenerate: a vertex is held on two "
                             "obstacles (planes, balls, boxes) whose normals there are parallel");
  active.stamp = data.factor_stamp;
}

VecX pdConstrainedSolve(const PdModel& model, const PdData& data, const VecX& g) {
  VecX u = pdSolve(model, data, g);
  const PdActiveSet& active = data.active;
  const int c = active.size(), nf = model.free_count;
  if (c == 0) return u;
  VecX e(c);
  for (int p = 0; p < c; ++p) e[p] = active.normal[p].dot(gather(model, u, active.vertex[p]));
  const VecX a = active.schur.solve(e);
  for (int k = 0; k < 3; ++k) {
    VecX weights(c);
    for (int p = 0; p < c; ++p) weights[p] = a[p] * active.normal[p][k];
    u.segment(k * nf, nf).noalias() -= active.columns * weights;
  }
  // the subtraction leaves rounding along the normals: remove it, so iterates stay exactly on the planes
  pdProjectOnActiveSet(model, active, u);
  return u;
}

void pdProjectOnActiveSet(const PdModel& model, const PdActiveSet& active, VecX& g) {
  for (int first = 0; first < active.size();) {
    const int last = pairsEnd(active, first), i = active.vertex[first];
    const Eigen::Matrix3Xd N = normals(active, first, last);
    const Vec3 gi = gather(model, g, i);
    const Eigen::VectorXd a = (N.transpose() * N).ldlt().solve(N.transpose() * gi);
    scatter(model, gi - N * a, i, g);
    first = last;
  }
}

void pdPlaceOnPlanes(const PdModel& model, const PdActiveSet& active, VecX& xf) {
  for (int first = 0; first < active.size();) {
    const int last = pairsEnd(active, first), i = active.vertex[first];
    const Eigen::Matrix3Xd N = normals(active, first, last);
    Eigen::VectorXd offsets(last - first);
    for (int p = first; p < last; ++p) offsets[p - first] = active.offset[p];
    const Vec3 xi = gather(model, xf, i);
    const Eigen::VectorXd a = (N.transpose() * N).ldlt().solve(offsets - N.transpose() * xi);
    scatter(model, xi + N * a, i, xf);
    first = last;
  }
}

VecX pdActiveForces(const PdModel& model, const PdActiveSet& active, const VecX& g) {
  VecX forces(active.size());
  for (int first = 0; first < active.size();) {
    const int last = pairsEnd(active, first);
    const Eigen::Matrix3Xd N = normals(active, first, last);
    forces.segment(first, last - first) =
        (N.transpose() * N).ldlt().solve(N.transpose() * gather(model, g, active.vertex[first]));
    first = last;
  }
  return forces;
}

Eigen::SparseMatrix<double> pdConstrainedMatrix(const PdModel& model, const PdActiveSet& active,
                                                const Eigen::SparseMatrix<double>& H) {
  const int nf = model.free_count;
  std::vector<Mat3> block(model.n, Mat3::Identity());  // each free vertex's 3 x 3 block of P
  for (int first = 0; first < active.size();) {
    const int last = pairsEnd(active, first);
    const Eigen::Matrix3Xd N = normals(active, first, last);
    block[active.vertex[first]] -= N * (N.transpose() * N).ldlt().solve(N.transpose());
    first = last;
  }
  std::vector<Eigen::Triplet<double>> p, rest;
  for (int i = 0; i < model.n; ++i) {
    const int r = model.free_index[i];
    if (r < 0) continue;
    const Mat3 complement = Mat3::Identity() - block[i];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        if (block[i](a, b) != 0.0) p.emplace_back(a * nf + r, b * nf + r, block[i](a, b));
        if (complement(a, b) != 0.0) rest.emplace_back(a * nf + r, b * nf + r, complement(a, b));
      }
  }
  Eigen::SparseMatrix<double> P(3 * nf, 3 * nf), R(3 * nf, 3 * nf);
  P.setFromTriplets(p.begin(), p.end());
  R.setFromTriplets(rest.begin(), rest.end());
  Eigen::SparseMatrix<double> K = P * H * P;
  K += R;
  return K;
}

PdActiveSet pdNextActiveSet(const PdModel& model, const PdActiveSet& active, const VecX& forces, const Points& q,
                            const Points& v, const Points& x, double force_tolerance) {
  const int obstacles = model.obstacleCount();
  std::vector<std::pair<int, int>> pairs;  // (vertex, index): index p >= 0 a kept pair, -1 - o a new one on o
  std::vector<char> held(static_cast<std::size_t>(model.n) * obstacles, 0);  // (vertex, obstacle) in the set
  for (int p = 0; p < active.size(); ++p) {
    held[static_cast<std::size_t>(active.vertex[p]) * obstacles + active.obstacle[p]] = 1;
    if (forces[p] >= -force_tolerance) pairs.emplace_back(active.vertex[p], p);
  }
  for (int i = 0; i < model.n; ++i) {
    if (!model.surface[i] || model.free_index[i] < 0) continue;
    for (int o = 0; o < obstacles; ++o)
      if (!held[static_cast<std::size_t>(i) * obstacles + o] &&
          pdAdvancedDistance(model, o, x.row(i).transpose()) < -kContactGap)
        pairs.emplace_back(i, -1 - o);
  }
  auto obstacle = [&](const std::pair<int, int>& e) {
    return e.second >= 0 ? active.obstacle[e.second] : -1 - e.second;
  };
  std::sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : obstacle(a) < obstacle(b);
  });
  PdActiveSet next;
  for (const auto& [i, index] : pairs) {
    if (index >= 0) {
      pushPair(i, active.obstacle[index], active.normal[index], active.offset[index], next);
      continue;
    }
    Vec3 normal;  // a new pair: its plane from the start
    double offset;
    pdHoldingPlane(model, -1 - index, q.row(i).transpose(), v.row(i).transpose(), &normal, &offset);
    pushPair(i, -1 - index, normal, offset, next);
  }
  return next;
}

int pdUpdateActiveSet(const PdModel& model, PdData& data, const VecX& forces, const Points& x,
                      double force_tolerance, std::vector<std::vector<int>>& seen) {
  auto code = [&](const PdActiveSet& s) {
    std::vector<int> out;
    for (int p = 0; p < s.size(); ++p) out.push_back(s.vertex[p] * model.obstacleCount() + s.obstacle[p]);
    return out;
  };
  auto same = [](const PdActiveSet& a, const PdActiveSet& b) {
    return a.vertex == b.vertex && a.obstacle == b.obstacle;
  };
  if (seen.empty()) seen.push_back(code(data.active));
  PdActiveSet next = pdNextActiveSet(model, data.active, forces, data.q, data.v, x, force_tolerance);
  if (same(next, data.active)) return 0;
  if (std::find(seen.begin(), seen.end(), code(next)) != seen.end()) {
    // a cycle: add the new pairs and remove none, or if that changes nothing, remove only the most pulling pair
    next = pdNextActiveSet(model, data.active, VecX::Zero(forces.size()), data.q, data.v, x, force_tolerance);
    if (same(next, data.active) && forces.size()) {
      int worst = 0;
      forces.minCoeff(&worst);
      next.vertex.erase(next.vertex.begin() + worst);
      next.obstacle.erase(next.obstacle.begin() + worst);
      next.normal.erase(next.normal.begin() + worst);
      next.offset.erase(next.offset.begin() + worst);
    }
    if (std::find(seen.begin(), seen.end(), code(next)) != seen.end()) return -1;
  }
  seen.push_back(code(next));
  data.active = next;
  return 1;
}

void pdStartForceCotangents(const PdModel& model, PdData& data, const VecX& per_lambda, Points& gq, Points& gv,
                            Points& gf, VecX& gE, VecX& gnu) {
  // lambda = n . grad g_i(q): W (n x 3) carries dL/dlambda n to each vertex, dL/d(grad g(q)) = W
  Points W = Points::Zero(model.n, 3);
  bool any = false;
  for (std::size_t c = 0; c < data.friction.vertex.size(); ++c) {
    if (data.friction.penalty[c] || per_lambda[c] == 0.0) continue;
    W.row(data.friction.vertex[c]) += per_lambda[c] * data.friction.normal[c].transpose();
    any = true;
  }
  if (any) pdStartGradientCotangents(model, data, W, gq, gv, gf, gE, gnu);
}

void pdStartGradientCotangents(const PdModel& model, PdData& data, const Points& W, Points& gq, Points& gv,
                               Points& gf, VecX& gE, VecX& gnu) {
  // grad g_i(q) = (M (q - y) / dt^2 + grad E(q))_i, with M (q - y) / dt^2 = -M v / dt - M g - f
  const double h = model.dt;
  for (int i = 0; i < model.n; ++i) {
    gv.row(i) -= model.mass[i] / h * W.row(i);
    gf.row(i) -= W.row(i);
  }
  // the density scales the masses: d(M (q - y) / dt^2) / d rho = (M (q - y) / dt^2 + f) / rho
  for (std::size_t k = 0; k < model.bodies.size(); ++k) {
    const PdBody& body = model.bodies[k];
    for (int i = body.first_vertex; i < body.first_vertex + body.vertex_count; ++i)
      data.grad_density[k] += W.row(i).dot(model.mass[i] / (h * h) * (data.q.row(i) - data.y.row(i)) +
                                           data.f.row(i)) / body.density;
  }
  // grad E(q): hess E(q) W to q, and -(-W)^T d(grad E)/d(theta) to the parameters
  // (only the elements on a contact vertex: W vanishes elsewhere, and so do the other blocks' products)
  std::vector<char> near(model.elementCount(), 0);
  for (int e = 0; e < model.elementCount(); ++e) {
    const PdSample& s = model.samples[model.element_start[e]];
    for (int a = 0; a < s.count && !near[e]; ++a) near[e] = W.row(s.nodes[a]).squaredNorm() > 0.0;
  }
  pdHessianBuild(model, data.q, data.start_hessian, &near);
  Points HW;
  pdHessianProduct(model, data.start_hessian, W, HW);
  gq += HW;
  pdAddForceCotangents(model, data, data.q, -W, gE, gnu);
}

}  // namespace deformable
}  // namespace rigidiff

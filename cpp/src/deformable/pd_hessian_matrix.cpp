// The Hessian of a projective step's incremental potential on the free vertices, assembled into a sparse
// matrix (pd_step.hpp) for the Newton-Cholesky baseline and its direct adjoint. Rows and columns are stacked
// by coordinate, as pdSolve's vectors: coordinate c of free vertex r at c * free_count + r.
#include "rigidiff/deformable/pd_step.hpp"

namespace rigidiff {
namespace deformable {

Eigen::SparseMatrix<double> pdHessianMatrix(const PdModel& model, const PdData& data, const PdHessian& hessian) {
  const int nf = model.free_count;
  const double h2 = model.dt * model.dt;
  std::vector<Eigen::Triplet<double>> entries;
  auto add = [&](int i, int r, int j, int c, double value) {
    const int fi = model.free_index[i], fj = model.free_index[j];
    if (fi >= 0 && fj >= 0 && value != 0.0) entries.emplace_back(r * nf + fi, c * nf + fj, value);
  };
  for (int i = 0; i < model.n; ++i)
    for (int r = 0; r < 3; ++r) add(i, r, i, r, model.mass[i] / h2);
  for (int e = 0; e < model.elementCount(); ++e) {
    const PdSample& s = model.samples[model.element_start[e]];
    const double* H = hessian.blocks.data() + static_cast<std::size_t>(e) * kElementBlock * kElementBlock;
    for (int b = 0; b < s.count; ++b)
      for (int c = 0; c < 3; ++c)
        for (int a = 0; a < s.count; ++a)
          for (int r = 0; r < 3; ++r) add(s.nodes[a], r, s.nodes[b], c, H[(3 * b + c) * kElementBlock + 3 * a + r]);
  }
  std::vector<std::pair<int, Mat3>> vertex_blocks;
  model.forEachPenetration(hessian.x, [&](int i, int, double d, const Vec3& n, double curvature) {
    const Mat3 nn = n * n.transpose();
    vertex_blocks.emplace_back(i, model.contact_stiffness * (nn + d * curvature * (Mat3::Identity() - nn)));
  });
  pdFrictionHessianBlocks(model, data, hessian.x, vertex_blocks);
  for (const auto& [i, B] : vertex_blocks)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) add(i, r, i, c, B(r, c));
  Eigen::SparseMatrix<double> out(3 * nf, 3 * nf);
  out.setFromTriplets(entries.begin(), entries.end());
  return out;
}

}  // namespace deformable
}  // namespace rigidiff

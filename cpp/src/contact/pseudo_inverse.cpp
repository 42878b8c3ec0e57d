#include "rigidiff/contact/pseudo_inverse.hpp"

namespace rigidiff {
namespace contact {

void computeCod(Eigen::CompleteOrthogonalDecomposition<MatX>& cod, const Eigen::Ref<const MatX>& A) { cod.compute(A); }

}  // namespace contact
}  // namespace rigidiff

#include "rigidiff/bind/api.hpp"
#include "rigidiff/linalg/dense_product.hpp"

namespace rigidiff {
namespace bind {

void linalgDenseProduct(int m, int k, int n, const double* A, const double* B, double* C, bool accumulate,
                        bool transposed_a) {
  const MatX a = transposed_a ? MatX(Eigen::Map<const MatX>(A, k, m)) : MatX(Eigen::Map<const MatX>(A, m, k));
  const MatX b = Eigen::Map<const MatX>(B, k, n);
  MatX c = Eigen::Map<MatX>(C, m, n);
  if (transposed_a) {
    MatX product;
    denseProductTransposedA(a, b, product);
    c = accumulate ? MatX(c + product) : product;
  } else {
    denseProduct(a, b, Ref<MatX>(c), accumulate);
  }
  Eigen::Map<MatX>(C, m, n) = c;
}

bool linalgUsesAvx2() { return denseProductUsesAvx2(); }

}  // namespace bind
}  // namespace rigidiff

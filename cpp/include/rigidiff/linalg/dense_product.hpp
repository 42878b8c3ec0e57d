// Dense matrix products of the derivative code (tens of rows and columns: the clamping system, the
// constrained response times the residual's derivatives). The build targets baseline x86-64 (SSE2) so
// that it runs anywhere; on a CPU with AVX2 and FMA these products take a kernel chosen at run time,
// which does four times the arithmetic per instruction. Elsewhere, or with the environment variable
// RIGIDIFF_DENSE_KERNEL=eigen, they are Eigen's.
#pragma once

#include "rigidiff/fwd.hpp"

namespace rigidiff {

/// C = A B, or C += A B with accumulate. C must be A.rows() x B.cols() (any column-major storage: a
/// matrix, a map, a block of whole columns).
void denseProduct(const Ref<const MatX>& A, const Ref<const MatX>& B, Ref<MatX> C, bool accumulate = false);

/// C = A B into a matrix resized to fit.
inline void denseProduct(const Ref<const MatX>& A, const Ref<const MatX>& B, MatX& C) {
  C.resize(A.rows(), B.cols());
  denseProduct(A, B, Ref<MatX>(C), false);
}

/// C = A^T B into a matrix resized to fit.
void denseProductTransposedA(const Ref<const MatX>& A, const Ref<const MatX>& B, MatX& C);

/// Whether denseProduct runs the AVX2/FMA kernel on this CPU.
bool denseProductUsesAvx2();

}  // namespace rigidiff

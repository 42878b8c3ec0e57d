#include "rigidiff/linalg/dense_product.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define RIGIDIFF_AVX2_KERNEL 1
#include <immintrin.h>
#endif

namespace rigidiff {

namespace {

#ifdef RIGIDIFF_AVX2_KERNEL
// C (m x n) = or += A (m x k) B (k x n), all column-major with leading dimensions lda, ldb, ldc.
// Tiles of 8 x 4 of C stay in eight registers over the whole k loop; rows left over take tiles of 4
// and then single rows, columns left over one column at a time. The sum over k runs in the same order
// for every entry (p = 0, 1, ...), one fused multiply-add per term.
__attribute__((target("avx2,fma"))) void gemmAvx2(int m, int n, int k, const double* A, int lda, const double* B,
                                                  int ldb, double* C, int ldc, bool accumulate) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const double* b0 = B + static_cast<long>(j) * ldb;
    const double* b1 = b0 + ldb;
    const double* b2 = b1 + ldb;
    const double* b3 = b2 + ldb;
    double* c0 = C + static_cast<long>(j) * ldc;
    double* c1 = c0 + ldc;
    double* c2 = c1 + ldc;
    double* c3 = c2 + ldc;
    int i = 0;
    for (; i + 8 <= m; i += 8) {
      __m256d x00, x01, x10, x11, x20, x21, x30, x31;
      if (accumulate) {
        x00 = _mm256_loadu_pd(c0 + i), x01 = _mm256_loadu_pd(c0 + i + 4);
        x10 = _mm256_loadu_pd(c1 + i), x11 = _mm256_loadu_pd(c1 + i + 4);
        x20 = _mm256_loadu_pd(c2 + i), x21 = _mm256_loadu_pd(c2 + i + 4);
        x30 = _mm256_loadu_pd(c3 + i), x31 = _mm256_loadu_pd(c3 + i + 4);
      } else {
        x00 = x01 = x10 = x11 = x20 = x21 = x30 = x31 = _mm256_setzero_pd();
      }
      const double* a = A + i;
      for (int p = 0; p < k; ++p, a += lda) {
        const __m256d a0 = _mm256_loadu_pd(a), a1 = _mm256_loadu_pd(a + 4);
        __m256d b = _mm256_broadcast_sd(b0 + p);
        x00 = _mm256_fmadd_pd(a0, b, x00), x01 = _mm256_fmadd_pd(a1, b, x01);
        b = _mm256_broadcast_sd(b1 + p);
        x10 = _mm256_fmadd_pd(a0, b, x10), x11 = _mm256_fmadd_pd(a1, b, x11);
        b = _mm256_broadcast_sd(b2 + p);
        x20 = _mm256_fmadd_pd(a0, b, x20), x21 = _mm256_fmadd_pd(a1, b, x21);
        b = _mm256_broadcast_sd(b3 + p);
        x30 = _mm256_fmadd_pd(a0, b, x30), x31 = _mm256_fmadd_pd(a1, b, x31);
      }
      _mm256_storeu_pd(c0 + i, x00), _mm256_storeu_pd(c0 + i + 4, x01);
      _mm256_storeu_pd(c1 + i, x10), _mm256_storeu_pd(c1 + i + 4, x11);
      _mm256_storeu_pd(c2 + i, x20), _mm256_storeu_pd(c2 + i + 4, x21);
      _mm256_storeu_pd(c3 + i, x30), _mm256_storeu_pd(c3 + i + 4, x31);
    }
    for (; i + 4 <= m; i += 4) {
      __m256d x0, x1, x2, x3;
      if (accumulate) {
        x0 = _mm256_loadu_pd(c0 + i), x1 = _mm256_loadu_pd(c1 + i);
        x2 = _mm256_loadu_pd(c2 + i), x3 = _mm256_loadu_pd(c3 + i);
      } else {
        x0 = x1 = x2 = x3 = _mm256_setzero_pd();
      }
      const double* a = A + i;
      for (int p = 0; p < k; ++p, a += lda) {
        const __m256d a0 = _mm256_loadu_pd(a);
        x0 = _mm256_fmadd_pd(a0, _mm256_broadcast_sd(b0 + p), x0);
        x1 = _mm256_fmadd_pd(a0, _mm256_broadcast_sd(b1 + p), x1);
        x2 = _mm256_fmadd_pd(a0, _mm256_broadcast_sd(b2 + p), x2);
        x3 = _mm256_fmadd_pd(a0, _mm256_broadcast_sd(b3 + p), x3);
      }
      _mm256_storeu_pd(c0 + i, x0), _mm256_storeu_pd(c1 + i, x1);
      _mm256_storeu_pd(c2 + i, x2), _mm256_storeu_pd(c3 + i, x3);
    }
    for (; i < m; ++i) {
      double s0 = accumulate ? c0[i] : 0.0, s1 = accumulate ? c1[i] : 0.0;
      double s2 = accumulate ? c2[i] : 0.0, s3 = accumulate ? c3[i] : 0.0;
      const double* a = A + i;
      for (int p = 0; p < k; ++p, a += lda) {
        s0 = std::fma(*a, b0[p], s0), s1 = std::fma(*a, b1[p], s1);
        s2 = std::fma(*a, b2[p], s2), s3 = std::fma(*a, b3[p], s3);
      }
      c0[i] = s0, c1[i] = s1, c2[i] = s2, c3[i] = s3;
    }
  }
  for (; j < n; ++j) {
    const double* b0 = B + static_cast<long>(j) * ldb;
    double* c0 = C + static_cast<long>(j) * ldc;
    int i = 0;
    for (; i + 4 <= m; i += 4) {
      __m256d x0 = accumulate ? _mm256_loadu_pd(c0 + i) : _mm256_setzero_pd();
      const double* a = A + i;
      for (int p = 0; p < k; ++p, a += lda) x0 = _mm256_fmadd_pd(_mm256_loadu_pd(a), _mm256_broadcast_sd(b0 + p), x0);
      _mm256_storeu_pd(c0 + i, x0);
    }
    for (; i < m; ++i) {
      double s0 = accumulate ? c0[i] : 0.0;
      const double* a = A + i;
      for (int p = 0; p < k; ++p, a += lda) s0 = std::fma(*a, b0[p], s0);
      c0[i] = s0;
    }
  }
}

bool cpuHasAvx2Fma() {
  static const bool has = [] {
    const char* choice = std::getenv("RIGIDIFF_DENSE_KERNEL");  // "eigen": the portable path, for tests
    if (choice && std::strcmp(choice, "eigen") == 0) return false;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}
#endif

}  // namespace

bool denseProductUsesAvx2() {
#ifdef RIGIDIFF_AVX2_KERNEL
  return cpuHasAvx2Fma();
#else
  return false;
#endif
}

void denseProduct(const Ref<const MatX>& A, const Ref<const MatX>& B, Ref<MatX> C, bool accumulate) {
  eigen_assert(A.cols() == B.rows() && C.rows() == A.rows() && C.cols() == B.cols());
#ifdef RIGIDIFF_AVX2_KERNEL
  if (cpuHasAvx2Fma()) {
    if (A.cols() == 0) {
      if (!accumulate) C.setZero();
      return;
    }
    gemmAvx2(static_cast<int>(A.rows()), static_cast<int>(B.cols()), static_cast<int>(A.cols()), A.data(),
             static_cast<int>(A.outerStride()), B.data(), static_cast<int>(B.outerStride()), C.data(),
             static_cast<int>(C.outerStride()), accumulate);
    return;
  }
#endif
  if (accumulate)
    C.noalias() += A * B;
  else
    C.noalias() = A * B;
}

void denseProductTransposedA(const Ref<const MatX>& A, const Ref<const MatX>& B, MatX& C) {
  C.resize(A.cols(), B.cols());
#ifdef RIGIDIFF_AVX2_KERNEL
  if (cpuHasAvx2Fma()) {
    thread_local MatX At;
    At = A.transpose();  // small: the kernel streams the columns of its left factor
    denseProduct(At, B, Ref<MatX>(C), false);
    return;
  }
#endif
  C.noalias() = A.transpose() * B;
}

}  // namespace rigidiff

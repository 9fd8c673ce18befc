/* cholesky: in-place A = L*L^T (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include <math.h>
#include "harness.h"
#ifdef LARGE_DATASET
#define N 2000
#else
#define N 400
#endif

/* symmetric and diagonally dominant, hence positive definite: no products, so every compiler
   builds the same input bits */
static void init(int n, double A[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[i][j] = i == j ? n : 1.0 / (i + j + 1);
}

static void kernel_cholesky(int n, double A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (int k = 0; k < i; k++) A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
}

int main(void) {
  double(*A)[N] = bench_alloc(sizeof(double[N][N]));
  BENCH(init(N, A), kernel_cholesky(N, A), bench_digest(A, sizeof(double[N][N])));
  return 0;
}

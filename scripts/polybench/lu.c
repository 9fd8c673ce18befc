/* lu: in-place LU decomposition without pivoting (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define N 2000
#else
#define N 400
#endif

static void init(int n, double A[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[i][j] = i == j ? n : 1.0 / (i + 2 * j + 1);
}

static void kernel_lu(int n, double A[N][N]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    for (int j = i; j < n; j++)
      for (int k = 0; k < i; k++) A[i][j] -= A[i][k] * A[k][j];
  }
}

int main(void) {
  double(*A)[N] = bench_alloc(sizeof(double[N][N]));
  BENCH(init(N, A), kernel_lu(N, A), bench_digest(A, sizeof(double[N][N])));
  return 0;
}

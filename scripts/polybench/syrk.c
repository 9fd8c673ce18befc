/* syrk: C = alpha*A*A^T + beta*C, lower triangle (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define M 1000
#define N 1200
#else
#define M 200
#define N 240
#endif

static void init(int n, int m, double C[N][N], double A[N][M]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) A[i][j] = (double)((i * j + 1) % n) / n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[i][j] = (double)((i * j + 2) % m) / m;
}

static void kernel_syrk(int n, int m, double alpha, double beta, double C[N][N], double A[N][M]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

int main(void) {
  double(*C)[N] = bench_alloc(sizeof(double[N][N]));
  double(*A)[M] = bench_alloc(sizeof(double[N][M]));
  BENCH(init(N, M, C, A), kernel_syrk(N, M, 1.5, 1.2, C, A), bench_digest(C, sizeof(double[N][N])));
  return 0;
}

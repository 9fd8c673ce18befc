/* syr2k: C = alpha*(A*B^T + B*A^T) + beta*C, lower triangle (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define M 1000
#define N 1200
#else
#define M 200
#define N 240
#endif

static void init(int n, int m, double C[N][N], double A[N][M], double B[N][M]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % m) / m;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) C[i][j] = (double)((i * j + 3) % n) / m;
}

static void kernel_syr2k(int n, int m, double alpha, double beta, double C[N][N], double A[N][M],
                         double B[N][M]) {
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

int main(void) {
  double(*C)[N] = bench_alloc(sizeof(double[N][N]));
  double(*A)[M] = bench_alloc(sizeof(double[N][M]));
  double(*B)[M] = bench_alloc(sizeof(double[N][M]));
  BENCH(init(N, M, C, A, B), kernel_syr2k(N, M, 1.5, 1.2, C, A, B),
        bench_digest(C, sizeof(double[N][N])));
  return 0;
}

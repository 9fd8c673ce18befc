/* symm: C = alpha*A*B + beta*C, A symmetric in its lower triangle (PolyBench 4.2.1's shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define M 1000
#define N 1200
#else
#define M 200
#define N 240
#endif

static void init(int m, int n, double C[M][N], double A[M][M], double B[M][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = (double)((i + j) % 100) / m;
      B[i][j] = (double)((n + i - j) % 100) / m;
    }
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) A[i][j] = j <= i ? (double)((i + j) % 100) / m : -999;
}

static void kernel_symm(int m, int n, double alpha, double beta, double C[M][N], double A[M][M],
                        double B[M][N]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}

int main(void) {
  double(*C)[N] = bench_alloc(sizeof(double[M][N]));
  double(*A)[M] = bench_alloc(sizeof(double[M][M]));
  double(*B)[N] = bench_alloc(sizeof(double[M][N]));
  BENCH(init(M, N, C, A, B), kernel_symm(M, N, 1.5, 1.2, C, A, B),
        bench_digest(C, sizeof(double[M][N])));
  return 0;
}

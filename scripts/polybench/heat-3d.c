/* heat-3d: Jacobi-style 3-D heat equation, A and B alternating (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define TSTEPS 500
#define N 120
#else
#define TSTEPS 100
#define N 40
#endif

static void init(int n, double A[N][N][N], double B[N][N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) A[i][j][k] = B[i][j][k] = (double)(i + j + (n - k)) * 10 / n;
}

static void kernel_heat_3d(int tsteps, int n, double A[N][N][N], double B[N][N][N]) {
  for (int t = 1; t <= tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k]) +
                       0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k]) +
                       0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1]) + A[i][j][k];
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k]) +
                       0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k]) +
                       0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1]) + B[i][j][k];
  }
}

int main(void) {
  double(*A)[N][N] = bench_alloc(sizeof(double[N][N][N]));
  double(*B)[N][N] = bench_alloc(sizeof(double[N][N][N]));
  BENCH(init(N, A, B), kernel_heat_3d(TSTEPS, N, A, B), bench_digest(A, sizeof(double[N][N][N])));
  return 0;
}

/* jacobi-2d: 5-point Jacobi sweeps, A and B alternating (PolyBench 4.2.1's loop shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define TSTEPS 500
#define N 1300
#else
#define TSTEPS 100
#define N 250
#endif

static void init(int n, double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((double)i * (j + 2) + 2) / n;
      B[i][j] = ((double)i * (j + 3) + 3) / n;
    }
}

static void kernel_jacobi_2d(int tsteps, int n, double A[N][N], double B[N][N]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
}

int main(void) {
  double(*A)[N] = bench_alloc(sizeof(double[N][N]));
  double(*B)[N] = bench_alloc(sizeof(double[N][N]));
  BENCH(init(N, A, B), kernel_jacobi_2d(TSTEPS, N, A, B), bench_digest(A, sizeof(double[N][N])));
  return 0;
}

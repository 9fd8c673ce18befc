/* covariance of the columns of data (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include "harness.h"
#ifdef LARGE_DATASET
#define M 1200
#define N 1400
#else
#define M 240
#define N 260
#endif

static void init(int m, int n, double data[N][M]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i][j] = (double)(i * j) / M;
}

static void kernel_covariance(int m, int n, double float_n, double data[N][M], double cov[M][M],
                              double mean[M]) {
  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++) mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) data[i][j] -= mean[j];
  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      cov[i][j] = 0.0;
      for (int k = 0; k < n; k++) cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
}

int main(void) {
  double(*data)[M] = bench_alloc(sizeof(double[N][M]));
  double(*cov)[M] = bench_alloc(sizeof(double[M][M]));
  double *mean = bench_alloc(sizeof(double[M]));
  BENCH(init(M, N, data), kernel_covariance(M, N, N, data, cov, mean),
        bench_digest(cov, sizeof(double[M][M])));
  return 0;
}

/* correlation of the columns of data (PolyBench 4.2.1's loop shape, written for this benchmark) */
#include <math.h>
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
    for (int j = 0; j < m; j++) data[i][j] = (double)(i * j) / M + i;
}

static void kernel_correlation(int m, int n, double float_n, double data[N][M], double corr[M][M],
                               double mean[M], double stddev[M]) {
  double eps = 0.1;
  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++) mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (int j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (int i = 0; i < n; i++) stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }
  for (int i = 0; i < m - 1; i++) {
    corr[i][i] = 1.0;
    for (int j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (int k = 0; k < n; k++) corr[i][j] += data[k][i] * data[k][j];
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = 1.0;
}

int main(void) {
  double(*data)[M] = bench_alloc(sizeof(double[N][M]));
  double(*corr)[M] = bench_alloc(sizeof(double[M][M]));
  double *mean = bench_alloc(sizeof(double[M]));
  double *stddev = bench_alloc(sizeof(double[M]));
  BENCH(init(M, N, data), kernel_correlation(M, N, N, data, corr, mean, stddev),
        bench_digest(corr, sizeof(double[M][M])));
  return 0;
}

/* gemver: A += u1*v1^T + u2*v2^T; x += beta*A^T*y + z; w += alpha*A*x (PolyBench 4.2.1's shape) */
#include "harness.h"
#ifdef LARGE_DATASET
#define N 2000
#else
#define N 400
#endif

static void init(int n, double A[N][N], double u1[N], double v1[N], double u2[N], double v2[N],
                 double w[N], double x[N], double y[N], double z[N]) {
  double fn = n;
  for (int i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (int j = 0; j < n; j++) A[i][j] = (double)(i * j % n) / n;
  }
}

static void kernel_gemver(int n, double alpha, double beta, double A[N][N], double u1[N],
                          double v1[N], double u2[N], double v2[N], double w[N], double x[N],
                          double y[N], double z[N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) x[i] = x[i] + beta * A[j][i] * y[j];
  for (int i = 0; i < n; i++) x[i] = x[i] + z[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) w[i] = w[i] + alpha * A[i][j] * x[j];
}

int main(void) {
  double(*A)[N] = bench_alloc(sizeof(double[N][N]));
  double *v[8];
  for (int i = 0; i < 8; i++) v[i] = bench_alloc(sizeof(double[N]));
  BENCH(init(N, A, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]),
        kernel_gemver(N, 1.5, 1.2, A, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]),
        (bench_digest(A, sizeof(double[N][N])), bench_digest(v[4], sizeof(double[N])),
         bench_digest(v[5], sizeof(double[N]))));
  return 0;
}

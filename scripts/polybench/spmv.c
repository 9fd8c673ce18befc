/* spmv: y = A*x with A in compressed sparse rows. Not a PolyBench kernel: the one program here
   whose loads mix types (int row bounds and column indices, double values), where type-based
   alias tags let LLVM keep a row bound in a register across the double stores. */
#include "harness.h"
#ifdef LARGE_DATASET
#define N 400000
#else
#define N 40000
#endif
#define PER_ROW 24

static void init(int n, int rowptr[N + 1], int col[N * PER_ROW], double val[N * PER_ROW],
                 double x[N]) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    rowptr[i] = k;
    int count = 1 + (i * 7) % PER_ROW; /* ragged rows */
    for (int j = 0; j < count; j++, k++) {
      col[k] = (i + j * 97 - PER_ROW * 48 + n) % n;
      val[k] = (double)((i + 3 * j) % 17) / 17;
    }
    x[i] = (double)(i % 11) / 11;
  }
  rowptr[n] = k;
}

static void kernel_spmv(int n, const int rowptr[N + 1], const int col[N * PER_ROW],
                        const double val[N * PER_ROW], const double x[N], double y[N]) {
  for (int i = 0; i < n; i++) {
    y[i] = 0.0;
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++) y[i] += val[k] * x[col[k]];
  }
}

int main(void) {
  int *rowptr = bench_alloc(sizeof(int[N + 1]));
  int *col = bench_alloc(sizeof(int[N * PER_ROW]));
  double *val = bench_alloc(sizeof(double[N * PER_ROW]));
  double *x = bench_alloc(sizeof(double[N]));
  double *y = bench_alloc(sizeof(double[N]));
  BENCH(init(N, rowptr, col, val, x), kernel_spmv(N, rowptr, col, val, x, y),
        bench_digest(y, sizeof(double[N])));
  return 0;
}

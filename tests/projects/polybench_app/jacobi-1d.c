/* jacobi-1d, PolyBench style (build with -DDATA_TYPE_IS_FLOAT for the float variant). */
#include "pbmini.h"

#ifndef TSTEPS
#define TSTEPS 25
#endif
#ifndef N
#define N 101
#endif
#define _PB_TSTEPS tsteps
#define _PB_N n

static void init_array(int n, DATA_TYPE POLYBENCH_1D(A, N, n), DATA_TYPE POLYBENCH_1D(B, N, n))
{
  int i;

  for (i = 0; i < n; i++) {
    A[i] = ((DATA_TYPE)i + 2) / n;
    B[i] = ((DATA_TYPE)i + 3) / n;
  }
}

static void print_array(int n, DATA_TYPE POLYBENCH_1D(A, N, n))
{
  int i;

  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < n; i++) {
    POLYBENCH_DUMP_ELEM(A[i]);
    if (i % 10 == 9)
      POLYBENCH_DUMP_EOL();
  }
  POLYBENCH_DUMP_EOL();
  POLYBENCH_DUMP_END("A");
}

static void kernel_jacobi_1d(int tsteps, int n, DATA_TYPE POLYBENCH_1D(A, N, n),
                             DATA_TYPE POLYBENCH_1D(B, N, n))
{
  int t, i;

#pragma scop
  for (t = 0; t < _PB_TSTEPS; t++) {
    for (i = 1; i < _PB_N - 1; i++)
      B[i] = SCALAR_VAL(0.33333) * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < _PB_N - 1; i++)
      A[i] = SCALAR_VAL(0.33333) * (B[i - 1] + B[i] + B[i + 1]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  int n = N;
  int tsteps = TSTEPS;
  POLYBENCH_1D_ARRAY_DECL(A, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(B, DATA_TYPE, N, n);

  (void)argc;
  (void)argv;
  init_array(n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  kernel_jacobi_1d(tsteps, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));
  print_array(n, POLYBENCH_ARRAY(A));
  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(B);
  return 0;
}

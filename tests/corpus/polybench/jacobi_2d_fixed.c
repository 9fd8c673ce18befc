/* jacobi-2d, PolyBench shape, fixed-size arrays (size from the macro N).
 * Two sweeps per time step: A -> B, then B -> A, over 1..N-2, 5-point average. */
#ifndef N
#define N 40
#endif

void kernel_jacobi_2d(int tsteps, double A[N][N], double B[N][N])
{
  int t, i, j;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

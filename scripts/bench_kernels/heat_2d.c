/* heat-2d, two sweeps per time step (A -> B, then B -> A), in the shape of PolyBench 4.2's
 * heat-3d reduced to two dimensions (Pluto's heat-2d stencil), C99 VLA parameters, double.
 * Stencil: 5 points. Per point update: 10 flops as written (2 x (mul, sub, add, mul) + 2 add;
 * compilers may share the two 2.0 * A[i][j], which leaves 9).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: 2 * tsteps * (n - 2)^2. */
void kernel_heat_2d(int tsteps, int n, double A[n][n], double B[n][n])
{
  int t, i, j;

#pragma omp parallel private(t, i, j)
  for (t = 1; t <= tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.125 * (A[i + 1][j] - 2.0 * A[i][j] + A[i - 1][j])
                + 0.125 * (A[i][j + 1] - 2.0 * A[i][j] + A[i][j - 1])
                + A[i][j];
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.125 * (B[i + 1][j] - 2.0 * B[i][j] + B[i - 1][j])
                + 0.125 * (B[i][j + 1] - 2.0 * B[i][j] + B[i][j - 1])
                + B[i][j];
  }
}

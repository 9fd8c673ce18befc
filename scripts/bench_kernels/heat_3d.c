/* heat-3d (PolyBench 4.2 shape), C99 VLA parameters, double.
 * Stencil: 7 points. Per point update: 15 flops as written (3 x (mul, sub, add, mul) + 3 add;
 * compilers may share the three 2.0 * A[i][j][k], which leaves 13).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: 2 * tsteps * (n - 2)^3. */
void kernel_heat_3d(int tsteps, int n, double A[n][n][n], double B[n][n][n])
{
  int t, i, j, k;

#pragma omp parallel private(t, i, j, k)
  for (t = 1; t <= tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                     + A[i][j][k];
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                     + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                     + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                     + B[i][j][k];
  }
}

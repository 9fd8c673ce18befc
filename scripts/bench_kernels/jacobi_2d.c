/* jacobi-2d (PolyBench 4.2 shape), C99 VLA parameters, double.
 * Stencil: 5 points. Per point update: 5 flops (4 add, 1 mul as written).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: 2 * tsteps * (n - 2)^2. */
void kernel_jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n])
{
  int t, i, j;

#pragma omp parallel private(t, i, j)
  for (t = 0; t < tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

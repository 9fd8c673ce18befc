/* box-3d27: a 27-point 3-D box average, iterated (the two-sweep form of heat-3d: A -> B,
 * B -> A), C99 VLA parameters, double. Issue 19's 27-point 3-D box.
 * Stencil: 27 points. Per point update: 27 flops as written (26 add, 1 mul).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: 2 * tsteps * (n - 2)^3. */
void kernel_box_3d27(int tsteps, int n, double A[n][n][n], double B[n][n][n])
{
  int t, i, j, k;

#pragma omp parallel private(t, i, j, k)
  for (t = 1; t <= tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = 0.037 * (A[i - 1][j - 1][k - 1] + A[i - 1][j - 1][k] + A[i - 1][j - 1][k + 1]
                              + A[i - 1][j][k - 1] + A[i - 1][j][k] + A[i - 1][j][k + 1]
                              + A[i - 1][j + 1][k - 1] + A[i - 1][j + 1][k] + A[i - 1][j + 1][k + 1]
                              + A[i][j - 1][k - 1] + A[i][j - 1][k] + A[i][j - 1][k + 1]
                              + A[i][j][k - 1] + A[i][j][k] + A[i][j][k + 1]
                              + A[i][j + 1][k - 1] + A[i][j + 1][k] + A[i][j + 1][k + 1]
                              + A[i + 1][j - 1][k - 1] + A[i + 1][j - 1][k] + A[i + 1][j - 1][k + 1]
                              + A[i + 1][j][k - 1] + A[i + 1][j][k] + A[i + 1][j][k + 1]
                              + A[i + 1][j + 1][k - 1] + A[i + 1][j + 1][k] + A[i + 1][j + 1][k + 1]);
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = 0.037 * (B[i - 1][j - 1][k - 1] + B[i - 1][j - 1][k] + B[i - 1][j - 1][k + 1]
                              + B[i - 1][j][k - 1] + B[i - 1][j][k] + B[i - 1][j][k + 1]
                              + B[i - 1][j + 1][k - 1] + B[i - 1][j + 1][k] + B[i - 1][j + 1][k + 1]
                              + B[i][j - 1][k - 1] + B[i][j - 1][k] + B[i][j - 1][k + 1]
                              + B[i][j][k - 1] + B[i][j][k] + B[i][j][k + 1]
                              + B[i][j + 1][k - 1] + B[i][j + 1][k] + B[i][j + 1][k + 1]
                              + B[i + 1][j - 1][k - 1] + B[i + 1][j - 1][k] + B[i + 1][j - 1][k + 1]
                              + B[i + 1][j][k - 1] + B[i + 1][j][k] + B[i + 1][j][k + 1]
                              + B[i + 1][j + 1][k - 1] + B[i + 1][j + 1][k] + B[i + 1][j + 1][k + 1]);
  }
}

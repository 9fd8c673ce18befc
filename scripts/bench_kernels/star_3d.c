/* 3-D 7-point star stencil alternating between the two time planes of A (A[(t+1)%2] from
 * A[t%2]), C99 VLA parameter, double.
 * Stencil: 7 points. Per point update: 8 flops (6 add, 2 mul as written).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: tsteps * (n - 2)^3. */
void kernel_star_3d(int tsteps, int n, double A[2][n][n][n])
{
  int t, i, j, k;

#pragma omp parallel private(t, i, j, k)
  for (t = 0; t < tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[(t + 1) % 2][i][j][k] = 0.4 * A[t % 2][i][j][k]
                                  + 0.1 * (A[t % 2][i - 1][j][k] + A[t % 2][i + 1][j][k]
                                         + A[t % 2][i][j - 1][k] + A[t % 2][i][j + 1][k]
                                         + A[t % 2][i][j][k - 1] + A[t % 2][i][j][k + 1]);
  }
}

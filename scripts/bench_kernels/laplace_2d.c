/* 2-D 5-point stencil, one sweep (no time loop), out of place, C99 VLA parameters, double.
 * Stencil: 5 points. Per point update: 6 flops (4 add, 2 mul as written).
 * Bytes/point (compulsory, no write-allocate): 16.
 * Point updates per call: (n - 2) * (m - 2). */
void kernel_laplace_2d(int n, int m, const double in[n][m], double out[n][m])
{
  int i, j;

#pragma omp parallel for private(j)
  for (i = 1; i < n - 1; i++)
    for (j = 1; j < m - 1; j++)
      out[i][j] = 0.5 * in[i][j]
                + 0.125 * (in[i - 1][j] + in[i + 1][j] + in[i][j - 1] + in[i][j + 1]);
}

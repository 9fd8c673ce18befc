/* 3-D 7-point star stencil alternating between the two planes of A (see star_3d_fixed.c),
 * C99 VLA parameter. */
void kernel_star_3d_vla(int tsteps, int n, double A[2][n][n][n])
{
  int t, i, j, k;

  for (t = 0; t < tsteps; t++)
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[(t + 1) % 2][i][j][k] = 0.4 * A[t % 2][i][j][k]
                                  + 0.1 * (A[t % 2][i - 1][j][k] + A[t % 2][i + 1][j][k]
                                         + A[t % 2][i][j - 1][k] + A[t % 2][i][j + 1][k]
                                         + A[t % 2][i][j][k - 1] + A[t % 2][i][j][k + 1]);
}

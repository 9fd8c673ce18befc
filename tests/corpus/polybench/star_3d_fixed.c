/* 3-D 7-point star stencil over one array holding two time planes: step t reads plane t%2
 * and writes plane (t+1)%2 (interior points only; borders of both planes are never
 * written).  After tsteps steps the newest values are in plane tsteps%2.
 * Fixed-size form, size from the macro N. */
#ifndef N
#define N 17
#endif

void kernel_star_3d(int tsteps, double A[2][N][N][N])
{
  int t, i, j, k;

  for (t = 0; t < tsteps; t++)
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < N - 1; j++)
        for (k = 1; k < N - 1; k++)
          A[(t + 1) % 2][i][j][k] = 0.4 * A[t % 2][i][j][k]
                                  + 0.1 * (A[t % 2][i - 1][j][k] + A[t % 2][i + 1][j][k]
                                         + A[t % 2][i][j - 1][k] + A[t % 2][i][j + 1][k]
                                         + A[t % 2][i][j][k - 1] + A[t % 2][i][j][k + 1]);
}

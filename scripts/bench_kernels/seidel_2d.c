/* seidel-2d (PolyBench 4.2 shape), C99 VLA parameter, double, in place (Gauss-Seidel:
 * every point reads its already updated west and north neighbours, so no loop of the
 * nest is parallel as written; there is no OpenMP annotation).
 * Stencil: 9 points. Per point update: 9 flops (8 add, 1 div as written).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16 (read and write A).
 * Point updates per call: tsteps * (n - 2)^2. */
void kernel_seidel_2d(int tsteps, int n, double A[n][n])
{
  int t, i, j;

  for (t = 0; t <= tsteps - 1; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}

/* seidel-2d, PolyBench shape, fixed-size array (size from the macro N).
 * In place (Gauss-Seidel order): each point becomes the 9-point average / 9.0, reading
 * the already-updated north and west neighbours of the same sweep. */
#ifndef N
#define N 40
#endif

void kernel_seidel_2d(int tsteps, double A[N][N])
{
  int t, i, j;

  for (t = 0; t <= tsteps - 1; t++)
    for (i = 1; i <= N - 2; i++)
      for (j = 1; j <= N - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}

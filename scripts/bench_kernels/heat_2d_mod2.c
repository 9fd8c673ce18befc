/* heat-2d written as one sweep per time step between the two time planes of A
 * (A[(t+1)%2] from A[t%2], as Pluto's heat-2d example), C99 VLA parameter, double.
 * The same stencil as heat_2d.c; one of its time steps is one sweep, so tsteps here is twice
 * heat_2d.c's for the same work.
 * Stencil: 5 points. Per point update: 10 flops as written (2 x (mul, sub, add, mul) + 2 add).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: tsteps * (n - 2)^2. */
void kernel_heat_2d_mod2(int tsteps, int n, double A[2][n][n])
{
  int t, i, j;

#pragma omp parallel private(t, i, j)
  for (t = 0; t < tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] =
            0.125 * (A[t % 2][i + 1][j] - 2.0 * A[t % 2][i][j] + A[t % 2][i - 1][j])
            + 0.125 * (A[t % 2][i][j + 1] - 2.0 * A[t % 2][i][j] + A[t % 2][i][j - 1])
            + A[t % 2][i][j];
  }
}

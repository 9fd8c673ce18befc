/* jacobi-2d written as one sweep per time step between the two time planes of A
 * (A[(t+1)%2] from A[t%2]), C99 VLA parameter, double. The same stencil as jacobi_2d.c
 * (PolyBench 4.2's two-sweep form); one of its time steps is one sweep, so tsteps here is
 * twice jacobi_2d.c's for the same work.
 * Stencil: 5 points. Per point update: 5 flops (4 add, 1 mul as written).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: tsteps * (n - 2)^2. */
void kernel_jacobi_2d_mod2(int tsteps, int n, double A[2][n][n])
{
  int t, i, j;

#pragma omp parallel private(t, i, j)
  for (t = 0; t < tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[(t + 1) % 2][i][j] = 0.2 * (A[t % 2][i][j] + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]
                                      + A[t % 2][i + 1][j] + A[t % 2][i - 1][j]);
  }
}

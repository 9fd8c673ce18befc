/* jacobi-2d, PolyBench shape, linearized pointers (row stride n), in three styles:
 *   kernel_jacobi_2d_ptr   A[i*n + j] indexing, two sweeps per time step (as PolyBench);
 *   kernel_jacobi_2d_rows  the same computation through row pointers r0/r1/r2;
 *   kernel_jacobi_2d_swap  ONE sweep per time step, then the pointers are swapped, so after
 *                          an odd number of steps the newest values are in the caller's b,
 *                          after an even number in the caller's a. */
void kernel_jacobi_2d_ptr(int tsteps, int n, double *A, double *B)
{
  int t, i, j;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + j - 1] + A[i * n + j + 1]
                              + A[(i + 1) * n + j] + A[(i - 1) * n + j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i * n + j] = 0.2 * (B[i * n + j] + B[i * n + j - 1] + B[i * n + j + 1]
                              + B[(i + 1) * n + j] + B[(i - 1) * n + j]);
  }
}

void kernel_jacobi_2d_rows(int tsteps, int n, double *A, double *B)
{
  int t, i, j;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++) {
      const double *r0 = A + (i - 1) * n;
      const double *r1 = A + i * n;
      const double *r2 = A + (i + 1) * n;
      double *o = B + i * n;
      for (j = 1; j < n - 1; j++)
        o[j] = 0.2 * (r1[j] + r1[j - 1] + r1[j + 1] + r2[j] + r0[j]);
    }
    for (i = 1; i < n - 1; i++) {
      const double *r0 = B + (i - 1) * n;
      const double *r1 = B + i * n;
      const double *r2 = B + (i + 1) * n;
      double *o = A + i * n;
      for (j = 1; j < n - 1; j++)
        o[j] = 0.2 * (r1[j] + r1[j - 1] + r1[j + 1] + r2[j] + r0[j]);
    }
  }
}

void kernel_jacobi_2d_swap(int tsteps, int n, double *a, double *b)
{
  int t, i, j;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        b[i * n + j] = 0.2 * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1]
                              + a[(i + 1) * n + j] + a[(i - 1) * n + j]);
    double *tmp = a;
    a = b;
    b = tmp;
  }
}

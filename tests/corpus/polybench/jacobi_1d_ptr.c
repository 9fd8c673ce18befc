/* jacobi-1d, PolyBench shape, plain pointers; plus a float version that keeps the double
 * literal (so every point is computed as (float)(0.33333 * (double)(sum in float))). */
void kernel_jacobi_1d_ptr(int tsteps, int n, double *A, double *B)
{
  int t, i;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

void kernel_jacobi_1d_f32(int tsteps, int n, float *A, float *B)
{
  int t, i;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

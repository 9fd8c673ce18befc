/* heat-3d, PolyBench shape, linearized pointers, indexed through function-like macros the
 * way much legacy C does it (plane stride n*n, row stride n); plus a float version. */
#define AT(p, i, j, k) (p)[((i) * n + (j)) * n + (k)]

void kernel_heat_3d_ptr(int tsteps, int n, double *A, double *B)
{
  int t, i, j, k;

  for (t = 1; t <= tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          AT(B, i, j, k) = 0.125 * (AT(A, i + 1, j, k) - 2.0 * AT(A, i, j, k) + AT(A, i - 1, j, k))
                         + 0.125 * (AT(A, i, j + 1, k) - 2.0 * AT(A, i, j, k) + AT(A, i, j - 1, k))
                         + 0.125 * (AT(A, i, j, k + 1) - 2.0 * AT(A, i, j, k) + AT(A, i, j, k - 1))
                         + AT(A, i, j, k);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          AT(A, i, j, k) = 0.125 * (AT(B, i + 1, j, k) - 2.0 * AT(B, i, j, k) + AT(B, i - 1, j, k))
                         + 0.125 * (AT(B, i, j + 1, k) - 2.0 * AT(B, i, j, k) + AT(B, i, j - 1, k))
                         + 0.125 * (AT(B, i, j, k + 1) - 2.0 * AT(B, i, j, k) + AT(B, i, j, k - 1))
                         + AT(B, i, j, k);
  }
}

void kernel_heat_3d_f32(int tsteps, int n, float *A, float *B)
{
  int t, i, j, k;

  for (t = 1; t <= tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          AT(B, i, j, k) = 0.125f * (AT(A, i + 1, j, k) - 2.0f * AT(A, i, j, k) + AT(A, i - 1, j, k))
                         + 0.125f * (AT(A, i, j + 1, k) - 2.0f * AT(A, i, j, k) + AT(A, i, j - 1, k))
                         + 0.125f * (AT(A, i, j, k + 1) - 2.0f * AT(A, i, j, k) + AT(A, i, j, k - 1))
                         + AT(A, i, j, k);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          AT(A, i, j, k) = 0.125f * (AT(B, i + 1, j, k) - 2.0f * AT(B, i, j, k) + AT(B, i - 1, j, k))
                         + 0.125f * (AT(B, i, j + 1, k) - 2.0f * AT(B, i, j, k) + AT(B, i, j - 1, k))
                         + 0.125f * (AT(B, i, j, k + 1) - 2.0f * AT(B, i, j, k) + AT(B, i, j, k - 1))
                         + AT(B, i, j, k);
  }
}

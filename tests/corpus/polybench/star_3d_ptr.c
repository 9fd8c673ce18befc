/* 3-D 7-point star stencil alternating between the two planes of A (see star_3d_fixed.c),
 * linearized pointer: A holds 2*n*n*n values, plane p starts at A + p*n*n*n. */
void kernel_star_3d_ptr(int tsteps, int n, double *A)
{
  int t, i, j, k;
  int nn = n * n;
  int nnn = n * n * n;

  for (t = 0; t < tsteps; t++)
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[((t + 1) % 2) * nnn + i * nn + j * n + k] =
              0.4 * A[(t % 2) * nnn + i * nn + j * n + k]
              + 0.1 * (A[(t % 2) * nnn + (i - 1) * nn + j * n + k]
                     + A[(t % 2) * nnn + (i + 1) * nn + j * n + k]
                     + A[(t % 2) * nnn + i * nn + (j - 1) * n + k]
                     + A[(t % 2) * nnn + i * nn + (j + 1) * n + k]
                     + A[(t % 2) * nnn + i * nn + j * n + k - 1]
                     + A[(t % 2) * nnn + i * nn + j * n + k + 1]);
}

/* heat-2d as legacy code writes it (heat-equation codes): flat rows of n doubles (the ghost
 * cells included), an index helper, a static sweep function that the time loop calls, the
 * time loop counting down, a pointer swap. Same stencil and arithmetic as heat_2d.c, one
 * sweep per time step.
 * Stencil: 5 points. Per point update: 10 flops as written.
 * Bytes/point (compulsory, per sweep, no write-allocate): 16.
 * Point updates per call: tsteps * (n - 2)^2. */
static long at(int i, int j, int n) { return (long)i * n + j; }

static void sweep(const double *u, double *v, int n)
{
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      v[at(i, j, n)] = 0.125 * (u[at(i + 1, j, n)] - 2.0 * u[at(i, j, n)] + u[at(i - 1, j, n)])
                     + 0.125 * (u[at(i, j + 1, n)] - 2.0 * u[at(i, j, n)] + u[at(i, j - 1, n)])
                     + u[at(i, j, n)];
}

void kernel_heat_2d_legacy(int tsteps, int n, double *A, double *B)
{
  for (int t = tsteps; t > 0; t--) {
    sweep(A, B, n);
    double *w = A; A = B; B = w;
  }
}

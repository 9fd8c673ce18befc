/* jacobi-1d, PolyBench shape, fixed-size arrays (size from the macro N).
 * Two sweeps per time step: A -> B, then B -> A, over 1..N-2, 3-point average. */
#ifndef N
#define N 101
#endif

void kernel_jacobi_1d(int tsteps, double A[N], double B[N])
{
  int t, i;

  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < N - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < N - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

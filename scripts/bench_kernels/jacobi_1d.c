/* jacobi-1d (PolyBench 4.2 shape), C99 VLA parameters, double.
 * Stencil: 3 points. Per point update: 3 flops (2 add, 1 mul as written).
 * Bytes/point (compulsory, per sweep, no write-allocate): 16 (read 1 double, write 1 double).
 * Point updates per call: 2 * tsteps * (n - 2). */
void kernel_jacobi_1d(int tsteps, int n, double A[n], double B[n])
{
  int t, i;

#pragma omp parallel private(t, i)
  for (t = 0; t < tsteps; t++) {
#pragma omp for
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
#pragma omp for
    for (i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

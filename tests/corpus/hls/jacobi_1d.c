/* 1D-jacobi of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench jacobi-1d, one sweep):
 * 3 reads and 1 write, 2 buffers. */
#ifndef N
#define N 16777216
#endif
void jacobi_1d(float A[N], float B[N]) {
  for (int i = 1; i < N - 1; i++)
    B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
}

/* 2D-jacobi of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench jacobi-2d, one sweep):
 * 5 reads and 1 write, 2 buffers. */
#ifndef N
#define N 4096
#endif
void jacobi_2d(float A[N][N], float B[N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

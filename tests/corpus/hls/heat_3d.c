/* 3D-heat of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench heat-3d, one sweep): 10
 * reads of A (6 neighbours and the centre 4 times), 1 write of B, 2 buffers. */
#ifndef N
#define N 256
#endif
void heat_3d(float A[N][N][N], float B[N][N][N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      for (int k = 1; k < N - 1; k++)
        B[i][j][k] = 0.125f * (A[i + 1][j][k] - 2.0f * A[i][j][k] + A[i - 1][j][k]) +
                     0.125f * (A[i][j + 1][k] - 2.0f * A[i][j][k] + A[i][j - 1][k]) +
                     0.125f * (A[i][j][k + 1] - 2.0f * A[i][j][k] + A[i][j][k - 1]) +
                     A[i][j][k];
}

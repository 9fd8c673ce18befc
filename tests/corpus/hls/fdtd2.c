/* 2D-fdtd2 of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench fdtd-2d, its third nest):
 * in place, hz read and written, 3 buffers. */
#ifndef N
#define N 4096
#endif
void fdtd2(float ex[N][N], float ey[N][N], float hz[N][N]) {
  for (int i = 0; i < N - 1; i++)
    for (int j = 0; j < N - 1; j++)
      hz[i][j] = hz[i][j] - 0.7f * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
}

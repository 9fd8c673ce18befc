/* 2D-fdtd0 of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench fdtd-2d, its first nest):
 * in place, ey read and written, 2 buffers. */
#ifndef N
#define N 4096
#endif
void fdtd0(float ey[N][N], float hz[N][N]) {
  for (int i = 1; i < N; i++)
    for (int j = 0; j < N; j++)
      ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
}

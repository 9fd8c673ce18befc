/* 2D-fdtd1 of the IMPACT'24 FPGA-cache paper's Table 1 (PolyBench fdtd-2d, its second
 * nest): in place, ex read and written, 2 buffers. */
#ifndef N
#define N 4096
#endif
void fdtd1(float ex[N][N], float hz[N][N]) {
  for (int i = 0; i < N; i++)
    for (int j = 1; j < N; j++)
      ex[i][j] = ex[i][j] - 0.5f * (hz[i][j] - hz[i][j - 1]);
}

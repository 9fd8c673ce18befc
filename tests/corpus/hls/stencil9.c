/* 2D-9p of the IMPACT'24 FPGA-cache paper's Table 1 (Adept stencil9 in array form): the 8
 * neighbours read, 1 write, 2 buffers. */
#ifndef N
#define N 4096
#endif
void stencil9(float a0[N][N], float a1[N][N], float fac) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      a1[i][j] = (a0[i - 1][j - 1] + a0[i - 1][j] + a0[i - 1][j + 1] + a0[i][j - 1] +
                  a0[i][j + 1] + a0[i + 1][j - 1] + a0[i + 1][j] + a0[i + 1][j + 1]) * fac;
}

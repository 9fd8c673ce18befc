/* 3D-19p of the IMPACT'24 FPGA-cache paper's Table 1 (Adept stencil19 in array form): the 6
 * face and 12 edge neighbours read, 1 write, 2 buffers. */
#ifndef N
#define N 256
#endif
void stencil19(float a0[N][N][N], float a1[N][N][N], float fac) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      for (int k = 1; k < N - 1; k++)
        a1[i][j][k] =
            (a0[i - 1][j][k] + a0[i + 1][j][k] + a0[i][j - 1][k] + a0[i][j + 1][k] +
             a0[i][j][k - 1] + a0[i][j][k + 1] + a0[i - 1][j - 1][k] + a0[i - 1][j + 1][k] +
             a0[i + 1][j - 1][k] + a0[i + 1][j + 1][k] + a0[i - 1][j][k - 1] +
             a0[i - 1][j][k + 1] + a0[i + 1][j][k - 1] + a0[i + 1][j][k + 1] +
             a0[i][j - 1][k - 1] + a0[i][j - 1][k + 1] + a0[i][j + 1][k - 1] +
             a0[i][j + 1][k + 1]) * fac;
}

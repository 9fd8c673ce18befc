/* fdtd-2d, PolyBench shape, fixed-size arrays (sizes from the macros NX, NY, TMAX).
 * Per time step: the source row ey[0][*] = _fict_[t]; ey from hz (i-1), ex from hz (j-1),
 * then hz from ex (j+1) and ey (i+1).  Needs tmax <= TMAX. */
#ifndef NX
#define NX 20
#endif
#ifndef NY
#define NY 30
#endif
#ifndef TMAX
#define TMAX 20
#endif

void kernel_fdtd_2d(int tmax, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY],
                    double _fict_[TMAX])
{
  int t, i, j;

  for (t = 0; t < tmax; t++) {
    for (j = 0; j < NY; j++)
      ey[0][j] = _fict_[t];
    for (i = 1; i < NX; i++)
      for (j = 0; j < NY; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < NX; i++)
      for (j = 1; j < NY; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < NX - 1; i++)
      for (j = 0; j < NY - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}

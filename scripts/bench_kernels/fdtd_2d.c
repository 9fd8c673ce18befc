/* fdtd-2d (PolyBench 4.2 shape), C99 VLA parameters, double (nx rows, ny columns).
 * A "point" is one grid cell in one time step (the three field updates ey, ex, hz).
 * Stencil: 2 + 2 + 5 points. Per point: 11 flops (ey 3, ex 3, hz 5 as written).
 * Bytes/point (compulsory, each of the three sweeps streaming its arrays once, no
 * write-allocate): ey 24 + ex 24 + hz 32 = 80.
 * Points per call: tmax * nx * ny. */
void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[nx][ny], double ey[nx][ny],
                    double hz[nx][ny], double _fict_[tmax])
{
  int t, i, j;

#pragma omp parallel private(t, i, j)
  for (t = 0; t < tmax; t++) {
#pragma omp for
    for (j = 0; j < ny; j++)
      ey[0][j] = _fict_[t];
#pragma omp for
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
#pragma omp for
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
#pragma omp for
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
}

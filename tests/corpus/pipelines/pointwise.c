/* point-wise stages: no tile writes what another tile writes, tiles run in parallel */
void pointwise(int h, int w, const float in[h][w], float a[h][w], float out[h][w])
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      a[y][x] = in[y][x] * 2.0f + 1.0f;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      out[y][x] = a[y][x] * a[y][x] - in[y][x];
}

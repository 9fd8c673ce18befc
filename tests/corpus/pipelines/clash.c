/* A size parameter named like fuse-tile's tile coordinates (tile0). */
void clash(int tile0, int w, const float in[tile0][w], float a[tile0][w], float out[tile0][w])
{
  for (int y = 0; y < tile0; y++)
    for (int x = 1; x < w - 1; x++)
      a[y][x] = in[y][x - 1] + in[y][x + 1];
  for (int y = 1; y < tile0 - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = a[y - 1][x] * a[y + 1][x];
}

/* the first stage reads a, which the second overwrites */
void reads_later_write(int h, int w, float a[h][w], float b[h][w], float out[h][w])
{
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w - 1; x++)
      b[y][x] = a[y][x - 1] + a[y][x + 1];
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      a[y][x] = 3.0f * a[y][x];
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = b[y][x] - a[y][x];
}

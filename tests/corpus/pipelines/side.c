/* The second stage writes a side output nothing reads: it runs after the tiles. */
void side(int h, int w, const float in[h][w], float a[h][w], float s[h][w], float out[h][w])
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      a[y][x] = in[y][x] + 1.0f;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      s[y][x] = in[y][x] * 3.0f;
  for (int y = 1; y < h - 1; y++)
    for (int x = 0; x < w; x++)
      out[y][x] = a[y - 1][x] + a[y + 1][x];
}

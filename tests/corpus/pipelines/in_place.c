/* the second stage updates b in place (a recurrence along x): not a pure function of its
 * inputs */
void in_place(int h, int w, const float in[h][w], float a[h][w], float b[h][w],
              float out[h][w])
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      a[y][x] = in[y][x] * 2.0f;
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w; x++)
      b[y][x] = b[y][x - 1] * 0.5f + a[y][x];
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = b[y][x - 1] + b[y][x + 1];
}

/* Unsharp mask in four stages (PolyMage's, without the threshold branch): vertical and
 * horizontal 5-tap binomial blurs, a sharpened image, and a blend. */
void unsharp4(int h, int w, const float in[h][w], float bx[h][w], float by[h][w],
              float sh[h][w], float out[h][w])
{
  for (int y = 2; y < h - 2; y++)
    for (int x = 0; x < w; x++)
      bx[y][x] = (in[y - 2][x] + 4.0f * in[y - 1][x] + 6.0f * in[y][x] + 4.0f * in[y + 1][x]
                  + in[y + 2][x]) * 0.0625f;
  for (int y = 2; y < h - 2; y++)
    for (int x = 2; x < w - 2; x++)
      by[y][x] = (bx[y][x - 2] + 4.0f * bx[y][x - 1] + 6.0f * bx[y][x] + 4.0f * bx[y][x + 1]
                  + bx[y][x + 2]) * 0.0625f;
  for (int y = 2; y < h - 2; y++)
    for (int x = 2; x < w - 2; x++)
      sh[y][x] = in[y][x] * 4.0f - by[y][x] * 3.0f;
  for (int y = 2; y < h - 2; y++)
    for (int x = 2; x < w - 2; x++)
      out[y][x] = 0.5f * (sh[y][x] + in[y][x]) - by[y][x];
}

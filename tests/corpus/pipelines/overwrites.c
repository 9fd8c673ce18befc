/* the first stage writes r[y] once per x (the last value stays) */
void overwrites(int h, int w, const float in[h][w], float r[h], float out[h][w])
{
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      r[y] = in[y][x] * 2.0f;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      out[y][x] = r[y] + in[y][x];
}

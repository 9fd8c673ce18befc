/* Pipelines whose intermediates are local arrays (C99 VLAs): dead after the loops, so
 * fuse-tile keeps them in a buffer per tile (contraction). */

/* blur x -> blur y through one local image */
void blur_local(int h, int w, const float in[h][w], float out[h][w]) {
  float tmp[h][w];
  for (int y = 1; y < h - 1; y++)
    for (int x = 0; x < w; x++)
      tmp[y][x] = (in[y - 1][x] + 2.0f * in[y][x] + in[y + 1][x]) * 0.25f;
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = (tmp[y][x - 1] + 2.0f * tmp[y][x] + tmp[y][x + 1]) * 0.25f;
}

/* unsharp mask without the threshold: two local blurs, the sharpened image out */
void unsharp_local(int h, int w, const float in[h][w], float out[h][w]) {
  float bx[h][w], by[h][w];
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
      out[y][x] = in[y][x] * 4.0f - by[y][x] * 3.0f;
}

/* the local image is read after the loops: it must keep every value (not contracted) */
void read_after(int h, int w, const float in[h][w], float out[h][w]) {
  float tmp[h][w];
  for (int y = 1; y < h - 1; y++)
    for (int x = 0; x < w; x++)
      tmp[y][x] = in[y - 1][x] + in[y + 1][x];
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y][x] = tmp[y][x - 1] - tmp[y][x + 1];
  out[0][0] = tmp[h / 2][w / 2];
}

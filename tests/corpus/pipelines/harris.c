/* Harris-like corner response: Sobel derivatives (one nest writing two arrays), their
 * products (three arrays), 3x3 sums and the response. */
void harris(int h, int w, const float in[h][w], float ix[h][w], float iy[h][w],
            float ixx[h][w], float ixy[h][w], float iyy[h][w], float out[h][w])
{
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      ix[y][x] = (in[y - 1][x + 1] - in[y - 1][x - 1]) + 2.0f * (in[y][x + 1] - in[y][x - 1])
               + (in[y + 1][x + 1] - in[y + 1][x - 1]);
      iy[y][x] = (in[y + 1][x - 1] - in[y - 1][x - 1]) + 2.0f * (in[y + 1][x] - in[y - 1][x])
               + (in[y + 1][x + 1] - in[y - 1][x + 1]);
    }
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      ixx[y][x] = ix[y][x] * ix[y][x];
      ixy[y][x] = ix[y][x] * iy[y][x];
      iyy[y][x] = iy[y][x] * iy[y][x];
    }
  for (int y = 2; y < h - 2; y++)
    for (int x = 2; x < w - 2; x++) {
      float sxx = 0.0f, sxy = 0.0f, syy = 0.0f;
      sxx = ixx[y - 1][x - 1] + ixx[y - 1][x] + ixx[y - 1][x + 1] + ixx[y][x - 1] + ixx[y][x]
          + ixx[y][x + 1] + ixx[y + 1][x - 1] + ixx[y + 1][x] + ixx[y + 1][x + 1];
      sxy = ixy[y - 1][x - 1] + ixy[y - 1][x] + ixy[y - 1][x + 1] + ixy[y][x - 1] + ixy[y][x]
          + ixy[y][x + 1] + ixy[y + 1][x - 1] + ixy[y + 1][x] + ixy[y + 1][x + 1];
      syy = iyy[y - 1][x - 1] + iyy[y - 1][x] + iyy[y - 1][x + 1] + iyy[y][x - 1] + iyy[y][x]
          + iyy[y][x + 1] + iyy[y + 1][x - 1] + iyy[y + 1][x] + iyy[y + 1][x + 1];
      out[y][x] = (sxx * syy - sxy * sxy) - 0.04f * (sxx + syy) * (sxx + syy);
    }
}

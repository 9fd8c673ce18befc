/* 3x3 box filter on an 8-bit gray image with int accumulation and rounding division by 9
 * (interior pixels; the border of out is left alone), C99 VLA parameters.
 * Stencil: 9 points. Per pixel: 10 integer ops (9 add, 1 div as written).
 * Bytes/pixel (compulsory, no write-allocate): 2 (read 1 byte, write 1 byte).
 * Pixels per call: (h - 2) * (w - 2). */
void kernel_box3x3_u8(int h, int w, const unsigned char in[h][w], unsigned char out[h][w])
{
  int y, x;

#pragma omp parallel for private(x)
  for (y = 1; y < h - 1; y++)
    for (x = 1; x < w - 1; x++) {
      int s = in[y - 1][x - 1] + in[y - 1][x] + in[y - 1][x + 1]
            + in[y][x - 1] + in[y][x] + in[y][x + 1]
            + in[y + 1][x - 1] + in[y + 1][x] + in[y + 1][x + 1];
      out[y][x] = (unsigned char)((s + 4) / 9);
    }
}

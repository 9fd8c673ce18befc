/* 3x3 box blur on a float image (interior pixels; the border of out is left alone),
 * C99 VLA parameters.
 * Stencil: 9 points. Per pixel: 9 flops (8 add, 1 mul as written).
 * Bytes/pixel (compulsory, no write-allocate): 8 (read 1 float, write 1 float).
 * Pixels per call: (h - 2) * (w - 2). */
void kernel_blur3x3_f32(int h, int w, const float in[h][w], float out[h][w])
{
  int y, x;

#pragma omp parallel for private(x)
  for (y = 1; y < h - 1; y++)
    for (x = 1; x < w - 1; x++)
      out[y][x] = (in[y - 1][x - 1] + in[y - 1][x] + in[y - 1][x + 1]
                   + in[y][x - 1] + in[y][x] + in[y][x + 1]
                   + in[y + 1][x - 1] + in[y + 1][x] + in[y + 1][x + 1]) * (1.0f / 9.0f);
}

/* 5x5 Gaussian blur (binomial 1 4 6 4 1 weights, normalized, exact in float) on a float
 * image, the weights in a static const table and a full 5x5 window loop, C99 VLA parameters.
 * Stencil: 25 points. Per pixel: 50 flops (25 mul, 25 add as written).
 * Bytes/pixel (compulsory, no write-allocate): 8.
 * Pixels per call: (h - 4) * (w - 4). */
static const float gauss5x5_weights[5][5] = {
  { 1.0f / 256, 4.0f / 256, 6.0f / 256, 4.0f / 256, 1.0f / 256 },
  { 4.0f / 256, 16.0f / 256, 24.0f / 256, 16.0f / 256, 4.0f / 256 },
  { 6.0f / 256, 24.0f / 256, 36.0f / 256, 24.0f / 256, 6.0f / 256 },
  { 4.0f / 256, 16.0f / 256, 24.0f / 256, 16.0f / 256, 4.0f / 256 },
  { 1.0f / 256, 4.0f / 256, 6.0f / 256, 4.0f / 256, 1.0f / 256 },
};

void kernel_gauss5x5_f32(int h, int w, const float in[h][w], float out[h][w])
{
  int y, x, dy, dx;

#pragma omp parallel for private(x, dy, dx)
  for (y = 2; y < h - 2; y++)
    for (x = 2; x < w - 2; x++) {
      float acc = 0.0f;
      for (dy = 0; dy < 5; dy++)
        for (dx = 0; dx < 5; dx++)
          acc += gauss5x5_weights[dy][dx] * in[y + dy - 2][x + dx - 2];
      out[y][x] = acc;
    }
}

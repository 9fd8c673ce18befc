/* Unsharp mask on a float gray image, the four stages of PolyMage's unsharp_mask benchmark
 * (one channel): a vertical 5-tap binomial blur, a horizontal one of its result, a sharpened
 * image, and a threshold mask choosing between the input and the sharpened pixel. The three
 * intermediate images are buffers the caller provides (live-out), C99 VLA parameters.
 *   blurx   rows 2..h-3, columns 0..w-1;  blury, sharpen, out  rows 2..h-3, columns 2..w-3
 * A "point" is one output pixel (one evaluation of each stage; blurx also covers four more
 * columns).
 * Stencil: 5 + 5 + 1 + 1 points. Per point: 23 flops as written (blurx and blury 4 add
 * 4 mul each, sharpen 2 mul 1 add 1 sub, mask 1 sub 2 compare).
 * Bytes/point (compulsory, each stage streaming its arrays once, no write-allocate): 44
 * (blurx 4 + 4, blury 4 + 4, sharpen 8 + 4, mask 12 + 4).
 * Points per call: (h - 4) * (w - 4). */
void kernel_unsharp_f32(int h, int w, const float in[h][w], float blurx[h][w],
                        float blury[h][w], float sharpen[h][w], float out[h][w])
{
  const float weight = 3.0f, threshold = 0.001f;
  int y, x;

#pragma omp parallel private(y, x)
  {
#pragma omp for
    for (y = 2; y < h - 2; y++)
      for (x = 0; x < w; x++)
        blurx[y][x] = (in[y - 2][x] + 4.0f * in[y - 1][x] + 6.0f * in[y][x]
                       + 4.0f * in[y + 1][x] + in[y + 2][x]) * 0.0625f;
#pragma omp for
    for (y = 2; y < h - 2; y++)
      for (x = 2; x < w - 2; x++)
        blury[y][x] = (blurx[y][x - 2] + 4.0f * blurx[y][x - 1] + 6.0f * blurx[y][x]
                       + 4.0f * blurx[y][x + 1] + blurx[y][x + 2]) * 0.0625f;
#pragma omp for
    for (y = 2; y < h - 2; y++)
      for (x = 2; x < w - 2; x++)
        sharpen[y][x] = in[y][x] * (1.0f + weight) - blury[y][x] * weight;
#pragma omp for
    for (y = 2; y < h - 2; y++)
      for (x = 2; x < w - 2; x++) {
        float d = in[y][x] - blury[y][x];
        out[y][x] = (d < threshold && d > -threshold) ? in[y][x] : sharpen[y][x];
      }
  }
}

/* Three-stage image pipeline on a float image, one call: a horizontal 3-tap blur, a vertical
 * 3-tap blur of its result, and a 5-point sharpen of that. The two intermediate images are
 * buffers the caller provides (they are live-out: a compiler may fuse the stages but must
 * still write them), C99 VLA parameters.
 *   bx  = (in[y][x-1] + in[y][x] + in[y][x+1]) / 3       rows 0..h-1,  columns 1..w-2
 *   by  = (bx[y-1][x] + bx[y][x] + bx[y+1][x]) / 3       rows 1..h-2,  columns 1..w-2
 *   out = 5 by[y][x] - the four neighbours of by[y][x]   rows 2..h-3,  columns 2..w-3
 * A "point" is one output pixel (one evaluation of each stage; the first two stages also
 * cover a one-pixel ring more).
 * Stencil: 3 + 3 + 5 points. Per point: 11 flops (bx 2 add 1 mul, by 2 add 1 mul, out 4
 * add/sub 1 mul as written).
 * Bytes/point (compulsory, each stage streaming its arrays once, no write-allocate): 24
 * (bx 4 + 4, by 4 + 4, out 4 + 4). Fused stages that still store bx and by need 16.
 * Points per call: (h - 4) * (w - 4). */
void kernel_blur_sharpen_f32(int h, int w, const float in[h][w], float bx[h][w],
                             float by[h][w], float out[h][w])
{
  int y, x;

#pragma omp parallel private(y, x)
  {
#pragma omp for
    for (y = 0; y < h; y++)
      for (x = 1; x < w - 1; x++)
        bx[y][x] = (in[y][x - 1] + in[y][x] + in[y][x + 1]) * (1.0f / 3.0f);
#pragma omp for
    for (y = 1; y < h - 1; y++)
      for (x = 1; x < w - 1; x++)
        by[y][x] = (bx[y - 1][x] + bx[y][x] + bx[y + 1][x]) * (1.0f / 3.0f);
#pragma omp for
    for (y = 2; y < h - 2; y++)
      for (x = 2; x < w - 2; x++)
        out[y][x] = 5.0f * by[y][x]
                  - (by[y - 1][x] + by[y + 1][x] + by[y][x - 1] + by[y][x + 1]);
  }
}

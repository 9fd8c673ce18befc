/* Threshold filters: 8-bit binarization, a band-pass with &&, a _Bool mask from a float
 * threshold (a float scalar parameter), and a mask applied to an image. */
#include <stdint.h>

void threshold_u8(const uint8_t *src, uint8_t *dst, int n, int thr)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = src[i] > thr ? 255 : 0;
}

void band_u8(const uint8_t *src, uint8_t *dst, int width, int height, int lo, int hi)
{
    int x, y;

    for (y = 0; y < height; y++)
        for (x = 0; x < width; x++) {
            int v = src[y * width + x];
            dst[y * width + x] = (v >= lo && v <= hi) ? (uint8_t)v : 0;
        }
}

void threshold_mask_f32(const float *src, _Bool *mask, int n, float thr)
{
    int i;

    for (i = 0; i < n; i++)
        mask[i] = src[i] >= thr;
}

void apply_mask_f32(const float *src, const _Bool *mask, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        if (mask[i])
            dst[i] = src[i];
        else
            dst[i] = 0.0f;
    }
}

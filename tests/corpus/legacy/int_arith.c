/* Integer arithmetic corners: unsigned wraparound, shifts (an arithmetic right shift of a
 * negative int, masks, packing), % of negative numbers, ++/--, compound assignments,
 * signed char / short / long long, and <stdint.h> types. */
#include <stdint.h>

/* Wraparound: (a - b) is an int in [-255, 255], converted modulo 256. */
void frame_diff_u8(const uint8_t *a, const uint8_t *b, uint8_t *d, int n)
{
    int i;

    for (i = 0; i < n; ++i)
        d[i] = (uint8_t)(a[i] - b[i]);
}

/* djb2-style checksum with unsigned 32-bit wraparound, returned as a scalar. */
uint32_t checksum_u32(const uint32_t *a, int n)
{
    uint32_t h = 5381u;
    int i;

    for (i = 0; i < n; i++) {
        h = ((h << 5) + h) ^ a[i];
        h *= 2654435761u;
    }
    return h;
}

/* Shifts and masks: RGB888 planes to RGB565. */
void pack_rgb565(const uint8_t *r, const uint8_t *g, const uint8_t *b, uint16_t *out, int n)
{
    int i;

    for (i = 0; i < n; i++)
        out[i] = (uint16_t)(((r[i] >> 3) << 11) | ((g[i] >> 2) << 5) | (b[i] >> 3));
}

/* The unsigned short * unsigned short trap avoided: widen one side to uint32_t first. */
void square_u16(const uint16_t *a, uint32_t *out, int n)
{
    int i;

    for (i = 0; i < n; i++)
        out[i] = (uint32_t)a[i] * a[i];
}

/* Periodic boundary with % of negative numbers: (i + d) % n is negative for i + d < 0 and
 * is fixed up; the 5-point sum is divided by 5 (truncation toward zero). */
void wrap_blur_1d_s16(const short *src, short *dst, int n)
{
    int i, d, k, sum;

    for (i = 0; i < n; i++) {
        sum = 0;
        for (d = -2; d <= 2; d++) {
            k = (i + d) % n;
            if (k < 0)
                k += n;
            sum += src[k];
        }
        dst[i] = (short)(sum / 5);
    }
}

/* Arithmetic right shift of negative values: (left + 2*centre + right) >> 2 on int32. */
void smooth_shift_i32(const int32_t *src, int32_t *dst, int n)
{
    int i;

    for (i = 1; i < n - 1; i++) {
        int64_t s = (int64_t)src[i - 1] + 2 * (int64_t)src[i] + src[i + 1];
        dst[i] = (int32_t)(s >> 2);
    }
}

/* signed char image, signed char 3x3 Laplacian table, short output. */
static const signed char lap3[3][3] = { { 0, -1, 0 }, { -1, 4, -1 }, { 0, -1, 0 } };

void laplace_s8(const signed char *src, short *dst, int width, int height)
{
    int x, y, u, v;

    for (y = 1; y < height - 1; y++)
        for (x = 1; x < width - 1; x++) {
            short acc = 0;
            for (v = -1; v <= 1; v++)
                for (u = -1; u <= 1; u++)
                    acc += lap3[v + 1][u + 1] * src[(y + v) * width + x + u];
            dst[y * width + x] = acc;
        }
}

/* long long accumulation of int16 squares, returned as a scalar. */
long long sum_sq_s16(const int16_t *a, int n)
{
    long long acc = 0;
    int i;

    for (i = 0; i < n; i++)
        acc += (long long)a[i] * a[i];
    return acc;
}

/* Compound assignments and -- on a counter: each element of a row minus its left
 * neighbour, scaled, walked from the right end (in place). */
void diff_inplace_i32(int32_t *a, int n, int scale)
{
    int i = n;

    while (--i > 0) {
        a[i] -= a[i - 1];
        a[i] *= scale;
        a[i] >>= 1;
        a[i] |= 1;
        a[i] ^= 0x5a;
        a[i] %= 1000;
    }
}

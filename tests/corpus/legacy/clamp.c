/* Kernels calling small `static inline` helpers. */

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

static inline float clampf(float v, float lo, float hi)
{
    if (v < lo)
        return lo;
    if (v > hi)
        return hi;
    return v;
}

/* 5-point sharpening: 5*c - n - s - w - e, clamped to [0, 255]. */
void sharpen_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y;

    for (y = 1; y < height - 1; y++)
        for (x = 1; x < width - 1; x++) {
            int c = src[y * width + x];
            int v = 5 * c - src[(y - 1) * width + x] - src[(y + 1) * width + x]
                    - src[y * width + x - 1] - src[y * width + x + 1];
            dst[y * width + x] = (unsigned char)clamp_int(v, 0, 255);
        }
}

/* Gain in percent (an int scalar), float arithmetic, clamped to [0, 1]. */
void gain_clamp_f32(const float *src, float *dst, int n, int gain_pct)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = clampf(src[i] * gain_pct / 100.0f, 0.0f, 1.0f);
}

/* 5x5 Gaussian (the 1/273 kernel) with the weights in a `static const` table at file scope
 * and a full 5x5 window loop; an 8-bit integer version and a float version with a flat
 * float table. */

static const int gauss5[5][5] = {
    { 1,  4,  7,  4, 1 },
    { 4, 16, 26, 16, 4 },
    { 7, 26, 41, 26, 7 },
    { 4, 16, 26, 16, 4 },
    { 1,  4,  7,  4, 1 },
};

static const float gauss5f[25] = {
    1.0f / 273, 4.0f / 273, 7.0f / 273, 4.0f / 273, 1.0f / 273,
    4.0f / 273, 16.0f / 273, 26.0f / 273, 16.0f / 273, 4.0f / 273,
    7.0f / 273, 26.0f / 273, 41.0f / 273, 26.0f / 273, 7.0f / 273,
    4.0f / 273, 16.0f / 273, 26.0f / 273, 16.0f / 273, 4.0f / 273,
    1.0f / 273, 4.0f / 273, 7.0f / 273, 4.0f / 273, 1.0f / 273,
};

void gauss5x5_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y, dx, dy;

    for (y = 2; y < height - 2; y++) {
        for (x = 2; x < width - 2; x++) {
            int acc = 0;
            for (dy = -2; dy <= 2; dy++)
                for (dx = -2; dx <= 2; dx++)
                    acc += gauss5[dy + 2][dx + 2] * src[(y + dy) * width + (x + dx)];
            dst[y * width + x] = (unsigned char)((acc + 136) / 273);
        }
    }
}

void gauss5x5_f32(const float *src, float *dst, int width, int height)
{
    int x, y, u, v;

    for (y = 2; y < height - 2; y++) {
        for (x = 2; x < width - 2; x++) {
            float acc = 0.0f;
            for (v = 0; v < 5; v++)
                for (u = 0; u < 5; u++)
                    acc += gauss5f[v * 5 + u] * src[(y + v - 2) * width + (x + u - 2)];
            dst[y * width + x] = acc;
        }
    }
}

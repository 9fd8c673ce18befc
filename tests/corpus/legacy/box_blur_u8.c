/* 3x3 box blur on 8-bit gray images, written the way old imaging code is: counters declared
 * at the top, int accumulation, integer division by 9, an early return for small images. */

void box_blur3x3_u8(const unsigned char *src, unsigned char *dst, int width, int height)
{
    int x, y;
    int sum;

    if (width < 3 || height < 3)
        return;

    for (y = 1; y < height - 1; y++) {
        for (x = 1; x < width - 1; x++) {
            sum  = src[(y - 1) * width + x - 1] + src[(y - 1) * width + x] + src[(y - 1) * width + x + 1];
            sum += src[y * width + x - 1]       + src[y * width + x]       + src[y * width + x + 1];
            sum += src[(y + 1) * width + x - 1] + src[(y + 1) * width + x] + src[(y + 1) * width + x + 1];
            dst[y * width + x] = (unsigned char)(sum / 9);
        }
    }
}

/* The same filter over a padded image with a row stride, through row pointers, with `<=`
 * bounds, pre-increment counters and rounding (sum + 4) / 9. */
void box_blur3x3_u8_stride(const unsigned char *src, unsigned char *dst,
                           int width, int height, int stride)
{
    int x, y;
    const unsigned char *above, *row, *below;
    unsigned char *out;

    for (y = 1; y <= height - 2; ++y) {
        above = src + (y - 1) * stride;
        row = src + y * stride;
        below = src + (y + 1) * stride;
        out = dst + y * stride;
        for (x = 1; x <= width - 2; ++x) {
            int s = above[x - 1] + above[x] + above[x + 1]
                  + row[x - 1] + row[x] + row[x + 1]
                  + below[x - 1] + below[x] + below[x + 1];
            out[x] = (unsigned char)((s + 4) / 9);
        }
    }
}

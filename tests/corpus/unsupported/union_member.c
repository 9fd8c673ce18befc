/* Unsupported: a union in a struct-heavy kernel (an image descriptor passed by pointer whose
 * pixels are viewed as float or as their bits).  image_blur must be skipped; scale_f32 is
 * ordinary. */

union pixel {
    float value;
    unsigned int bits;
};

struct image {
    int width;
    int height;
    int stride;
    union pixel *data;
};

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

void image_blur(const struct image *in, struct image *out)
{
    int x, y;

    out->width = in->width;
    out->height = in->height;
    for (y = 0; y < in->height; y++)
        for (x = 1; x < in->width - 1; x++)
            out->data[y * out->stride + x].value = (in->data[y * in->stride + x - 1].value
                                                    + in->data[y * in->stride + x].value
                                                    + in->data[y * in->stride + x + 1].value)
                                                   / 3.0f;
}

/* Kernels of the static library `stencils`. */
#include "stencils.h"

/* Explicit heat equation, ping-pong between u and tmp; the result ends in u. */
void heat1d_f64(int n, int steps, double *restrict u, double *restrict tmp, double alpha)
{
    for (int s = 0; s < steps; s++) {
        for (int i = 1; i < n - 1; i++)
            tmp[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        for (int i = 1; i < n - 1; i++)
            u[i] = tmp[i];
    }
}

static const float blur_w[3][3] = {
    {1.0f / 16, 2.0f / 16, 1.0f / 16},
    {2.0f / 16, 4.0f / 16, 2.0f / 16},
    {1.0f / 16, 2.0f / 16, 1.0f / 16},
};

/* 3x3 Gaussian blur of the interior; the border rows and columns are copied. */
void blur3x3_f32(int h, int w, const float *in, float *out)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (y == 0 || x == 0 || y == h - 1 || x == w - 1) {
                out[y * w + x] = in[y * w + x];
                continue;
            }
            float acc = 0.0f;
            for (int dy = 0; dy < 3; dy++)
                for (int dx = 0; dx < 3; dx++)
                    acc += blur_w[dy][dx] * in[(y + dy - 1) * w + (x + dx - 1)];
            out[y * w + x] = acc;
        }
}

void threshold_u8(int n, const uint8_t *in, uint8_t *out, int lo, int hi)
{
    for (int i = 0; i < n; i++)
        out[i] = in[i] < lo ? 0 : (in[i] > hi ? 255 : (uint8_t)((in[i] - lo) * 255 / (hi - lo)));
}

float sum_sq_f32(int n, const float *a)
{
    float s = 0.0f;
    for (int i = 0; i < n; i++)
        s += a[i] * a[i];
    return s;
}

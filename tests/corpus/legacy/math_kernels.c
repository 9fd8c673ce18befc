/* Kernels calling <math.h>: sqrtf, fabsf, expf, floor, fmin, fmax, pow. */
#include <math.h>

/* Central-difference gradient magnitude. */
void grad_mag_f32(const float *img, float *mag, int width, int height)
{
    int x, y;

    for (y = 1; y < height - 1; y++)
        for (x = 1; x < width - 1; x++) {
            float gx = 0.5f * (img[y * width + x + 1] - img[y * width + x - 1]);
            float gy = 0.5f * (img[(y + 1) * width + x] - img[(y - 1) * width + x]);
            mag[y * width + x] = sqrtf(gx * gx + gy * gy);
        }
}

/* |horizontal difference| + |vertical difference| with fabsf. */
void abs_grad_f32(const float *img, float *out, int width, int height)
{
    int x, y;

    for (y = 0; y < height - 1; y++)
        for (x = 0; x < width - 1; x++)
            out[y * width + x] = fabsf(img[y * width + x + 1] - img[y * width + x])
                               + fabsf(img[(y + 1) * width + x] - img[y * width + x]);
}

/* Gaussian weights from squared distances. */
void gauss_weight_f32(const float *d2, float *w, int n)
{
    int i;

    for (i = 0; i < n; i++)
        w[i] = expf(-0.5f * d2[i]);
}

/* Quantize to 1/8 steps with floor (inputs must be in int range). */
void quantize_f64(const double *a, int *q, int n)
{
    int i;

    for (i = 0; i < n; i++)
        q[i] = (int)floor(a[i] * 8.0);
}

/* 1x3 mean clipped to [-0.5, 0.5] with fmin/fmax. */
void clip_mean_f64(const double *a, double *out, int n)
{
    int i;

    for (i = 1; i < n - 1; i++)
        out[i] = fmin(fmax((a[i - 1] + a[i] + a[i + 1]) / 3.0, -0.5), 0.5);
}

/* Gamma correction with pow (inputs in [0, 1]). */
void gamma_f64(const double *a, double *out, int n)
{
    int i;

    for (i = 0; i < n; i++)
        out[i] = pow(a[i], 1.0 / 2.2);
}

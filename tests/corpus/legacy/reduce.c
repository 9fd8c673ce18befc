/* Functions returning a scalar: reductions in double, a count, a 2-D stencil residual. */
#include <math.h>

double sum_f32(const float *a, int n)
{
    double s = 0.0;
    int i;

    for (i = 0; i < n; i++)
        s += a[i];
    return s;
}

double mean_abs_diff_f32(const float *a, const float *b, int n)
{
    double s = 0.0;
    int i;

    if (n <= 0)
        return 0.0;
    for (i = 0; i < n; i++)
        s += fabsf(a[i] - b[i]);
    return s / n;
}

double max_abs_f64(const double *a, int n)
{
    double m = 0.0;
    int i;

    for (i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

int count_above_u8(const unsigned char *a, int n, int thr)
{
    int count = 0;
    int i;

    for (i = 0; i < n; i++)
        if (a[i] > thr)
            count++;
    return count;
}

/* Sum of squared residuals of the 5-point Laplace equation over the interior of an
 * n x n grid. */
double residual_2d(const double *u, int n)
{
    double r = 0.0;
    int i, j;

    for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++) {
            double d = 4.0 * u[i * n + j] - u[(i - 1) * n + j] - u[(i + 1) * n + j]
                       - u[i * n + j - 1] - u[i * n + j + 1];
            r += d * d;
        }
    return r;
}

/* Unsupported: a variadic function using va_list.  sum_rows must be skipped; scale_f32 is
 * ordinary. */
#include <stdarg.h>

void scale_f32(const float *src, float *dst, int n)
{
    int i;

    for (i = 0; i < n; i++)
        dst[i] = 2.0f * src[i];
}

/* Sums the first n elements of each of `count` float rows passed as extra arguments. */
double sum_rows(int n, int count, ...)
{
    va_list ap;
    double s = 0.0;
    int r, i;

    va_start(ap, count);
    for (r = 0; r < count; r++) {
        const float *row = va_arg(ap, const float *);
        for (i = 0; i < n; i++)
            s += row[i];
    }
    va_end(ap);
    return s;
}

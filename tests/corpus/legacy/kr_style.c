/* Pre-ANSI style that still compiles as C99: a K&R function definition (no prototype), the
 * `register` storage class, and an implicit int-to-float mix.  Integer and pointer
 * parameters only, so the default argument promotions change nothing. */

void kr_scale_add(a, b, c, n, k)
    float *a;
    float *b;
    float *c;
    int n;
    int k;
{
    register int i;

    for (i = 0; i < n; i++)
        c[i] = a[i] * k + b[i];
}

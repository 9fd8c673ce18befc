/* Kernels whose result depends on code-generation flags that change C semantics:
 * -funsigned-char (the signedness of plain char) and -fwrapv (signed overflow wraps). */

/* Plain `char` pixels: negative only where char is signed. */
void char_levels(int n, const char *c, int *out)
{
    for (int i = 0; i < n; i++)
        out[i] = c[i] < 0 ? -1 : c[i] / 3;
}

/* `a + 100 > a` is always true unless signed overflow wraps (-fwrapv); without -fwrapv the
 * caller passes no value near INT_MAX. */
void headroom(int n, const int *a, int *out)
{
    for (int i = 0; i < n; i++)
        out[i] = (a[i] + 100 > a[i]) ? 1 : 0;
}

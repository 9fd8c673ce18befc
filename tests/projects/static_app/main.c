/* static_app: two translation units with same-named static kernels, a dispatch table of static
 * kernels and a kernel called through a pointer.  Prints every result as hex floats. */
#include <stdio.h>

#include "filters.h"

#define N 23

#define SHOW(name, a)                     \
    do {                                  \
        printf("%s:", name);              \
        for (int i = 0; i < N; i++)       \
            printf(" %a", (double)(a)[i]); \
        printf("\n");                     \
    } while (0)

int main(void)
{
    float in[N], out[N];
    void (*fp)(int, const float *, float *) = invert;

    for (int i = 0; i < N; i++)
        in[i] = 1.0f + (float)((i * 7) % 11) / 3.0f;
    for (int which = 0; which < 2; which++) {
        for (int i = 0; i < N; i++)
            out[i] = -1.0f;
        filter_a(which, N, in, out);
        SHOW(which ? "sharpen" : "blur(table)", out);
    }
    blur_a(N, in, out);
    SHOW("blur_a", out);
    for (int i = 0; i < N; i++)
        out[i] = -1.0f;
    blur_b(N, in, out);
    SHOW("blur_b", out);
    fp(N, in, out);
    SHOW("invert", out);
    return 0;
}

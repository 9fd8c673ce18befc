/* Prints what the kernels of semantics.c compute; build everything with the same flags, and
 * -DWRAPV together with -fwrapv (only then may the inputs overflow). */
#include <limits.h>
#include <stdio.h>

void char_levels(int n, const char *c, int *out);
void headroom(int n, const int *a, int *out);

int main(void)
{
#ifdef WRAPV
    int a[6] = {1, INT_MAX - 50, INT_MAX, -5, INT_MIN, 12345};
#else
    int a[6] = {1, INT_MAX - 500, 77, -5, INT_MIN, 12345};
#endif
    char c[6] = {1, (char)200, 100, (char)-3, (char)128, 127};
    int out[6];

    char_levels(6, c, out);
    for (int i = 0; i < 6; i++)
        printf("char_levels[%d] = %d\n", i, out[i]);
    headroom(6, a, out);
    for (int i = 0; i < 6; i++)
        printf("headroom[%d] = %d\n", i, out[i]);
    return 0;
}

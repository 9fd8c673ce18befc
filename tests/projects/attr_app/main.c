#include <stdio.h>

void k_weak(int n, float *a);
void k_public(int n, float *a);
void k_section(int n, float *a);

int main(void)
{
    float a[5] = {1.0f, 2.5f, -3.0f, 0.125f, 7.0f};

    k_weak(5, a);
    k_public(5, a);
    k_section(5, a);
    for (int i = 0; i < 5; i++)
        printf("%a\n", (double)a[i]);
    return 0;
}

/* Kernels carrying attributes that decide how they link: a weak default (strong.c overrides
 * it), a hidden helper (not exported from a shared library), a kernel in its own section,
 * an always-exported one calling the hidden one. */
__attribute__((weak)) void k_weak(int n, float *a)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i] + 1.0f;
}

__attribute__((visibility("hidden"))) void k_hidden(int n, float *a)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 2.0f;
}

__attribute__((section(".text.fast"))) void k_section(int n, float *a)
{
    for (int i = 0; i < n; i++)
        a[i] = a[i] - 3.0f;
}

__attribute__((noinline)) void k_public(int n, float *a)
{
    k_hidden(n, a);
    for (int i = 0; i < n; i++)
        a[i] = a[i] * 0.5f;
}

/* A syntax error: the for header is missing a ';' and the assignment a ')'. */
void blur(const float *src, float *dst, int n)
{
    int i;

    for (i = 1 i < n - 1; i++)
        dst[i] = (src[i - 1] + src[i] + src[i + 1] / 3.0f;
}

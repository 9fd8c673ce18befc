/* Two nests with nothing flowing from one to the other: no pipeline, nothing to fuse. */
void independent(int h, int w, const float in[h][w], float a[h][w], float b[h][w])
{
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++)
            a[i][j] = in[i][j] * 2.0f;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++)
            b[i][j] = in[i][j] + 1.0f;
}

/* The tile driver (runtime/c66x/pycc_tiles.c) on a 3x3 box sum with asymmetric margins,
 * driven from tests/test_c66x_tiles.py:
 *   c66x_tiles ROWS COLS TILE_ROWS TILE_COLS BACKEND
 * prints the schedule (one step per line) and "same" or "different" (the tiled result
 * against the kernel run on the whole images, border included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pycc_tiles.h"

enum { TOP = 2, BOTTOM = 1, LEFT = 1, RIGHT = 3 };

/* reads rows i-1..i+1 and columns j-1..j+1: within the margins */
static void box(const float *in, int cols, int rows, float *out)
{
    int i, j;
    for (i = TOP; i < rows - BOTTOM; i++)
        for (j = LEFT; j < cols - RIGHT; j++)
            out[i * cols + j] = in[(i - 1) * cols + j - 1] + in[(i - 1) * cols + j] +
                                in[(i - 1) * cols + j + 1] + in[i * cols + j - 1] +
                                in[i * cols + j] * 2.0f + in[i * cols + j + 1] +
                                in[(i + 1) * cols + j - 1] + in[(i + 1) * cols + j] +
                                in[(i + 1) * cols + j + 1];
}

static pycc_tile_array arrays[2];

static void tile(void *context, int which, int view_cols, int view_rows)
{
    (void)context;
    box((const float *)arrays[0].buffer[which], view_cols, view_rows,
        (float *)arrays[1].buffer[which]);
}

static void trace(const char *step, int k)
{
    if (k < 0)
        printf("%s\n", step);
    else
        printf("%s %d\n", step, k);
}

int main(int argc, char **argv)
{
    int rows, cols, k;
    size_t n;
    float *in, *out, *expected;
    pycc_tiling t;
    if (argc != 6)
        return 2;
    rows = atoi(argv[1]);
    cols = atoi(argv[2]);
    n = (size_t)rows * (size_t)cols;
    in = malloc(n * sizeof *in + 1);
    out = malloc(n * sizeof *out + 1);
    expected = malloc(n * sizeof *expected + 1);
    for (k = 0; k < (int)n; k++) {
        in[k] = (float)((k * 7919) % 1000) / 7.0f;
        out[k] = expected[k] = -1.0f;
    }
    box(in, cols, rows, expected);
    memset(&t, 0, sizeof t);
    t.rows = rows;
    t.cols = cols;
    t.region.top = t.view.top = TOP;
    t.region.bottom = t.view.bottom = BOTTOM;
    t.region.left = t.view.left = LEFT;
    t.region.right = t.view.right = RIGHT;
    t.tile_rows = atoi(argv[3]);
    t.tile_cols = atoi(argv[4]);
    t.element = sizeof(float);
    t.inputs = t.outputs = 1;
    t.input = &arrays[0];
    t.output = &arrays[1];
    arrays[0].image = (char *)in;
    arrays[0].sides.top = arrays[0].sides.bottom = 1; /* read one row and column around */
    arrays[0].sides.left = arrays[0].sides.right = 1;
    arrays[1].image = (char *)out;
    arrays[1].sides = t.region;
    pycc_spm_reset();
    for (k = 0; k < 4; k++)
        arrays[k / 2].buffer[k % 2] = pycc_spm_alloc(pycc_tile_buffer_bytes(&t));
    if (!pycc_tiles_possible(&t))
        return 3;
    pycc_edma_backend = atoi(argv[5]);
    pycc_tiles_trace = trace;
    pycc_tiles_run(&t, tile, NULL);
    printf("%s\n", memcmp(out, expected, n * sizeof *out) ? "different" : "same");
    free(in);
    free(out);
    free(expected);
    return 0;
}

/* pycc_tiles.c: Algorithm 4 (double-buffer rotation) over the tiles of pycc_tiles.h. */
#include "pycc_tiles.h"

#include <stddef.h>

/* L2 SRAM for tile buffers: a C6678 core has 512 KiB of L2; 384 KiB are taken for tiles by
 * default, the rest left to the program (stack, data, code). Link the section `.pycc_l2`
 * into L2 SRAM on the device. */
#ifndef PYCC_SPM_BYTES
#define PYCC_SPM_BYTES (384L * 1024L)
#endif

#if defined(__TI_COMPILER_VERSION__)
#pragma DATA_SECTION(pycc_spm_arena, ".pycc_l2")
#pragma DATA_ALIGN(pycc_spm_arena, 64)
static char pycc_spm_arena[PYCC_SPM_BYTES];
#else
static char pycc_spm_arena[PYCC_SPM_BYTES] __attribute__((aligned(64)));
#endif
static long pycc_spm_used;

void (*pycc_tiles_trace)(const char *step, int tile) = NULL;

static void pycc_trace(const char *step, int tile)
{
    if (pycc_tiles_trace != NULL)
        pycc_tiles_trace(step, tile);
}

void *pycc_spm_alloc(long bytes)
{
    void *p;
    bytes = (bytes + 63) & ~63L; /* every buffer 64-byte aligned (a declared row_align) */
    if (bytes > PYCC_SPM_BYTES - pycc_spm_used)
        return NULL;
    p = pycc_spm_arena + pycc_spm_used;
    pycc_spm_used += bytes;
    return p;
}

void pycc_spm_reset(void)
{
    pycc_spm_used = 0;
}

long pycc_tile_buffer_bytes(const pycc_tiling *t)
{
    long pitch = (long)t->tile_cols + t->left + t->right;
    long rows = (long)t->tile_rows + t->top + t->bottom;
    return (pitch * rows * t->element + 7) & ~7L;
}

/* where tile k lies: its first output row and column in the images, its size */
typedef struct {
    int row, col, rows, cols;
} pycc_tile_place;

/* Every tile has the same size (the tile size, or the whole region where it is smaller): a
 * tile that would cross the region's last row or column is moved back inside it, so its
 * first outputs are computed a second time, with the same values. The view's pitch is then
 * the same for every tile, and a declared row alignment holds in the buffers too. */
static pycc_tile_place pycc_tile_at(const pycc_tiling *t, int k)
{
    int out_cols = t->cols - t->left - t->right;
    int out_rows = t->rows - t->top - t->bottom;
    int across = (out_cols + t->tile_cols - 1) / t->tile_cols;
    pycc_tile_place p;
    p.rows = out_rows < t->tile_rows ? out_rows : t->tile_rows;
    p.cols = out_cols < t->tile_cols ? out_cols : t->tile_cols;
    p.row = (k / across) * t->tile_rows;
    p.col = (k % across) * t->tile_cols;
    if (p.row + p.rows > out_rows)
        p.row = out_rows - p.rows;
    if (p.col + p.cols > out_cols)
        p.col = out_cols - p.cols;
    p.row += t->top;
    p.col += t->left;
    return p;
}

static int pycc_view_cols(const pycc_tiling *t, const pycc_tile_place *p)
{
    return p->cols + t->left + t->right;
}

/* tile k's inputs (the rows and columns each is read at) into buffer[which] */
static void pycc_tile_in(const pycc_tiling *t, int k, int which)
{
    pycc_tile_place p = pycc_tile_at(t, k);
    int pitch = pycc_view_cols(t, &p), e = t->element, a;
    pycc_trace("in", k);
    for (a = 0; a < t->inputs; a++) {
        const pycc_tile_array *in = &t->input[a];
        long from = ((long)(p.row - in->up) * t->cols + (p.col - in->left)) * e;
        long to = ((long)(t->top - in->up) * pitch + (t->left - in->left)) * e;
        pycc_edma_copy_2d(in->buffer[which] + to, in->image + from,
                          (unsigned)((p.cols + in->left + in->right) * e),
                          (unsigned)(p.rows + in->up + in->down), t->cols * e, pitch * e, k);
    }
}

/* tile k's outputs from buffer[which] to the images */
static void pycc_tile_out(const pycc_tiling *t, int k, int which)
{
    pycc_tile_place p = pycc_tile_at(t, k);
    int pitch = pycc_view_cols(t, &p), e = t->element, a;
    pycc_trace("out", k);
    for (a = 0; a < t->outputs; a++) {
        const pycc_tile_array *out = &t->output[a];
        long from = ((long)t->top * pitch + t->left) * e;
        long to = ((long)p.row * t->cols + p.col) * e;
        pycc_edma_copy_2d(out->image + to, out->buffer[which] + from, (unsigned)(p.cols * e),
                          (unsigned)p.rows, pitch * e, t->cols * e, k);
    }
}

static void pycc_tile_compute(const pycc_tiling *t, int k, int which, pycc_tile_kernel kernel,
                              void *context)
{
    pycc_tile_place p = pycc_tile_at(t, k);
    int view_cols = pycc_view_cols(t, &p), view_rows = p.rows + t->top + t->bottom, a;
    size_t bytes = (size_t)view_cols * (size_t)view_rows * (size_t)t->element;
    for (a = 0; a < t->inputs; a++)
        pycc_edma_cpu_uses(t->input[a].buffer[which], bytes, k);
    for (a = 0; a < t->outputs; a++)
        pycc_edma_cpu_uses(t->output[a].buffer[which], bytes, k);
    pycc_trace("compute", k);
    kernel(context, which, view_cols, view_rows);
}

/* whether the images can be run tile by tile: buffers allocated, every transfer one PaRAM
 * set, no output image overlapping another image (then the kernel runs on the images) */
int pycc_tiles_possible(const pycc_tiling *t)
{
    long image = (long)t->rows * t->cols * t->element;
    int a, b, k;
    if ((long)t->cols * t->element > 32767) /* SRCBIDX/DSTBIDX: 16 bits, signed */
        return 0;
    for (a = 0; a < t->inputs + t->outputs; a++) {
        const pycc_tile_array *x = a < t->inputs ? &t->input[a] : &t->output[a - t->inputs];
        for (k = 0; k < 2; k++)
            if (x->buffer[k] == NULL)
                return 0;
        if (a < t->inputs)
            continue;
        for (b = 0; b < t->inputs + t->outputs; b++) {
            const pycc_tile_array *y = b < t->inputs ? &t->input[b] : &t->output[b - t->inputs];
            if (y != x && x->image < y->image + image && y->image < x->image + image)
                return 0;
        }
    }
    return 1;
}

static void pycc_wait(void)
{
    pycc_trace("wait", -1);
    pycc_edma_wait_all();
}

void pycc_tiles_run(const pycc_tiling *t, pycc_tile_kernel kernel, void *context)
{
    int out_rows = t->rows - t->top - t->bottom, out_cols = t->cols - t->left - t->right;
    int n, i;
    if (out_rows <= 0 || out_cols <= 0)
        return; /* the kernel's loops run zero times */
    n = ((out_rows + t->tile_rows - 1) / t->tile_rows) *
        ((out_cols + t->tile_cols - 1) / t->tile_cols);
    pycc_edma_init();
    pycc_tile_in(t, 0, 0);
    if (n > 1)
        pycc_tile_in(t, 1, 1);
    pycc_wait();
    pycc_tile_compute(t, 0, 0, kernel, context);
    for (i = 1; i < n - 1; i++) {
        /* in flight while tile i is computed: inputs of i + 1, outputs of i - 1 */
        pycc_tile_in(t, i + 1, (i + 1) % 2);
        pycc_tile_out(t, i - 1, (i + 1) % 2);
        pycc_tile_compute(t, i, i % 2, kernel, context);
        pycc_wait(); /* wait: the transfers of this step */
    }
    if (n > 1) {
        pycc_tile_compute(t, n - 1, (n - 1) % 2, kernel, context);
        pycc_tile_out(t, n - 2, (n - 2) % 2);
    }
    pycc_tile_out(t, n - 1, (n - 1) % 2);
    pycc_wait();
    pycc_edma_finish();
}

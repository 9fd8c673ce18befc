/* pycc_tiles.c: Algorithm 4 (double-buffer rotation) over the tiles of pycc_tiles.h
 * (pycc-stencil runtime). */
#include "pycc_tiles.h"

#include <stddef.h>

#define PYCC_SPM_STAGGER 192L /* bytes between buffers (pycc_spm_alloc) */

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
    /* every buffer 64-byte aligned (a declared row_align) and 3 cache lines after the one
     * before: buffers whose sizes are multiples of L1D's 16 KiB way would otherwise share
     * its sets (tile_geometry.BUFFER_STAGGER) */
    bytes = ((bytes + 63) & ~63L) + PYCC_SPM_STAGGER;
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
    long cols = (long)t->tile_cols + t->view.left + t->view.right;
    long rows = (long)t->tile_rows + t->view.top + t->view.bottom;
    return cols * rows * t->element;
}

/* rows [row, row + rows) x columns [col, col + cols) of the images */
typedef struct {
    int row, col, rows, cols;
} pycc_box;

static int pycc_min(int a, int b)
{
    return a < b ? a : b;
}

static int pycc_max(int a, int b)
{
    return a > b ? a : b;
}

/* `box` grown by `sides` (negative: shrunk), clipped to the images */
static pycc_box pycc_grown(const pycc_tiling *t, pycc_box box, pycc_sides sides)
{
    pycc_box g;
    g.row = pycc_max(0, box.row - sides.top);
    g.col = pycc_max(0, box.col - sides.left);
    g.rows = pycc_min(t->rows, box.row + box.rows + sides.bottom) - g.row;
    g.cols = pycc_min(t->cols, box.col + box.cols + sides.right) - g.col;
    return g;
}

/* `box` inside the margins `sides` of the images (possibly empty) */
static pycc_box pycc_inside(const pycc_tiling *t, pycc_box box, pycc_sides sides)
{
    pycc_box g;
    g.row = pycc_max(box.row, sides.top);
    g.col = pycc_max(box.col, sides.left);
    g.rows = pycc_max(0, pycc_min(box.row + box.rows, t->rows - sides.bottom) - g.row);
    g.cols = pycc_max(0, pycc_min(box.col + box.cols, t->cols - sides.right) - g.col);
    return g;
}

static pycc_box pycc_region(const pycc_tiling *t)
{
    pycc_box whole = {0, 0, t->rows, t->cols};
    return pycc_inside(t, whole, t->region);
}

/* Tile k. Every tile has the same size (the tile size, or the whole region where it is
 * smaller): a tile that would cross the region's last row or column is moved back inside
 * it, so its first points are computed a second time, with the same values; inside the
 * images' margins every view then has the same pitch, and a declared row alignment holds in
 * the buffers too. */
static pycc_box pycc_tile_at(const pycc_tiling *t, int k)
{
    pycc_box region = pycc_region(t), p;
    int across = (region.cols + t->tile_cols - 1) / t->tile_cols;
    p.rows = pycc_min(region.rows, t->tile_rows);
    p.cols = pycc_min(region.cols, t->tile_cols);
    p.row = pycc_min((k / across) * t->tile_rows, region.rows - p.rows) + region.row;
    p.col = pycc_min((k % across) * t->tile_cols, region.cols - p.cols) + region.col;
    return p;
}

/* `part` of the images, as an address in `base` (an image: its pitch is the images' width,
 * else a buffer holding `view`) */
static char *pycc_at(const pycc_tiling *t, char *base, pycc_box part, const pycc_box *view)
{
    long row = view ? part.row - view->row : part.row;
    long col = view ? part.col - view->col : part.col;
    return base + (row * (view ? view->cols : t->cols) + col) * t->element;
}

/* tile k's inputs (as far around it as each is read) into buffer[which] */
static void pycc_tile_in(const pycc_tiling *t, int k, int which)
{
    pycc_box tile = pycc_tile_at(t, k), view = pycc_grown(t, tile, t->view);
    int e = t->element, a;
    pycc_trace("in", k);
    for (a = 0; a < t->inputs; a++) {
        const pycc_tile_array *in = &t->input[a];
        pycc_box part = pycc_grown(t, tile, in->sides);
        pycc_edma_copy_2d(pycc_at(t, in->buffer[which], part, &view),
                          pycc_at(t, in->image, part, NULL), (unsigned)(part.cols * e),
                          (unsigned)part.rows, t->cols * e, view.cols * e, k);
    }
}

/* tile k's outputs (its points inside each output's margins) from buffer[which] */
static void pycc_tile_out(const pycc_tiling *t, int k, int which)
{
    pycc_box tile = pycc_tile_at(t, k), view = pycc_grown(t, tile, t->view);
    int e = t->element, a;
    pycc_trace("out", k);
    for (a = 0; a < t->outputs; a++) {
        const pycc_tile_array *out = &t->output[a];
        pycc_box part = pycc_inside(t, tile, out->sides);
        pycc_edma_copy_2d(pycc_at(t, out->image, part, NULL),
                          pycc_at(t, out->buffer[which], part, &view), (unsigned)(part.cols * e),
                          (unsigned)part.rows, view.cols * e, t->cols * e, k);
    }
}

static void pycc_tile_compute(const pycc_tiling *t, int k, int which, pycc_tile_kernel kernel,
                              void *context)
{
    pycc_box view = pycc_grown(t, pycc_tile_at(t, k), t->view);
    size_t bytes = (size_t)view.cols * (size_t)view.rows * (size_t)t->element;
    int a;
    for (a = 0; a < t->inputs; a++)
        pycc_edma_cpu_uses(t->input[a].buffer[which], bytes, k);
    for (a = 0; a < t->outputs; a++)
        pycc_edma_cpu_uses(t->output[a].buffer[which], bytes, k);
    pycc_trace("compute", k);
    kernel(context, which, view.cols, view.rows);
}

/* the bytes of `t`'s images that array `a` is read or written at: [*first, *end) */
static void pycc_extent(const pycc_tiling *t, int a, char **first, char **end)
{
    const pycc_tile_array *x = a < t->inputs ? &t->input[a] : &t->output[a - t->inputs];
    pycc_box whole = {0, 0, t->rows, t->cols};
    pycc_box part = a < t->inputs ? pycc_grown(t, pycc_region(t), x->sides)
                                   : pycc_inside(t, whole, x->sides);
    *first = x->image + ((long)part.row * t->cols + part.col) * t->element;
    *end = *first + ((long)(part.rows - 1) * t->cols + part.cols) * t->element;
}

/* Whether the images can be run tile by tile: a tile of at least one point, every transfer
 * one PaRAM set, the buffers allocated, a declared row alignment kept in them, and no
 * output overlapping another image where they are used (else the kernel runs on the
 * images). */
int pycc_tiles_possible(const pycc_tiling *t)
{
    pycc_box region = pycc_region(t);
    long pitch = ((long)t->tile_cols + t->view.left + t->view.right) * t->element;
    int n = t->inputs + t->outputs, a, b, k;
    char *first_a, *end_a, *first_b, *end_b;
    if (t->tile_rows < 1 || t->tile_cols < 1 || pitch > 32767 || t->tile_rows > 65535)
        return 0;
    if ((long)t->cols * t->element > 32767) /* SRCBIDX/DSTBIDX: 16 bits, signed */
        return 0;
    if (t->row_align > 1 && (pitch % t->row_align || (long)t->cols * t->element % t->row_align))
        return 0;
    for (a = 0; a < n; a++) {
        const pycc_tile_array *x = a < t->inputs ? &t->input[a] : &t->output[a - t->inputs];
        for (k = 0; k < 2; k++)
            if (x->buffer[k] == NULL)
                return 0;
    }
    if (region.rows <= 0 || region.cols <= 0)
        return 1;
    for (a = t->inputs; a < n; a++) {
        pycc_extent(t, a, &first_a, &end_a);
        for (b = 0; b < n; b++) {
            if (b == a)
                continue;
            pycc_extent(t, b, &first_b, &end_b);
            if (first_a < end_a && first_b < end_b && first_a < end_b && first_b < end_a)
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
    pycc_box region = pycc_region(t);
    int n, i;
    if (region.rows <= 0 || region.cols <= 0)
        return; /* the kernel's loops run zero times */
    n = ((region.rows + t->tile_rows - 1) / t->tile_rows) *
        ((region.cols + t->tile_cols - 1) / t->tile_cols);
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

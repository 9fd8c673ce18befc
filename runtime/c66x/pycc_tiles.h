/* pycc_tiles.h: an image kernel run tile by tile out of L2 SRAM, double-buffered through the
 * EDMA (Algorithm 4 of the C66x dissertation: while tile i is computed, the inputs of tile
 * i+1 come in and the outputs of tile i-1 go out), pycc-stencil runtime.
 *
 * The kernel computes output rows [top, rows - bottom) x columns [left, cols - right) of
 * images `cols` elements wide; the region is cut into tiles of tile_rows x tile_cols outputs
 * (a tile at the right or bottom edge is moved back inside the region). A tile's buffers are views of the same shape as
 * the kernel's images, (tile rows + top + bottom) x (tile columns + left + right) with that
 * pitch, so the kernel itself runs on them unchanged: its loops then cover exactly the
 * tile. Only the rows and columns an input is read at (its halo, from the access offsets,
 * never beyond the margins) are transferred in, and only the tile's outputs out.
 */
#ifndef PYCC_TILES_H
#define PYCC_TILES_H

#include "pycc_edma.h"

typedef struct {
    char *image;
    int up, down, left, right; /* rows/columns read around an output (inputs; 0 for outputs) */
    char *buffer[2];           /* the two tile buffers (ping-pong) */
} pycc_tile_array;

typedef struct {
    int rows, cols;                   /* the images */
    int top, bottom, left, right;     /* the margins the kernel's loops leave out */
    int tile_rows, tile_cols;         /* outputs per full tile */
    int element;                      /* bytes per element */
    int inputs, outputs;
    pycc_tile_array *input, *output;  /* input[0..inputs), output[0..outputs) */
} pycc_tiling;

/* computes one tile: the kernel on buffer[which] of every array, viewed as images
 * `view_cols` elements wide and `view_rows` high */
typedef void (*pycc_tile_kernel)(void *context, int which, int view_cols, int view_rows);

/* bytes of one tile buffer (all arrays share the shape) */
long pycc_tile_buffer_bytes(const pycc_tiling *t);

/* whether the tiled run is possible (else the kernel runs on the images, through the cache) */
int pycc_tiles_possible(const pycc_tiling *t);

/* the kernel over the whole images, tile by tile; the buffers must be set */
void pycc_tiles_run(const pycc_tiling *t, pycc_tile_kernel kernel, void *context);

/* if set, called at every step of pycc_tiles_run ("in", "out", "compute" with the tile,
 * "wait" with -1): the schedule, for tests and debugging */
extern void (*pycc_tiles_trace)(const char *step, int tile);

/* the L2 scratchpad: a frame heap reset at each kernel call */
void *pycc_spm_alloc(long bytes);
void pycc_spm_reset(void);

#endif

/* pycc_tiles.h: an image kernel run tile by tile out of L2 SRAM, double-buffered through the
 * EDMA (Algorithm 4 of the C66x dissertation: while tile i is computed, the inputs of tile
 * i+1 come in and the outputs of tile i-1 go out), pycc-stencil runtime.
 *
 * The kernel works on images `cols` elements wide (the row stride) and `rows` high, in one
 * or several stages (loop nests), each writing its outputs inside margins of the images and
 * reading at constant offsets. The region where some output is written is cut into tiles of
 * tile_rows x tile_cols points (a tile that would cross the region's last row or column is
 * moved back inside it, so all tiles have one size). For each tile the kernel itself runs,
 * unchanged, on a view: the tile grown by `view` on each side (clipped to the images), with
 * the view's width as the kernel's width parameter and its height as the height; `view` is
 * what the stages need around a tile for the tile's points to come out as in the whole
 * images (a single stage: its margins; a pipeline: its stages' margins and halos chained).
 * Each input is transferred in around the tile as far as it is read (`sides`: its halo),
 * each output out at the tile's points inside its own margins (`sides`).
 */
#ifndef PYCC_TILES_H
#define PYCC_TILES_H

#include "pycc_edma.h"

/* rows above and below, columns left and right */
typedef struct {
    int top, bottom, left, right;
} pycc_sides;

typedef struct {
    char *image;
    pycc_sides sides;  /* an input: how far around a tile it is read; an output: the margins
                          of the images it is written inside */
    char *buffer[2];   /* the two tile buffers (ping-pong) */
} pycc_tile_array;

typedef struct {
    int rows, cols;                  /* the images */
    pycc_sides region;               /* the margins of the region where outputs are written */
    pycc_sides view;                 /* what the kernel needs around a tile */
    int tile_rows, tile_cols;        /* points per tile */
    int row_align;                   /* bytes every row must start at a multiple of (0: none) */
    int element;                     /* bytes per element */
    int inputs, outputs;
    pycc_tile_array *input, *output; /* input[0..inputs), output[0..outputs) */
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

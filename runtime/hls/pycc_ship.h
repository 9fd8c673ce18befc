/* pycc_ship.h: the data movement of pycc-stencil's FPGA kernels (`--target hls`), the
 * `ship` of Mayer, Brandner and Philippsen (IMPACT'24, Fig. 6): d-dimensional boxes copied
 * between an array in DDR and an on-chip buffer, and within a buffer (the shift of a chunk
 * buffer), one row (the contiguous innermost dimension) at a time, which is the burst.
 *
 * This is the plain C form, for C simulation: it compiles as C99 and as C++ (g++, as Vitis
 * HLS simulates a kernel), with no HLS headers. Every copy is clamped to the windows of its
 * two arrays: a ship near the end of an array copies only the elements that exist (the
 * window of a DDR array is the part the loop nest accesses), and a flush is trimmed to the
 * elements the tile wrote (the window of the written ones).
 */
#ifndef PYCC_SHIP_H
#define PYCC_SHIP_H

#include <stddef.h>
#include <string.h>

#define PYCC_SHIP_MAX_RANK 8

/* floor division and modulo as isl's generated C uses them */
#ifndef floord
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#endif

/* An array ships read or write: its elements' size, its extents (outermost first; the last
 * one is the row), the window of elements a ship may touch (lo..hi, inclusive, per
 * dimension), and whether it is in memory (DDR) rather than on chip. */
typedef struct {
    void *base;
    size_t element;
    int rank;
    int memory;
    long extent[PYCC_SHIP_MAX_RANK];
    long lo[PYCC_SHIP_MAX_RANK];
    long hi[PYCC_SHIP_MAX_RANK];
} pycc_array;

/* `base` seen as an array of `rank` dimensions of `extent` elements, its window the whole
 * array. */
static inline pycc_array pycc_array_of(void *base, size_t element, int rank, const long *extent)
{
    pycc_array a;
    int k;
    a.base = base;
    a.element = element;
    a.rank = rank;
    a.memory = 0;
    for (k = 0; k < rank; k++) {
        a.extent[k] = extent[k];
        a.lo[k] = 0;
        a.hi[k] = extent[k] - 1;
    }
    return a;
}

/* An array in memory (DDR): what a ship reads from it or writes to it is traffic. */
static inline pycc_array pycc_memory_of(void *base, size_t element, int rank, const long *extent)
{
    pycc_array a = pycc_array_of(base, element, rank, extent);
    a.memory = 1;
    return a;
}

#ifdef PYCC_SHIP_COUNT
/* with -DPYCC_SHIP_COUNT: the words read from memory, written to it, and the bursts (rows)
 * of either, as the traffic model counts them (emit/hls_model.py) */
static unsigned long pycc_ship_counted[3];
#endif

/* The same array with its window narrowed to lo..hi (inclusive, per dimension). */
static inline pycc_array pycc_array_window(pycc_array a, const long *lo, const long *hi)
{
    int k;
    for (k = 0; k < a.rank; k++) {
        a.lo[k] = lo[k] > a.lo[k] ? lo[k] : a.lo[k];
        a.hi[k] = hi[k] < a.hi[k] ? hi[k] : a.hi[k];
    }
    return a;
}

static inline long pycc_ship_offset(const pycc_array *a, const long *at, const long *index)
{
    long offset = 0;
    int k;
    for (k = 0; k < a->rank; k++)
        offset = offset * a->extent[k] + at[k] + index[k];
    return offset;
}

/* Copy the box of size[] elements at src_at[] of `src` to dst_at[] of `dst` (both arrays of
 * the same rank), as far as it lies in both windows: one memmove per row, the rows in the
 * order that makes an overlapping copy within one array (a shift) right. */
static inline void pycc_ship_box(pycc_array *dst, const long *dst_at, const pycc_array *src,
                                 const long *src_at, const long *size)
{
    long first[PYCC_SHIP_MAX_RANK], last[PYCC_SHIP_MAX_RANK], index[PYCC_SHIP_MAX_RANK];
    long rows = 1, row, step;
    int k, rank = dst->rank, backward;
    size_t bytes;
    if (rank < 1 || rank > PYCC_SHIP_MAX_RANK || src->rank != rank)
        return;
    for (k = 0; k < rank; k++) {
        long low = 0, high = size[k] - 1;
        if (src->lo[k] - src_at[k] > low) low = src->lo[k] - src_at[k];
        if (dst->lo[k] - dst_at[k] > low) low = dst->lo[k] - dst_at[k];
        if (src->hi[k] - src_at[k] < high) high = src->hi[k] - src_at[k];
        if (dst->hi[k] - dst_at[k] < high) high = dst->hi[k] - dst_at[k];
        if (low > high)
            return;
        first[k] = low;
        last[k] = high;
        if (k < rank - 1)
            rows *= high - low + 1;
    }
    bytes = (size_t)(last[rank - 1] - first[rank - 1] + 1) * dst->element;
    for (k = 0; k < rank; k++)
        index[k] = first[k];
    backward = src->base == dst->base &&
               pycc_ship_offset(dst, dst_at, index) > pycc_ship_offset(src, src_at, index);
    if (backward)
        for (k = 0; k < rank - 1; k++)
            index[k] = last[k];
    for (row = 0; row < rows; row++) {
        char *to = (char *)dst->base + (size_t)pycc_ship_offset(dst, dst_at, index) * dst->element;
        const char *from =
            (const char *)src->base + (size_t)pycc_ship_offset(src, src_at, index) * src->element;
        memmove(to, from, bytes);
#ifdef PYCC_SHIP_COUNT
        pycc_ship_counted[0] += src->memory ? bytes / src->element : 0;
        pycc_ship_counted[1] += dst->memory ? bytes / dst->element : 0;
        pycc_ship_counted[2] += src->memory || dst->memory;
#endif
        step = backward ? -1 : 1;
        for (k = rank - 2; k >= 0; k--) {  /* the next row: an odometer over the outer dims */
            index[k] += step;
            if (index[k] >= first[k] && index[k] <= last[k])
                break;
            index[k] = backward ? last[k] : first[k];
        }
    }
}

/* Fig. 6: ship(S, os, D, od, di, R) copies R consecutive di-dimensional segments (di = 1: a
 * row, d: the whole box) from offset os[] of S to offset od[] of D; a segment's extents are
 * those of `segment` (the buffer's shape) in its di innermost dimensions, the R repetitions
 * follow one another along dimension di + 1 (numbered from the innermost, 1), and the outer
 * dimensions stay at their offsets. */
static inline void pycc_ship(const pycc_array *S, const long *os, pycc_array *D, const long *od,
                             int di, long R, const long *segment)
{
    long size[PYCC_SHIP_MAX_RANK];
    int k, rank = D->rank;
    for (k = 0; k < rank; k++) {
        int x = rank - k;  /* Fig. 6's numbering: 1 is the innermost dimension */
        size[k] = x <= di ? segment[k] : x == di + 1 ? R : 1;
    }
    pycc_ship_box(D, od, S, os, size);
}

#endif

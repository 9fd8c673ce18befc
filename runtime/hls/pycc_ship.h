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

/* whether position `at` lies in the window lo..hi: the guard of a ship's element as Vitis
 * synthesizes it (loops of constant trip counts over the box) */
static inline int pycc_within(long at, long lo, long hi)
{
    return lo <= at && at <= hi;
}

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

#if defined(__cplusplus) && defined(PYCC_SHIP_BURST) && PYCC_SHIP_BURST > 1
/* The w-wide form (C++, -DPYCC_SHIP_BURST=w, Vitis HLS's ap_int.h on the include path): a
 * row of memory moves as ap_uint<w x element bits> words of w elements, each word read
 * (and, for a row that ends inside it, read before it is written) whole, as an AXI master
 * of that width moves it. Used where the rows of the array in memory are a multiple of w
 * elements long (the halos made the copies start on a word), else the plain form. */
#include <ap_int.h>
#include <stdint.h>

template <int BYTES> struct pycc_burst {
    enum { BITS = 8 * BYTES * PYCC_SHIP_BURST, CHUNKS = (BITS + 63) / 64 };
    typedef ap_uint<BITS> word;

    static word load(const char *memory, long w)
    {
        word value = 0;
        for (int k = 0; k < CHUNKS; k++) {
            uint64_t chunk = 0;
            int bytes = BITS / 8 - 8 * k < 8 ? BITS / 8 - 8 * k : 8;
            memcpy(&chunk, memory + (w * PYCC_SHIP_BURST) * BYTES + 8 * k, bytes);
            value.range(64 * k + 8 * bytes - 1, 64 * k) = chunk;
        }
        return value;
    }

    static void store(char *memory, long w, const word &value)
    {
        for (int k = 0; k < CHUNKS; k++) {
            int bytes = BITS / 8 - 8 * k < 8 ? BITS / 8 - 8 * k : 8;
            uint64_t chunk = value.range(64 * k + 8 * bytes - 1, 64 * k).to_uint64();
            memcpy(memory + (w * PYCC_SHIP_BURST) * BYTES + 8 * k, &chunk, bytes);
        }
    }

    /* elements [at, at + count) of memory (at: from its base) to `buffer`, or from it when
     * `writing` (each word read first: its other elements stay as they were) */
    static void move(char *memory, long at, char *buffer, long count, bool writing)
    {
        for (long w = at / PYCC_SHIP_BURST; w * PYCC_SHIP_BURST < at + count; w++) {
            word value = load(memory, w);
            for (int e = 0; e < PYCC_SHIP_BURST; e++) {
                long element = w * PYCC_SHIP_BURST + e;
                if (element < at || element >= at + count)
                    continue;
                char *slot = buffer + (element - at) * BYTES;
                uint64_t bits = 0;
                if (writing) {
                    memcpy(&bits, slot, BYTES);
                    value.range(8 * BYTES * (e + 1) - 1, 8 * BYTES * e) = bits;
                } else {
                    bits = value.range(8 * BYTES * (e + 1) - 1, 8 * BYTES * e).to_uint64();
                    memcpy(slot, &bits, BYTES);
                }
            }
            if (writing)
                store(memory, w, value);
        }
    }
};

/* Move one row through the w-wide words if its memory side has them; false if not. */
static inline bool pycc_burst_row(const pycc_array *dst, long to, const pycc_array *src,
                                  long from, long count)
{
    const pycc_array *memory = src->memory ? src : dst->memory ? dst : NULL;
    if (memory == NULL || src->memory == dst->memory ||
        memory->extent[memory->rank - 1] % PYCC_SHIP_BURST != 0)
        return false;
    char *d = (char *)dst->base, *s = (char *)src->base;
    bool writing = dst->memory;
    char *in_memory = writing ? d : s;
    long at = writing ? to : from;
    char *buffer = writing ? s + from * (long)src->element : d + to * (long)dst->element;
    switch (memory->element) {
    case 4:
        pycc_burst<4>::move(in_memory, at, buffer, count, writing);
        return true;
    case 8:
        pycc_burst<8>::move(in_memory, at, buffer, count, writing);
        return true;
    default:
        return false;
    }
}
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
#if defined(__cplusplus) && defined(PYCC_SHIP_BURST) && PYCC_SHIP_BURST > 1
        if (!pycc_burst_row(dst, pycc_ship_offset(dst, dst_at, index), src,
                            pycc_ship_offset(src, src_at, index), (long)(bytes / dst->element)))
#endif
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

/* pycc_edma.c: the EDMA manager of pycc_edma.h, for the C66x and for the host (pycc-stencil
 * runtime).
 *
 * Device backend (built by cl6x, or by any compiler with PYCC_EDMA_DEVICE defined; it has
 * never run here: no C66x on this machine). Register level, after the EDMA3 channel
 * controller's documented layout (SPRUGS5): PaRAM set n at CC + 0x4000 + 32 n (OPT, SRC,
 * BCNT:ACNT, DST, DSTBIDX:SRCBIDX, BCNTRLD:LINK, DSTCIDX:SRCCIDX, CCNT), a transfer started by
 * setting its channel's bit in ESR (CC + 0x1010), completion seen as the TCC's bit in IPR
 * (CC + 0x1068) and cleared through ICR (CC + 0x1070); channel n is mapped to PaRAM set n
 * through DCHMAP (CC + 0x100 + 4 n). Each transfer is one AB-synchronized set (OPT.SYNCDIM),
 * CCNT = 1, a null link, completion code = its channel with TCINTEN so that IPR records it.
 * Core-local L2 addresses (0x00800000..) are given to the EDMA as their global alias
 * (0x10000000 + core << 24), since the EDMA is not inside the core. The EDMA does not see
 * the caches: before a transfer the rows it reads from cached (external) memory are written
 * back and the rows it writes there written back and invalidated, and after its wait those
 * are invalidated again (the CorePac's L2 block coherence operations, SPRUGW0: base address
 * and word count registers, polled until the count is 0; they also cover L1D).
 * The channels are CC1's FIRST_CHANNEL.. through the global ESR/IPR/ICR: no shadow region or
 * resource manager, so another user of those channels (another core, TI's EDMA3 LLD) must be
 * kept off them; the manager's state is global (one kernel call at a time).
 *
 * Host backends: see pycc_edma.h.
 */
#include "pycc_edma.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__TI_COMPILER_VERSION__) && !defined(PYCC_EDMA_HOST)
#define PYCC_EDMA_DEVICE 1
#endif

/* transfers one kernel call may have in flight at once (Algorithm 4: the inputs of one tile
 * and the outputs of another) */
#define PYCC_EDMA_MAX_FLIGHT 32

int pycc_edma_backend = PYCC_EDMA_IMMEDIATE;

static void pycc_edma_fail(int tile, const char *what)
{
    fprintf(stderr, "pycc_edma: tile %d: %s\n", tile, what);
    abort();
}

static void pycc_edma_validate(unsigned acnt, unsigned bcnt, int src_bidx, int dst_bidx,
                               int tile)
{
    if (acnt > 65535u || bcnt > 65535u)
        pycc_edma_fail(tile, "ACNT or BCNT above 65535: not one PaRAM set");
    if (src_bidx < -32768 || src_bidx > 32767 || dst_bidx < -32768 || dst_bidx > 32767)
        pycc_edma_fail(tile, "a row pitch outside SRCBIDX/DSTBIDX's 16 bits: not one PaRAM set");
}

#if defined(PYCC_EDMA_DEVICE)

#ifndef PYCC_EDMA_CC_BASE
#define PYCC_EDMA_CC_BASE 0x02720000u /* C6678: EDMA3 channel controller 1 */
#endif
#ifndef PYCC_EDMA_FIRST_CHANNEL
#define PYCC_EDMA_FIRST_CHANNEL 0u /* channels FIRST .. FIRST + MAX_FLIGHT - 1 are ours */
#endif
#if PYCC_EDMA_FIRST_CHANNEL + PYCC_EDMA_MAX_FLIGHT > 32
#error "the manager's channels must be among the first 32 (ESR, IPR, ICR)"
#endif
#if defined(__TI_COMPILER_VERSION__)
extern __cregister volatile unsigned int DNUM; /* this core's number */
#define PYCC_CORE DNUM
#else
#define PYCC_CORE 0u
#endif

#define PYCC_REG(offset) (*(volatile uint32_t *)(uintptr_t)(PYCC_EDMA_CC_BASE + (offset)))
#define PYCC_DCHMAP(n) PYCC_REG(0x0100u + 4u * (n))
#define PYCC_ESR PYCC_REG(0x1010u)
#define PYCC_IPR PYCC_REG(0x1068u)
#define PYCC_ICR PYCC_REG(0x1070u)
#define PYCC_PARAM(n, word) PYCC_REG(0x4000u + 32u * (n) + 4u * (word))

#define PYCC_OPT_SYNCDIM_AB (1u << 2)
#define PYCC_OPT_TCC(n) (((uint32_t)(n)&0x3fu) << 12)
#define PYCC_OPT_TCINTEN (1u << 20)

static uint32_t pycc_edma_pending; /* bit per channel in flight */
static unsigned pycc_edma_next;
static const char *pycc_edma_written[PYCC_EDMA_MAX_FLIGHT]; /* span each transfer writes */
static size_t pycc_edma_written_bytes[PYCC_EDMA_MAX_FLIGHT];

/* L2 block coherence operations (CorePac registers): base address, word count */
#define PYCC_CACHE(offset) (*(volatile uint32_t *)(uintptr_t)(0x01840000u + (offset)))
#define PYCC_L2WB 0x4000u   /* L2WBAR, L2WWC: write back */
#define PYCC_L2WBINV 0x4010u /* L2WIBAR, L2WIWC: write back and invalidate */
#define PYCC_L2INV 0x4018u  /* L2IBAR, L2IWC: invalidate */

/* core-local memory (L1D, L2 SRAM) is not cached: nothing to keep coherent */
static int pycc_cached(const void *p)
{
    return ((uint32_t)(uintptr_t)p & 0xff000000u) != 0u;
}

static void pycc_cache_block(uint32_t operation, const void *p, size_t bytes)
{
    uint32_t start = (uint32_t)(uintptr_t)p & ~127u, end = (uint32_t)(uintptr_t)p + bytes;
    while (start < end) {
        uint32_t words = (end - start + 3u) / 4u;
        if (words > 65408u)
            words = 65408u; /* the count is 16 bits; a whole number of 128-byte lines */
        PYCC_CACHE(operation) = start;
        PYCC_CACHE(operation + 4u) = words;
        while (PYCC_CACHE(operation + 4u) != 0u)
            ;
        start += words * 4u;
    }
}

/* the bytes from the first to the last of BCNT rows of ACNT bytes, BIDX apart */
static size_t pycc_span(unsigned acnt, unsigned bcnt, int bidx)
{
    return (size_t)(bcnt - 1u) * (size_t)(bidx < 0 ? -bidx : bidx) + acnt;
}

static uint32_t pycc_edma_global(const void *p)
{
    uint32_t address = (uint32_t)(uintptr_t)p;
    if ((address & 0xff000000u) == 0u) /* core-local L1/L2: its global alias */
        address |= 0x10000000u | ((uint32_t)PYCC_CORE << 24);
    return address;
}

void pycc_edma_init(void)
{
    pycc_edma_pending = 0u;
    pycc_edma_next = 0u;
}

void pycc_edma_copy_2d(void *dst, const void *src, unsigned acnt, unsigned bcnt, int src_bidx,
                       int dst_bidx, int tile)
{
    unsigned channel;
    pycc_edma_validate(acnt, bcnt, src_bidx, dst_bidx, tile);
    if (acnt == 0u || bcnt == 0u)
        return;
    if (pycc_edma_next == PYCC_EDMA_MAX_FLIGHT)
        pycc_edma_fail(tile, "more transfers in flight than channels");
    if (pycc_cached(src))
        pycc_cache_block(PYCC_L2WB, src, pycc_span(acnt, bcnt, src_bidx));
    pycc_edma_written[pycc_edma_next] = NULL;
    if (pycc_cached(dst)) {
        pycc_edma_written[pycc_edma_next] = dst;
        pycc_edma_written_bytes[pycc_edma_next] = pycc_span(acnt, bcnt, dst_bidx);
        pycc_cache_block(PYCC_L2WBINV, dst, pycc_edma_written_bytes[pycc_edma_next]);
    }
    channel = PYCC_EDMA_FIRST_CHANNEL + pycc_edma_next++;
    PYCC_DCHMAP(channel) = channel << 5; /* channel n -> PaRAM set n */
    PYCC_PARAM(channel, 0) = PYCC_OPT_SYNCDIM_AB | PYCC_OPT_TCC(channel) | PYCC_OPT_TCINTEN;
    PYCC_PARAM(channel, 1) = pycc_edma_global(src);
    PYCC_PARAM(channel, 2) = (bcnt << 16) | acnt;
    PYCC_PARAM(channel, 3) = pycc_edma_global(dst);
    PYCC_PARAM(channel, 4) = ((uint32_t)(uint16_t)dst_bidx << 16) | (uint16_t)src_bidx;
    PYCC_PARAM(channel, 5) = 0xffffu; /* null link, BCNTRLD 0 */
    PYCC_PARAM(channel, 6) = 0u;
    PYCC_PARAM(channel, 7) = 1u; /* CCNT: one frame */
    pycc_edma_pending |= 1u << channel;
    PYCC_ESR = 1u << channel; /* manual trigger: one event services an AB set */
}

void pycc_edma_wait_all(void)
{
    unsigned k;
    while ((PYCC_IPR & pycc_edma_pending) != pycc_edma_pending)
        ;
    PYCC_ICR = pycc_edma_pending;
    for (k = 0; k < pycc_edma_next; k++) /* lines fetched while the transfer ran are stale */
        if (pycc_edma_written[k] != NULL)
            pycc_cache_block(PYCC_L2INV, pycc_edma_written[k], pycc_edma_written_bytes[k]);
    pycc_edma_pending = 0u;
    pycc_edma_next = 0u;
}

void pycc_edma_cpu_uses(const void *p, size_t bytes, int tile)
{
    (void)p, (void)bytes, (void)tile;
}

void pycc_edma_finish(void)
{
    if (pycc_edma_pending)
        pycc_edma_fail(-1, "a transfer was never waited for");
}

#else /* host backends */

typedef struct {
    unsigned char *dst;
    const unsigned char *src;
    unsigned acnt, bcnt;
    int src_bidx, dst_bidx, tile;
    unsigned char *snapshot; /* CHECKING: the source as issued */
} pycc_edma_flight;

static pycc_edma_flight pycc_edma_queue[PYCC_EDMA_MAX_FLIGHT];
static int pycc_edma_count;

static void pycc_edma_rows(unsigned char *dst, const unsigned char *src, unsigned acnt,
                           unsigned bcnt, int src_bidx, int dst_bidx)
{
    unsigned row;
    for (row = 0; row < bcnt; row++)
        memmove(dst + (ptrdiff_t)row * dst_bidx, src + (ptrdiff_t)row * src_bidx, acnt);
}

/* a byte range [low, high) of the rows a transfer reads or writes */
static int pycc_edma_overlaps(const unsigned char *base, unsigned acnt, unsigned bcnt,
                              int bidx, const unsigned char *p, size_t bytes)
{
    unsigned row;
    for (row = 0; row < bcnt; row++) {
        const unsigned char *start = base + (ptrdiff_t)row * bidx;
        if (start < p + bytes && p < start + acnt)
            return 1;
    }
    return 0;
}

static int pycc_edma_poisoned(const pycc_edma_flight *f)
{
    unsigned row, k;
    for (row = 0; row < f->bcnt; row++)
        for (k = 0; k < f->acnt; k++)
            if (f->dst[(ptrdiff_t)row * f->dst_bidx + k] != 0xffu)
                return 0;
    return 1;
}

void pycc_edma_init(void)
{
    pycc_edma_count = 0;
}

void pycc_edma_copy_2d(void *dst, const void *src, unsigned acnt, unsigned bcnt, int src_bidx,
                       int dst_bidx, int tile)
{
    pycc_edma_flight *f;
    unsigned row;
    pycc_edma_validate(acnt, bcnt, src_bidx, dst_bidx, tile);
    if (acnt == 0u || bcnt == 0u)
        return;
    if (pycc_edma_backend == PYCC_EDMA_IMMEDIATE) {
        pycc_edma_rows(dst, src, acnt, bcnt, src_bidx, dst_bidx);
        return;
    }
    if (pycc_edma_count == PYCC_EDMA_MAX_FLIGHT)
        pycc_edma_fail(tile, "more transfers in flight than channels");
    f = &pycc_edma_queue[pycc_edma_count++];
    f->dst = dst;
    f->src = src;
    f->acnt = acnt;
    f->bcnt = bcnt;
    f->src_bidx = src_bidx;
    f->dst_bidx = dst_bidx;
    f->tile = tile;
    f->snapshot = NULL;
    if (pycc_edma_backend == PYCC_EDMA_CHECKING) {
        f->snapshot = malloc((size_t)acnt * bcnt);
        if (f->snapshot == NULL)
            pycc_edma_fail(tile, "out of memory");
        for (row = 0; row < bcnt; row++)
            memcpy(f->snapshot + (size_t)row * acnt, f->src + (ptrdiff_t)row * src_bidx, acnt);
        for (row = 0; row < bcnt; row++) /* what the CPU reads too early: NaN bytes */
            memset(f->dst + (ptrdiff_t)row * dst_bidx, 0xff, acnt);
    }
}

void pycc_edma_wait_all(void)
{
    int k;
    unsigned row;
    for (k = 0; k < pycc_edma_count; k++) { /* CHECKING: all checked before any lands */
        pycc_edma_flight *f = &pycc_edma_queue[k];
        if (f->snapshot == NULL)
            continue;
        for (row = 0; row < f->bcnt; row++)
            if (memcmp(f->snapshot + (size_t)row * f->acnt,
                       f->src + (ptrdiff_t)row * f->src_bidx, f->acnt) != 0)
                pycc_edma_fail(f->tile, "the CPU wrote the source of a transfer in flight");
        if (!pycc_edma_poisoned(f))
            pycc_edma_fail(f->tile, "the CPU wrote the destination of a transfer in flight");
    }
    for (k = 0; k < pycc_edma_count; k++) {
        pycc_edma_flight *f = &pycc_edma_queue[k];
        if (f->snapshot == NULL) {
            pycc_edma_rows(f->dst, f->src, f->acnt, f->bcnt, f->src_bidx, f->dst_bidx);
            continue;
        }
        pycc_edma_rows(f->dst, f->snapshot, f->acnt, f->bcnt, (int)f->acnt, f->dst_bidx);
        free(f->snapshot);
    }
    pycc_edma_count = 0;
}

void pycc_edma_cpu_uses(const void *p, size_t bytes, int tile)
{
    int k;
    char message[120];
    if (pycc_edma_backend != PYCC_EDMA_CHECKING)
        return;
    for (k = 0; k < pycc_edma_count; k++) {
        const pycc_edma_flight *f = &pycc_edma_queue[k];
        if (pycc_edma_overlaps(f->dst, f->acnt, f->bcnt, f->dst_bidx, p, bytes) ||
            pycc_edma_overlaps(f->src, f->acnt, f->bcnt, f->src_bidx, p, bytes)) {
            snprintf(message, sizeof message,
                     "the CPU uses a buffer that the transfer of tile %d has in flight", f->tile);
            pycc_edma_fail(tile, message);
        }
    }
}

void pycc_edma_finish(void)
{
    if (pycc_edma_count > 0 && pycc_edma_backend == PYCC_EDMA_CHECKING)
        pycc_edma_fail(pycc_edma_queue[0].tile, "a transfer was never waited for");
    pycc_edma_count = 0; /* DEFERRED: never copied, as on a device that was never waited on */
}

#endif

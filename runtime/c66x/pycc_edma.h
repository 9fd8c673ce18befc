/* pycc_edma.h: the EDMA manager the tiled C66x code calls (pycc-stencil runtime).
 *
 * One operation: a 2-D transfer of BCNT rows of ACNT bytes, source rows SRC_BIDX bytes
 * apart, destination rows DST_BIDX bytes apart: one EDMA3 PaRAM set, AB-synchronized,
 * CCNT = 1 (SPRUGS5, "EDMA3 transfer types"). ACNT and BCNT are 16-bit unsigned, the BIDX
 * fields 16-bit signed; a transfer outside those ranges is refused (the device could not
 * describe it in one set).
 *
 * Backends: on the DSP (cl6x) the transfers go to an EDMA3 channel controller (pycc_edma.c,
 * register level); on the host, `pycc_edma_backend` selects
 *   PYCC_EDMA_IMMEDIATE  the copy happens when the transfer is issued;
 *   PYCC_EDMA_DEFERRED   the copy happens at the wait: code missing a wait reads stale data;
 *   PYCC_EDMA_CHECKING   deferred, and a transfer's destination is poisoned while in flight;
 *                        the CPU using a buffer with a transfer in flight (pycc_edma_cpu_uses),
 *                        writing a transfer's source or destination before its wait, or a
 *                        run ending with a transfer never waited for stops the program with
 *                        the tile number.
 */
#ifndef PYCC_EDMA_H
#define PYCC_EDMA_H

#include <stddef.h>

enum { PYCC_EDMA_IMMEDIATE = 0, PYCC_EDMA_DEFERRED = 1, PYCC_EDMA_CHECKING = 2 };

/* the host backend in use (ignored on the DSP) */
extern int pycc_edma_backend;

/* start of a kernel call: no transfer in flight */
void pycc_edma_init(void);

/* issue BCNT rows of ACNT bytes from SRC to DST (row pitches in bytes); TILE names the tile
 * in diagnostics */
void pycc_edma_copy_2d(void *dst, const void *src, unsigned acnt, unsigned bcnt, int src_bidx,
                       int dst_bidx, int tile);

/* wait for every transfer issued so far */
void pycc_edma_wait_all(void);

/* the CPU is about to read or write BYTES at P for TILE: no transfer may have them in flight */
void pycc_edma_cpu_uses(const void *p, size_t bytes, int tile);

/* end of a kernel call: every transfer must have been waited for */
void pycc_edma_finish(void);

#endif

/* pycc_c66x.h: what the C that `pycc-stencil emit --target c66x` writes includes.
 *
 * Built by TI's C6000 compiler (cl6x -mv6600) it is the compiler's own <c6x.h>, whose
 * intrinsics (SPRUI04, "Using intrinsics to access assembly language statements") the
 * emitted code calls; built by any other C compiler it is the host emulation of those
 * intrinsics, "c6x_host.h", written for pycc-stencil from TI's documented semantics.
 *
 * The emitted code assumes a little-endian C66x: lane 0 of a __float2_t or of a long long
 * pair is its low word, the one at the lower address.
 */
#ifndef PYCC_C66X_H
#define PYCC_C66X_H

#if defined(__TI_COMPILER_VERSION__)
#include <c6x.h>
#if defined(_BIG_ENDIAN)
#error "pycc-stencil's C66x code is written for a little-endian build (lane 0 = low word)"
#endif
#else
#include "c6x_host.h"
#endif

#endif

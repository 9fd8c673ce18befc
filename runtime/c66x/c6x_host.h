/* c6x_host.h: a host emulation of the TI C6000 intrinsics that pycc-stencil's C66x code
 * calls, so that the code builds and runs with any C99 compiler that has GCC's attributes
 * (gcc, clang) and can be checked bit for bit against the original C.
 *
 * Written for pycc-stencil from TI's documented semantics (C6000 Optimizing Compiler User's
 * Guide SPRUI04, intrinsic tables; C66x CPU and Instruction Set Reference Guide SPRUGH7);
 * no TI code is used. Semantics modelled exactly:
 *  - lane order: a 64-bit pair holds lane 0 in its low word, the word at the lower address
 *    (little-endian C66x); _ftof2(hi, lo) and _itoll(hi, lo) take the high word first;
 *  - __float2_t is two IEEE single-precision floats, never a host double (TI's host
 *    intrinsics package learnt that a double cannot carry 64 arbitrary bits: a NaN pattern
 *    is not preserved through floating-point registers), and it is not an arithmetic type
 *    here, so code that adds two __float2_t as numbers does not build;
 *  - DADDSP/DSUBSP/DMPYSP round each lane to nearest like the scalar instruction; DADD and
 *    DSUB wrap each 32-bit lane (no saturation);
 *  - _amem8/_amem8_f2 (LDDW/STDW) need an 8-byte aligned address: a misaligned one aborts
 *    with the address and the source line (the DSP would silently drop the low address bits),
 *    as does a false _nassert; _mem8/_mem8_f2 (LDNDW/STNDW) take any address.
 * Not modelled: the C6000 floating-point unit treats denormal operands as zero and flushes
 * denormal results to zero, and its arithmetic on a NaN gives the one NaN 0x7fffffff (the
 * C67x rules, SPRU733; assumed for the C66x); the emulation keeps IEEE denormals and NaNs, as
 * the host reference does (define PYCC_C66X_DENORMALS_ARE_ZERO to flush the SIMD intrinsics'
 * operands and results as the DSP does). Moving a float through a register pair (_ftof2,
 * _hif2, _lof2, the loads and stores) keeps its bits on both. cl6x's pragmas (MUST_ITERATE,
 * UNROLL) mean nothing to the host and are ignored.
 */
#ifndef PYCC_C6X_HOST_H
#define PYCC_C6X_HOST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* cl6x's MUST_ITERATE, UNROLL */
#endif
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF /* each DADDSP/DMPYSP rounds: no fused multiply-add */
#endif

#define PYCC_C6X_INLINE static inline __attribute__((always_inline, unused))

/* -------------------------------------------------------------------------------------- */
/* checks: _nassert and the aligned accesses                                               */

PYCC_C6X_INLINE void pycc_c6x_fail(const char *what, const char *file, int line)
{
    fprintf(stderr, "%s:%d: C66x host emulation: %s\n", file, line, what);
    abort();
}

PYCC_C6X_INLINE void *pycc_c6x_aligned8(const void *p, const char *file, int line)
{
    if ((uintptr_t)p & 7u)
        pycc_c6x_fail("an aligned 64-bit access (_amem8) at an address not 8-byte aligned",
                      file, line);
    return (void *)(uintptr_t)p;
}

PYCC_C6X_INLINE void *pycc_c6x_aligned4(const void *p, const char *file, int line)
{
    if ((uintptr_t)p & 3u)
        pycc_c6x_fail("an aligned 32-bit access (_amem4) at an address not 4-byte aligned",
                      file, line);
    return (void *)(uintptr_t)p;
}

#define _nassert(e) ((e) ? (void)0 : pycc_c6x_fail("_nassert(" #e ") is false", __FILE__, __LINE__))

/* -------------------------------------------------------------------------------------- */
/* types: what the C66x holds in a register pair                                           */

/* may_alias: the emulated loads and stores read and write float arrays as pairs */
typedef struct __attribute__((aligned(8), may_alias)) {
    float lo; /* lane 0, the lower address */
    float hi; /* lane 1 */
} __float2_t;

/* the same bits at any address (what LDNDW/STNDW read and write) */
typedef __float2_t __attribute__((aligned(1))) pycc_c6x_float2_any;
typedef long long __attribute__((may_alias, aligned(1))) pycc_c6x_ll_any;
typedef long long __attribute__((may_alias)) pycc_c6x_ll_aliased;
typedef unsigned __attribute__((may_alias, aligned(1))) pycc_c6x_u32_any;
typedef unsigned __attribute__((may_alias)) pycc_c6x_u32_aliased;

PYCC_C6X_INLINE __float2_t pycc_c6x_f2_value(__float2_t v) { return v; }

/* -------------------------------------------------------------------------------------- */
/* memory: lvalues, as in cl6x (`_amem8_f2(p) = v;` stores)                                */

#define _amem8(p) (*(pycc_c6x_ll_aliased *)pycc_c6x_aligned8((p), __FILE__, __LINE__))
#define _amem8_const(p) ((long long)_amem8(p))
#define _mem8(p) (*(pycc_c6x_ll_any *)(void *)(p))
#define _mem8_const(p) ((long long)_mem8(p))
#define _amem8_f2(p) (*(__float2_t *)pycc_c6x_aligned8((p), __FILE__, __LINE__))
#define _amem8_f2_const(p) pycc_c6x_f2_value(_amem8_f2(p))
#define _mem8_f2(p) (*(pycc_c6x_float2_any *)(void *)(p))
#define _mem8_f2_const(p) pycc_c6x_f2_value(_mem8_f2(p))
#define _amem4(p) (*(pycc_c6x_u32_aliased *)pycc_c6x_aligned4((p), __FILE__, __LINE__))
#define _mem4(p) (*(pycc_c6x_u32_any *)(void *)(p))

/* -------------------------------------------------------------------------------------- */
/* __float2_t: two single-precision lanes                                                  */

PYCC_C6X_INLINE __float2_t _ftof2(float hi, float lo)
{
    __float2_t r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

PYCC_C6X_INLINE float _hif2(__float2_t v) { return v.hi; }
PYCC_C6X_INLINE float _lof2(__float2_t v) { return v.lo; }

#if defined(PYCC_C66X_DENORMALS_ARE_ZERO)
#include <math.h>
PYCC_C6X_INLINE float pycc_c6x_daz(float x)
{
    return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x;
}
#else
#define pycc_c6x_daz(x) (x)
#endif

#define PYCC_C6X_LANEWISE_SP(name, op)                                                   \
    PYCC_C6X_INLINE __float2_t name(__float2_t a, __float2_t b)                          \
    {                                                                                    \
        float hi = pycc_c6x_daz(pycc_c6x_daz(a.hi) op pycc_c6x_daz(b.hi));               \
        float lo = pycc_c6x_daz(pycc_c6x_daz(a.lo) op pycc_c6x_daz(b.lo));               \
        return _ftof2(hi, lo);                                                           \
    }
PYCC_C6X_LANEWISE_SP(_daddsp, +)
PYCC_C6X_LANEWISE_SP(_dsubsp, -)
PYCC_C6X_LANEWISE_SP(_dmpysp, *)
#undef PYCC_C6X_LANEWISE_SP

/* -------------------------------------------------------------------------------------- */
/* long long: two 32-bit lanes                                                             */

PYCC_C6X_INLINE long long _itoll(unsigned hi, unsigned lo)
{
    return (long long)(((uint64_t)hi << 32) | lo);
}

PYCC_C6X_INLINE unsigned _hill(long long v) { return (unsigned)((uint64_t)v >> 32); }
PYCC_C6X_INLINE unsigned _loll(long long v) { return (unsigned)(uint32_t)(uint64_t)v; }

PYCC_C6X_INLINE long long _dadd(long long a, long long b)
{
    return _itoll(_hill(a) + _hill(b), _loll(a) + _loll(b));
}

PYCC_C6X_INLINE long long _dsub(long long a, long long b)
{
    return _itoll(_hill(a) - _hill(b), _loll(a) - _loll(b));
}

/* -------------------------------------------------------------------------------------- */
/* packed halfwords and bytes: lanes of 16 or 8 bits in a 32-bit word (or a pair of them),  */
/* lane 0 in the low bits; every lane wraps, with no carry or borrow into the next          */

/* EXTU: shift left by csta, then logically right by cstb (both 0..31) */
PYCC_C6X_INLINE unsigned _extu(unsigned src, unsigned csta, unsigned cstb)
{
    return (uint32_t)(src << (csta & 31u)) >> (cstb & 31u);
}

/* PACK2: the low halfword of a over the low halfword of b */
PYCC_C6X_INLINE int _pack2(unsigned a, unsigned b)
{
    return (int)(((uint32_t)a << 16) | (b & 0xffffu));
}

/* PACKL4: bytes 2 and 0 of a over bytes 2 and 0 of b */
PYCC_C6X_INLINE unsigned _packl4(unsigned a, unsigned b)
{
    return ((a >> 16 & 0xffu) << 24) | ((a & 0xffu) << 16) | ((b >> 16 & 0xffu) << 8) |
           (b & 0xffu);
}

PYCC_C6X_INLINE uint32_t pycc_c6x_lanes(uint32_t a, uint32_t b, int bits, int subtract)
{
    uint32_t mask = bits == 16 ? 0xffffu : 0xffu, r = 0;
    int shift;
    for (shift = 0; shift < 32; shift += bits) {
        uint32_t x = a >> shift & mask, y = b >> shift & mask;
        r |= ((subtract ? x - y : x + y) & mask) << shift;
    }
    return r;
}

#define PYCC_C6X_PACKED(name, bits, subtract)                                             \
    PYCC_C6X_INLINE int name(int a, int b)                                               \
    {                                                                                    \
        return (int)pycc_c6x_lanes((uint32_t)a, (uint32_t)b, bits, subtract);            \
    }
PYCC_C6X_PACKED(_add2, 16, 0)
PYCC_C6X_PACKED(_sub2, 16, 1)
PYCC_C6X_PACKED(_add4, 8, 0)
PYCC_C6X_PACKED(_sub4, 8, 1)
#undef PYCC_C6X_PACKED

/* DADD2/DSUB2: four halfword lanes in a register pair */
PYCC_C6X_INLINE long long _dadd2(long long a, long long b)
{
    return _itoll((unsigned)_add2((int)_hill(a), (int)_hill(b)),
                  (unsigned)_add2((int)_loll(a), (int)_loll(b)));
}

PYCC_C6X_INLINE long long _dsub2(long long a, long long b)
{
    return _itoll((unsigned)_sub2((int)_hill(a), (int)_hill(b)),
                  (unsigned)_sub2((int)_loll(a), (int)_loll(b)));
}

/* MPY2: the products of the signed halfwords, high and low, each a 32-bit lane */
PYCC_C6X_INLINE long long _mpy2ll(int a, int b)
{
    int32_t high = (int32_t)(int16_t)((uint32_t)a >> 16) * (int16_t)((uint32_t)b >> 16);
    int32_t low = (int32_t)(int16_t)(uint32_t)a * (int16_t)(uint32_t)b;
    return _itoll((unsigned)high, (unsigned)low);
}

#endif

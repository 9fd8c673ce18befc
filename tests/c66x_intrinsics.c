/* Each intrinsic of the C66x host emulation on values whose results follow from TI's
 * documented semantics (tests/test_c66x_emulation.py holds the expected values, computed
 * by hand): one line "case hex-bits" per case. Built with -DPYCC_C66X_DENORMALS_ARE_ZERO it
 * also runs the denormal cases under the DSP's flushing. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pycc_c66x.h"

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void pair(const char *name, __float2_t v)
{
    printf("%s %08x %08x\n", name, (unsigned)bits(_hif2(v)), (unsigned)bits(_lof2(v)));
}

static void wide(const char *name, long long v)
{
    printf("%s %016llx\n", name, (unsigned long long)v);
}

int main(void)
{
    float f[6] __attribute__((aligned(8))) = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
    int32_t w[4] __attribute__((aligned(8))) = {1, 2, -3, 4};

    /* lane order: the low word is lane 0, the lower address; _ftof2 takes the high first */
    pair("ftof2", _ftof2(5.0f, 6.0f));
    pair("amem8_f2_load", _amem8_f2(&f[0]));
    pair("mem8_f2_load", _mem8_f2(&f[1]));
    pair("amem8_f2_const", _amem8_f2_const(&f[2]));
    pair("mem8_f2_const", _mem8_f2_const(&f[3]));
    _amem8_f2(&f[4]) = _ftof2(7.0f, 8.0f);
    printf("amem8_f2_store %08x %08x\n", (unsigned)bits(f[4]), (unsigned)bits(f[5]));
    _mem8_f2(&f[1]) = _ftof2(9.0f, 10.0f);
    printf("mem8_f2_store %08x %08x\n", (unsigned)bits(f[1]), (unsigned)bits(f[2]));
    /* a signalling NaN keeps its bits (a host double would quiet it) */
    pair("snan_kept", _ftof2(from_bits(0x7fa00001u), from_bits(0xffc00002u)));

    /* each lane rounds to nearest, ties to even: 1 + 2^-24 -> 1, 1 + 1.5 * 2^-24 -> 1 + 2^-23 */
    pair("daddsp", _daddsp(_ftof2(1.0f, 1.0f), _ftof2(0x1p-24f, 0x1.8p-24f)));
    pair("dsubsp", _dsubsp(_ftof2(3.0f, 5.0f), _ftof2(1.0f, 0.5f)));
    pair("dmpysp", _dmpysp(_ftof2(1.5f, 3.0f), _ftof2(-2.0f, 0x1.000002p0f)));
    /* denormal results (IEEE here; flushed to zero under PYCC_C66X_DENORMALS_ARE_ZERO) */
    pair("dmpysp_denormal", _dmpysp(_ftof2(0x1p-70f, -0x1p-70f), _ftof2(0x1p-70f, 0x1p-70f)));
    pair("daddsp_denormal_operand", _daddsp(_ftof2(0x1p-140f, 1.0f), _ftof2(0.0f, 0x1p-140f)));

    /* long long pairs: two 32-bit lanes that wrap, with no carry or borrow between them */
    wide("itoll", _itoll(0x80000000u, 0xffffffffu));
    printf("hill %08x\n", (unsigned)_hill(_itoll(0x80000000u, 0xffffffffu)));
    printf("loll %08x\n", (unsigned)_loll(_itoll(0x80000000u, 0xffffffffu)));
    wide("dadd", _dadd(_itoll(0x7fffffffu, 0xffffffffu), _itoll(1u, 1u)));
    wide("dsub", _dsub(_itoll(0u, 0u), _itoll(1u, 1u)));
    wide("amem8_load", _amem8(&w[0]));
    wide("mem8_load", _mem8(&w[1]));
    wide("amem8_const", _amem8_const(&w[2]));
    _amem8(&w[2]) = _itoll(0x11111111u, 0x22222222u);
    printf("amem8_store %08x %08x\n", (unsigned)w[2], (unsigned)w[3]);
    _mem8(&w[1]) = _itoll(0x33333333u, 0x44444444u);
    printf("mem8_store %08x %08x\n", (unsigned)w[1], (unsigned)w[2]);
    printf("amem4_load %08x\n", (unsigned)_amem4(&w[0]));
    printf("mem4_load %08x\n", (unsigned)_mem4((char *)w + 2));

    /* packed halfwords and bytes: lane 0 in the low bits, each lane wrapping on its own */
    printf("extu_low_half %08x\n", _extu(0x12345678u, 16, 16));
    printf("extu_high_half %08x\n", _extu(0x12345678u, 0, 16));
    printf("extu_byte1 %08x\n", _extu(0x12345678u, 16, 24));
    printf("pack2 %08x\n", (unsigned)_pack2(0x1234abcdu, 0x5678ef01u));
    printf("packl4 %08x\n", _packl4(0x11223344u, 0x55667788u));
    printf("add2 %08x\n", (unsigned)_add2((int)0x7fffffff, 0x00010001));
    printf("sub2 %08x\n", (unsigned)_sub2(0, 0x00010001));
    printf("add4 %08x\n", (unsigned)_add4((int)0xff7f0180u, 0x01010180));
    printf("sub4 %08x\n", (unsigned)_sub4(0, 0x01010101));
    wide("dadd2", _dadd2(_itoll(0xffff0001u, 0x7fff8000u), _itoll(0x00010001u, 0x00018000u)));
    wide("dsub2", _dsub2(_itoll(0u, 0u), _itoll(0x00010002u, 0x00030004u)));
    wide("mpy2ll", _mpy2ll((int)0x8000ffffu, (int)0x80000002u));
    return 0;
}

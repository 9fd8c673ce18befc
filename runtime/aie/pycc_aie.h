/* pycc-stencil: host emulation of the AI Engine (AIE1) kernel API that pycc-stencil's AIE
 * kernels use, written from the documented semantics (UG1078 "Full Lane Addressing Scheme",
 * UG1079 "MAC on 16x16 bits", "MAC on 32x32 bits", "Floating-Point Operations", "Register
 * Move Functionality"); no vendor code. With the Vitis AIE tools (__AIENGINE__ defined by
 * the AIE compiler) this header only includes <adf.h> and defines the two access macros.
 *
 * Emulated: the vector and accumulator types the kernels use, null_*, upd_v, upd_w, ext_w, concat,
 * mul16/mac16 (16 lanes x 2 columns, 16-bit), lmul8/lmac8 (8 x 1, 32-bit), fpmul/fpmac
 * (8 lanes, float), srs/ups, the loop pragmas (empty), and PYCC_AIE_LOAD/PYCC_AIE_STORE:
 * vector loads and stores that assert 128-bit alignment (PYCC_AIE_ALIGN=32: 256-bit) and are
 * counted, as are the MAC intrinsics and their lane x column slots (pycc_aie_counters()).
 *
 * Modelled choices where the documents are silent: accumulator lanes are 64-bit (48- and
 * 80-bit on the device: kernels whose sums fit 48 bits behave the same), srs rounds half up
 * (PYCC_AIE_SRS_TRUNCATE: toward minus infinity) and saturates to the output lane type;
 * a buffer index wraps modulo the buffer's elements, as the lane rules say; fpmac rounds the
 * product, then the sum (no fused multiply-add). */
#ifndef PYCC_AIE_H
#define PYCC_AIE_H

/* the address `bytes` past `base`, and the element of `type` there */
#define PYCC_AIE_AT(base, bytes) ((char *)(base) + (bytes))
#define PYCC_AIE_ELEMENT(type, base, bytes) (*(const type *)PYCC_AIE_AT(base, bytes))

#ifdef __AIENGINE__
#include <adf.h>
#define PYCC_AIE_LOAD(type, pointer) (*(const type *)(pointer))
#define PYCC_AIE_STORE(type, pointer, value) (*(type *)(pointer) = (value))
#else

#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>

#ifndef PYCC_AIE_ALIGN
#define PYCC_AIE_ALIGN 16
#endif

#define chess_prepare_for_pipelining
#define chess_loop_range(low, high)

struct pycc_aie_counts {
    unsigned long long loads, load_bits, stores, store_bits, macs, mac_slots;
};

inline pycc_aie_counts &pycc_aie_counters() {
    static pycc_aie_counts counts = {0, 0, 0, 0, 0, 0};
    return counts;
}

inline void pycc_aie_reset_counters() { pycc_aie_counters() = pycc_aie_counts{0, 0, 0, 0, 0, 0}; }

template <typename T, int N> struct pycc_aie_vector {
    T lane[N];
    static constexpr int size = N;
    typedef T element;
};

typedef pycc_aie_vector<int16_t, 8> v8int16;
typedef pycc_aie_vector<int16_t, 16> v16int16;
typedef pycc_aie_vector<int16_t, 32> v32int16;
typedef pycc_aie_vector<int16_t, 64> v64int16;
typedef pycc_aie_vector<int32_t, 4> v4int32;
typedef pycc_aie_vector<int32_t, 8> v8int32;
typedef pycc_aie_vector<int32_t, 16> v16int32;
typedef pycc_aie_vector<int32_t, 32> v32int32;
typedef pycc_aie_vector<float, 4> v4float;
typedef pycc_aie_vector<float, 8> v8float;
typedef pycc_aie_vector<float, 16> v16float;
typedef pycc_aie_vector<float, 32> v32float;

/* accumulators: 16 lanes of 48 bits and 8 lanes of 80 bits on the device */
struct v16acc48 { int64_t lane[16]; };
struct v8acc80 { int64_t lane[8]; };

inline v16acc48 null_v16acc48() { v16acc48 a; std::memset(&a, 0, sizeof a); return a; }
inline v8acc80 null_v8acc80() { v8acc80 a; std::memset(&a, 0, sizeof a); return a; }
inline v8float null_v8float() { v8float v; std::memset(&v, 0, sizeof v); return v; }
inline v32int16 undef_v32int16() { v32int16 v; std::memset(&v, 0, sizeof v); return v; }
inline v64int16 undef_v64int16() { v64int16 v; std::memset(&v, 0, sizeof v); return v; }
inline v16int32 undef_v16int32() { v16int32 v; std::memset(&v, 0, sizeof v); return v; }
inline v32int32 undef_v32int32() { v32int32 v; std::memset(&v, 0, sizeof v); return v; }
inline v16float undef_v16float() { v16float v; std::memset(&v, 0, sizeof v); return v; }
inline v32float undef_v32float() { v32float v; std::memset(&v, 0, sizeof v); return v; }

template <typename V> inline V pycc_aie_load(const void *pointer) {
    assert(reinterpret_cast<uintptr_t>(pointer) % PYCC_AIE_ALIGN == 0 && "unaligned vector load");
    V v;
    std::memcpy(&v, pointer, sizeof v);
    pycc_aie_counters().loads++;
    pycc_aie_counters().load_bits += 8 * sizeof v;
    return v;
}

template <typename V> inline void pycc_aie_store(void *pointer, const V &v) {
    assert(reinterpret_cast<uintptr_t>(pointer) % PYCC_AIE_ALIGN == 0 && "unaligned vector store");
    std::memcpy(pointer, &v, sizeof v);
    pycc_aie_counters().stores++;
    pycc_aie_counters().store_bits += 8 * sizeof v;
}

#define PYCC_AIE_LOAD(type, pointer) pycc_aie_load<type>(pointer)
#define PYCC_AIE_STORE(type, pointer, value) pycc_aie_store<type>((pointer), (value))

/* upd_v, upd_w: the 128- or 256-bit part `index` of a wider register replaced; ext_w: that part read */
template <typename Wide, typename Part> inline Wide pycc_aie_update(Wide wide, int index, Part part) {
    static_assert(Wide::size % Part::size == 0, "a part of the register");
    assert(index >= 0 && index < Wide::size / Part::size);
    for (int k = 0; k < Part::size; k++) wide.lane[index * Part::size + k] = part.lane[k];
    return wide;
}

#define PYCC_AIE_UPDATE(name, wide, part) \
    inline wide name(wide x, int i, part p) { return pycc_aie_update(x, i, p); }
PYCC_AIE_UPDATE(upd_w, v32int16, v16int16) PYCC_AIE_UPDATE(upd_w, v64int16, v16int16)
PYCC_AIE_UPDATE(upd_w, v16int32, v8int32) PYCC_AIE_UPDATE(upd_w, v32int32, v8int32)
PYCC_AIE_UPDATE(upd_w, v16float, v8float) PYCC_AIE_UPDATE(upd_w, v32float, v8float)
PYCC_AIE_UPDATE(upd_v, v32int16, v8int16) PYCC_AIE_UPDATE(upd_v, v64int16, v8int16)
PYCC_AIE_UPDATE(upd_v, v16int32, v4int32) PYCC_AIE_UPDATE(upd_v, v32int32, v4int32)
PYCC_AIE_UPDATE(upd_v, v16float, v4float) PYCC_AIE_UPDATE(upd_v, v32float, v4float)

template <typename Part, typename Wide> inline Part pycc_aie_extract(const Wide &wide, int index) {
    assert(index >= 0 && index < Wide::size / Part::size);
    Part part;
    for (int k = 0; k < Part::size; k++) part.lane[k] = wide.lane[index * Part::size + k];
    return part;
}

inline v16int16 ext_w(v32int16 x, int i) { return pycc_aie_extract<v16int16>(x, i); }
inline v8int32 ext_w(v16int32 x, int i) { return pycc_aie_extract<v8int32>(x, i); }
inline v8float ext_w(v16float x, int i) { return pycc_aie_extract<v8float>(x, i); }

template <typename Wide, typename Part> inline Wide pycc_aie_concat(Part low, Part high) {
    Wide wide;
    for (int k = 0; k < Part::size; k++) {
        wide.lane[k] = low.lane[k];
        wide.lane[Part::size + k] = high.lane[k];
    }
    return wide;
}

inline v32int16 concat(v16int16 a, v16int16 b) { return pycc_aie_concat<v32int16>(a, b); }
inline v64int16 concat(v32int16 a, v32int16 b) { return pycc_aie_concat<v64int16>(a, b); }
inline v16int32 concat(v8int32 a, v8int32 b) { return pycc_aie_concat<v16int32>(a, b); }
inline v16float concat(v8float a, v8float b) { return pycc_aie_concat<v16float>(a, b); }

inline unsigned pycc_aie_nibble(unsigned word, int index) { return (word >> (4 * index)) & 0xFu; }

/* mac16's x element at (lane, column): lanes in pairs over 32-bit words, xsquare picks */
inline int pycc_aie_mac16_x(int xstart, unsigned xoffsets, unsigned xoffsets_hi,
                            unsigned xsquare, int lane, int column) {
    unsigned offsets = lane < 8 ? xoffsets : xoffsets_hi;
    int pair = (lane % 8) / 2;
    int even = xstart / 2 + (int)pycc_aie_nibble(offsets, 2 * pair);
    int odd = even + (int)pycc_aie_nibble(offsets, 2 * pair + 1) + 1;
    int candidates[4] = {2 * even, 2 * even + 1, 2 * odd, 2 * odd + 1};
    unsigned pick = pycc_aie_nibble(xsquare, 2 * (lane % 2) + column);
    assert(pick < 4 && "mac16: an xsquare field picks one of a lane pair's 4 elements");
    return candidates[pick];
}

inline int pycc_aie_wrap(int index, int elements) { return ((index % elements) + elements) % elements; }

template <typename X>
inline v16acc48 pycc_aie_mac16(v16acc48 acc, const X &xbuff, int xstart, unsigned xoffsets,
                               unsigned xoffsets_hi, unsigned xsquare, const v16int16 &zbuff,
                               int zstart, unsigned zoffsets, unsigned zoffsets_hi, int zstep) {
    assert(xstart % 2 == 0 && "mac16: xstart is even");
    for (int lane = 0; lane < 16; lane++) {
        unsigned zoff = lane < 8 ? zoffsets : zoffsets_hi;
        for (int column = 0; column < 2; column++) {
            int x = pycc_aie_mac16_x(xstart, xoffsets, xoffsets_hi, xsquare, lane, column);
            int z = zstart + (int)pycc_aie_nibble(zoff, lane % 8) + column * zstep;
            acc.lane[lane] += (int64_t)xbuff.lane[pycc_aie_wrap(x, X::size)] *
                              (int64_t)zbuff.lane[pycc_aie_wrap(z, 16)];
        }
    }
    pycc_aie_counters().macs++;
    pycc_aie_counters().mac_slots += 32;
    return acc;
}

inline v16acc48 mac16(v16acc48 acc, v32int16 x, int xs, unsigned xo, unsigned xh, unsigned xq,
                      v16int16 z, int zs, unsigned zo, unsigned zh, int step) {
    return pycc_aie_mac16(acc, x, xs, xo, xh, xq, z, zs, zo, zh, step);
}
inline v16acc48 mac16(v16acc48 acc, v64int16 x, int xs, unsigned xo, unsigned xh, unsigned xq,
                      v16int16 z, int zs, unsigned zo, unsigned zh, int step) {
    return pycc_aie_mac16(acc, x, xs, xo, xh, xq, z, zs, zo, zh, step);
}
inline v16acc48 mul16(v32int16 x, int xs, unsigned xo, unsigned xh, unsigned xq, v16int16 z,
                      int zs, unsigned zo, unsigned zh, int step) {
    return pycc_aie_mac16(null_v16acc48(), x, xs, xo, xh, xq, z, zs, zo, zh, step);
}
inline v16acc48 mul16(v64int16 x, int xs, unsigned xo, unsigned xh, unsigned xq, v16int16 z,
                      int zs, unsigned zo, unsigned zh, int step) {
    return pycc_aie_mac16(null_v16acc48(), x, xs, xo, xh, xq, z, zs, zo, zh, step);
}

/* lmac8 and fpmac: one column, lane i multiplies x[xstart + xoffs(i)] by z[zstart + zoffs(i)] */
template <typename Acc, typename X, typename Z>
inline Acc pycc_aie_lanes(Acc acc, const X &xbuff, int xstart, unsigned xoffsets, const Z &zbuff,
                          int zstart, unsigned zoffsets) {
    for (int lane = 0; lane < 8; lane++) {
        int x = pycc_aie_wrap(xstart + (int)pycc_aie_nibble(xoffsets, lane), X::size);
        int z = pycc_aie_wrap(zstart + (int)pycc_aie_nibble(zoffsets, lane), Z::size);
        acc.lane[lane] += (decltype(acc.lane[0] + 0))xbuff.lane[x] * zbuff.lane[z];
    }
    pycc_aie_counters().macs++;
    pycc_aie_counters().mac_slots += 8;
    return acc;
}

inline v8acc80 lmac8(v8acc80 acc, v16int32 x, int xs, unsigned xo, v8int32 z, int zs, unsigned zo) {
    return pycc_aie_lanes(acc, x, xs, xo, z, zs, zo);
}
inline v8acc80 lmac8(v8acc80 acc, v32int32 x, int xs, unsigned xo, v8int32 z, int zs, unsigned zo) {
    return pycc_aie_lanes(acc, x, xs, xo, z, zs, zo);
}
inline v8acc80 lmul8(v16int32 x, int xs, unsigned xo, v8int32 z, int zs, unsigned zo) {
    return pycc_aie_lanes(null_v8acc80(), x, xs, xo, z, zs, zo);
}
inline v8acc80 lmul8(v32int32 x, int xs, unsigned xo, v8int32 z, int zs, unsigned zo) {
    return pycc_aie_lanes(null_v8acc80(), x, xs, xo, z, zs, zo);
}

inline v8float pycc_aie_fpmac(v8float acc, const float *x, int xsize, int xs, unsigned xo,
                              const v8float &z, int zs, unsigned zo) {
    for (int lane = 0; lane < 8; lane++) {
        volatile float product = x[pycc_aie_wrap(xs + (int)pycc_aie_nibble(xo, lane), xsize)] *
                                 z.lane[pycc_aie_wrap(zs + (int)pycc_aie_nibble(zo, lane), 8)];
        acc.lane[lane] = acc.lane[lane] + product;
    }
    pycc_aie_counters().macs++;
    pycc_aie_counters().mac_slots += 8;
    return acc;
}

inline v8float fpmac(v8float acc, v16float x, int xs, unsigned xo, v8float z, int zs, unsigned zo) {
    return pycc_aie_fpmac(acc, x.lane, 16, xs, xo, z, zs, zo);
}
inline v8float fpmac(v8float acc, v32float x, int xs, unsigned xo, v8float z, int zs, unsigned zo) {
    return pycc_aie_fpmac(acc, x.lane, 32, xs, xo, z, zs, zo);
}
inline v8float fpmul(v16float x, int xs, unsigned xo, v8float z, int zs, unsigned zo) {
    return pycc_aie_fpmac(null_v8float(), x.lane, 16, xs, xo, z, zs, zo);
}
inline v8float fpmul(v32float x, int xs, unsigned xo, v8float z, int zs, unsigned zo) {
    return pycc_aie_fpmac(null_v8float(), x.lane, 32, xs, xo, z, zs, zo);
}
inline v8float fpadd(v8float a, v8float b) {
    for (int lane = 0; lane < 8; lane++) a.lane[lane] = a.lane[lane] + b.lane[lane];
    return a;
}

/* srs: shift right, round, saturate to the lane type; ups: shift left into an accumulator */
inline int64_t pycc_aie_shift_round(int64_t value, int shift) {
    assert(shift >= 0 && shift < 48);
#ifdef PYCC_AIE_SRS_TRUNCATE
    return value >> shift;
#else
    return shift ? (value + ((int64_t)1 << (shift - 1))) >> shift : value;
#endif
}

inline int64_t pycc_aie_saturate(int64_t value, int64_t low, int64_t high) {
    return value < low ? low : value > high ? high : value;
}

template <typename V, typename Acc> inline V pycc_aie_srs(const Acc &acc, int shift) {
    typedef typename V::element T;
    V v;
    for (int lane = 0; lane < V::size; lane++)
        v.lane[lane] = (T)pycc_aie_saturate(pycc_aie_shift_round(acc.lane[lane], shift),
                                            std::numeric_limits<T>::min(),
                                            std::numeric_limits<T>::max());
    return v;
}

template <typename Acc, typename V> inline Acc pycc_aie_ups(const V &v, int shift) {
    Acc acc;
    for (int lane = 0; lane < V::size; lane++) acc.lane[lane] = (int64_t)v.lane[lane] << shift;
    return acc;
}

inline v16int16 srs(v16acc48 acc, int shift) { return pycc_aie_srs<v16int16>(acc, shift); }
inline v8int32 srs(v8acc80 acc, int shift) { return pycc_aie_srs<v8int32>(acc, shift); }
inline v16acc48 ups(v16int16 v, int shift) { return pycc_aie_ups<v16acc48>(v, shift); }
inline v8acc80 ups(v8int32 v, int shift) { return pycc_aie_ups<v8acc80>(v, shift); }

#endif /* __AIENGINE__ */
#endif /* PYCC_AIE_H */

/* pycc-stencil: host emulation of the part of the AI Engine API (aie_api/aie.hpp, UG1529) that
 * pycc-stencil's AIE kernels in the API style use, written from its documentation; no vendor
 * code. With the Vitis AIE tools (__AIENGINE__) the real headers are included instead.
 *
 * Emulated: aie::vector<T, N> (insert), aie::accum<Tag, N> for acc48, acc80 and accfloat
 * (from_vector, to_vector: shift, round half up, saturate, as pycc_aie.h's srs), aie::zeros,
 * aie::load_v / aie::store_v (128-bit aligned, counted like pycc_aie.h's loads and stores), and
 * aie::sliding_mul_ops<Lanes, Points, CoeffStep, DataStepX, DataStepY, CoeffType, DataType,
 * AccumTag>::mul/mac, UG1079's compute pattern
 *     out[i] += sum over p of coeff[c_s + p * CS] * data[d_s + i * DSY + p * DSX]
 * (points added in order; floats rounded after each product and each sum). */
#ifndef PYCC_AIE_API_H
#define PYCC_AIE_API_H

#include "pycc_aie.h"
#include <type_traits>

#ifdef __AIENGINE__
#include <aie_api/aie.hpp>
#include <aie_api/aie_adf.hpp>
#else

/* the accumulator tags (global names, as the AIE headers give them) */
struct acc48 {};
struct acc80 {};
struct accfloat {};

namespace aie {

template <typename T, unsigned N> struct vector {
    T lane[N];
    static constexpr unsigned size = N;

    template <unsigned M> vector &insert(unsigned index, const vector<T, M> &part) {
        static_assert(N % M == 0, "a part of the vector");
        assert(index < N / M);
        for (unsigned k = 0; k < M; k++) lane[index * M + k] = part.lane[k];
        return *this;
    }
    T get(unsigned k) const { return lane[k]; }
};

template <typename T, unsigned N> vector<T, 2 * N> concat(const vector<T, N> &a, const vector<T, N> &b) {
    vector<T, 2 * N> v;
    v.insert(0, a);
    v.insert(1, b);
    return v;
}

template <typename Tag> struct accum_lane { typedef int64_t type; };
template <> struct accum_lane<accfloat> { typedef float type; };

template <typename Tag, unsigned N> struct accum {
    typename accum_lane<Tag>::type lane[N];

    template <typename T> vector<T, N> to_vector(int shift = 0) const {
        vector<T, N> v;
        for (unsigned k = 0; k < N; k++) v.lane[k] = convert<T>(lane[k], shift);
        return v;
    }
    template <typename T> accum &from_vector(const vector<T, N> &v, int shift = 0) {
        for (unsigned k = 0; k < N; k++)
            lane[k] = std::is_floating_point<T>::value ? v.lane[k] : (int64_t)v.lane[k] << shift;
        return *this;
    }

  private:
    template <typename T> static T convert(float value, int) { return value; }
    template <typename T> static T convert(int64_t value, int shift) {
        return (T)pycc_aie_saturate(pycc_aie_shift_round(value, shift),
                                    std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    }
};

template <typename Tag, unsigned N> accum<Tag, N> zeros() {
    accum<Tag, N> a;
    for (unsigned k = 0; k < N; k++) a.lane[k] = 0;
    return a;
}

template <unsigned N, typename T> vector<T, N> load_v(const T *pointer) {
    return pycc_aie_load<vector<T, N>>(pointer);
}

template <typename T, unsigned N> void store_v(T *pointer, const vector<T, N> &v) {
    pycc_aie_store(pointer, v);
}

template <unsigned Lanes, unsigned Points, int CoeffStep, int DataStepX, int DataStepY,
          typename CoeffType, typename DataType, typename AccumTag>
struct sliding_mul_ops {
    typedef accum<AccumTag, Lanes> accum_type;

    template <unsigned NC, unsigned ND>
    static accum_type mac(accum_type acc, const vector<CoeffType, NC> &coeff, unsigned coeff_start,
                          const vector<DataType, ND> &data, unsigned data_start) {
        for (unsigned i = 0; i < Lanes; i++)
            for (unsigned p = 0; p < Points; p++) {
                unsigned c = coeff_start + p * CoeffStep, d = data_start + i * DataStepY + p * DataStepX;
                assert(c < NC && d < ND && "sliding_mul: an index outside its vector");
                acc.lane[i] = product(acc.lane[i], coeff.lane[c], data.lane[d]);
            }
        unsigned peak = sizeof(DataType) == 2 ? 32 : 8;  // MACs of one intrinsic
        pycc_aie_counters().macs += (Lanes * Points + peak - 1) / peak;
        pycc_aie_counters().mac_slots += Lanes * Points;
        return acc;
    }

    template <unsigned NC, unsigned ND>
    static accum_type mul(const vector<CoeffType, NC> &coeff, unsigned coeff_start,
                          const vector<DataType, ND> &data, unsigned data_start) {
        return mac(zeros<AccumTag, Lanes>(), coeff, coeff_start, data, data_start);
    }

  private:
    static int64_t product(int64_t acc, int64_t c, int64_t d) { return acc + c * d; }
    static float product(float acc, float c, float d) {
        volatile float p = c * d;
        return acc + p;
    }
};

} // namespace aie

#endif /* __AIENGINE__ */
#endif /* PYCC_AIE_API_H */

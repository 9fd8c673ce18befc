/* pycc-stencil: host emulation of the ADF graph API that pycc-stencil's graph glue uses, written
 * from UG1079's descriptions ("Creating a Data Flow Graph", "Input and Output Buffers"); no
 * vendor code. Enough to build the glue with a host compiler and run it: a graph's kernels,
 * buffer ports (input_buffer/output_buffer with extents, data()), PLIO ports reading and
 * writing text data files (whitespace-separated values, any number per line), connect<>,
 * source(), runtime<ratio>(). graph::run(n) calls every kernel n times: inputs read from
 * their PLIO files (the next extent's worth of values each time), outputs appended to
 * theirs. With the Vitis AIE tools the glue includes the real <adf.h> instead. */
#ifndef PYCC_ADF_H
#define PYCC_ADF_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

typedef int16_t int16;
typedef int32_t int32;

namespace adf {

enum plio_type { plio_32_bits = 32, plio_64_bits = 64, plio_128_bits = 128 };
struct ratio {};
enum direction { kInput, kOutput };

template <unsigned Elements> struct extents {
    static constexpr unsigned size = Elements;
};

/* a buffer port: `size` elements, 64-byte aligned (the kernels' vector loads need 128 bits) */
template <typename T, typename Extents, direction Dir> class io_buffer {
  public:
    typedef T element;
    static constexpr direction dir = Dir;
    static constexpr unsigned elements = Extents::size;
    io_buffer() : storage(static_cast<T *>(std::aligned_alloc(64, bytes()))) {
        std::memset(storage.get(), 0, bytes());
    }
    T *data() { return storage.get(); }
    const T *data() const { return storage.get(); }
    unsigned size() const { return elements; }

  private:
    static size_t bytes() { return (sizeof(T) * elements + 63) / 64 * 64; }
    struct release {
        void operator()(T *p) const { std::free(p); }
    };
    std::unique_ptr<T, release> storage;
};

template <typename T, typename Extents = extents<0>>
using input_buffer = io_buffer<T, Extents, kInput>;
template <typename T, typename Extents = extents<0>>
using output_buffer = io_buffer<T, Extents, kOutput>;

/* one end of a connection: a PLIO's data file, or a kernel's n-th input or output port
 * (`slots`: the kernel's files of that direction) */
struct port_ref {
    std::string *file;
    std::vector<std::string> *slots;
    direction dir;
    int index;
};

struct plio {
    std::string file;
    port_ref out[1], in[1];
    plio() : out{{&file, nullptr, kOutput, 0}}, in{{&file, nullptr, kInput, 0}} {}
    plio(const plio &other) : plio() { file = other.file; }
    plio &operator=(const plio &other) {
        file = other.file;
        return *this;
    }
};

struct input_plio : plio {
    static input_plio create(const std::string &, plio_type, const std::string &file) {
        input_plio p;
        p.file = file;
        return p;
    }
};

struct output_plio : plio {
    static output_plio create(const std::string &, plio_type, const std::string &file) {
        output_plio p;
        p.file = file;
        return p;
    }
};

namespace detail {
/* a text data file, read value after value across calls */
struct reader {
    std::ifstream stream;
    explicit reader(const std::string &file) : stream(file) {
        if (!stream) {
            std::fprintf(stderr, "adf: cannot read '%s'\n", file.c_str());
            std::exit(2);
        }
    }
};

template <typename T> void fill(reader &in, T *data, unsigned count) {
    for (unsigned k = 0; k < count; k++) {
        double value;
        if (!(in.stream >> value)) {
            std::fprintf(stderr, "adf: a data file ends before %u values\n", count);
            std::exit(2);
        }
        data[k] = static_cast<T>(value);
    }
}

template <typename T> void dump(std::ofstream &out, const T *data, unsigned count) {
    for (unsigned k = 0; k < count; k++)
        out << +data[k] << ((k + 1) % 4 ? ' ' : '\n');
}

inline void dump(std::ofstream &out, const float *data, unsigned count) {
    char text[32];
    for (unsigned k = 0; k < count; k++) {
        std::snprintf(text, sizeof text, "%.9g", data[k]);
        out << text << ((k + 1) % 4 ? ' ' : '\n');
    }
}
} // namespace detail

/* a kernel instance: the function, its buffers, and where each port's data come from/go */
class kernel {
  public:
    port_ref in[16], out[16];

    template <typename... Ports> static kernel create(void (*function)(Ports &...)) {
        kernel k;
        k.state = std::make_shared<state_type>();
        k.state->body = [function](kernel &self) {
            self.call(function, std::make_shared<std::tuple<Ports...>>());
        };
        k.bind();
        registry().push_back(k.state);
        return k;
    }

    kernel() = default;
    kernel(const kernel &other) : state(other.state) { bind(); }
    kernel &operator=(const kernel &other) {
        state = other.state;
        bind();
        return *this;
    }
    void run_once() { state->body(*this); }
    std::string &source_file() { return state->source; }
    double &ratio_value() { return state->ratio; }

    struct state_type {
        std::function<void(kernel &)> body;
        std::vector<std::string> inputs = std::vector<std::string>(16);
        std::vector<std::string> outputs = std::vector<std::string>(16);
        std::vector<std::shared_ptr<detail::reader>> readers =
            std::vector<std::shared_ptr<detail::reader>>(16);
        std::string source;
        double ratio = 0;
    };
    static std::vector<std::shared_ptr<state_type>> &registry() {
        static std::vector<std::shared_ptr<state_type>> kernels;
        return kernels;
    }
    std::shared_ptr<state_type> state;

  private:
    void bind() {
        for (int k = 0; k < 16; k++) {
            in[k] = {nullptr, &state->inputs, kInput, k};
            out[k] = {nullptr, &state->outputs, kOutput, k};
        }
    }

    template <typename Function, typename Tuple>
    void call(Function function, std::shared_ptr<Tuple> ports) {
        int inputs = 0;
        std::apply([&](auto &...port) { (load(port, inputs), ...); }, *ports);
        std::apply(function, *ports);
        int outputs = 0;
        std::apply([&](auto &...port) { (store(port, outputs), ...); }, *ports);
    }

    template <typename Port> void load(Port &port, int &inputs) {
        if (Port::dir != kInput) return;
        auto &reader = state->readers[inputs];
        if (!reader) reader = std::make_shared<detail::reader>(state->inputs[inputs]);
        detail::fill(*reader, port.data(), port.size());
        inputs++;
    }

    template <typename Port> void store(Port &port, int &outputs) {
        if (Port::dir != kOutput) return;
        std::ofstream file(state->outputs[outputs], std::ios::app);
        detail::dump(file, port.data(), port.size());
        outputs++;
    }
};

/* connect<>(from, to): a PLIO to a kernel input, or a kernel output to a PLIO */
template <typename... Unused> void connect(const port_ref &from, const port_ref &to) {
    if (from.file && to.slots && to.dir == kInput) {
        (*to.slots)[to.index] = *from.file;
    } else if (from.slots && from.dir == kOutput && to.file) {
        (*from.slots)[from.index] = *to.file;
    } else {
        std::fprintf(stderr, "adf: only PLIO -> kernel -> PLIO connections are emulated\n");
        std::exit(2);
    }
}

inline std::string &source(kernel &k) { return k.source_file(); }
template <typename Kind> double &runtime(kernel &k) { return k.ratio_value(); }

class graph {
  public:
    void init() {
        for (auto &state : kernel::registry())
            for (auto &file : state->outputs)
                if (!file.empty()) std::ofstream(file, std::ios::trunc);
    }
    void run(int iterations = 1) {
        for (int n = 0; n < iterations; n++)
            for (auto &state : kernel::registry()) {
                kernel k;
                k.state = state;
                k.run_once();
            }
    }
    void end() {}
};

} // namespace adf

#endif /* PYCC_ADF_H */

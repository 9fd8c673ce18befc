"""AI Engine kernels in the intrinsic style (Vyasa's steps 2-5, `aie_convolution`'s triplets
in, C++ out): the innermost output loop vectorized (16 lanes x 2 columns of mac16 for int16,
8 lanes of lmac8/fpmac for int32/float), one accumulator per output vector stored once (lazy
stores), the data each output vector needs loaded as aligned super-loads (the reuse graph's
connected components: one per filter row, at most 1024 bits), the weights broadcast from z
registers loaded once, filled at entry from the weight array (odd tap counts padded with a
zero tap for mac16's two columns), loads just before their first MAC, and the loop-count
pragmas of the AIE compiler's software pipeliner.

The kernel keeps the C function's signature (pointers), so it runs where the original does:
`check --target aie` builds it with c++ against runtime/aie/pycc_aie.h. A float kernel sums
each output's taps in C's order, one fpmac after the other (bit-exact on the emulation, whose
fpmac rounds the product and then the sum); hiding the FP MAC's two-cycle latency (UG1079)
is then left to interleaving independent output vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from .aie_convolution import Convolution, NotAConvolution, Stream, Tap
from .aie_shuffle import (
    MAX_REGISTER_BITS,
    ShuffleConstraintError,
    encode_lane_x,
    encode_lane_z,
    encode_mac16_x,
    encode_mac16_z,
)

#: vector loads and stores are aligned to 128 bits
ALIGN = 16
#: the load units move 256 bits
PART = 32


@dataclass(frozen=True)
class Datapath:
    element: str  # the C type of a lane
    lanes: int
    columns: int
    z_elements: int  # of one z register
    accumulator: str  # the accumulator's type ("" : float sums in vector registers)

    def vector(self, elements: int) -> str:
        return f"v{elements}{self.element.removesuffix('_t')}"

    @property
    def bytes(self) -> int:
        return 2 if self.element == "int16_t" else 4


DATAPATHS = {
    "int16": Datapath("int16_t", 16, 2, 16, "v16acc48"),
    "int32": Datapath("int32_t", 8, 1, 8, "v8acc80"),
    "float": Datapath("float", 8, 1, 8, ""),
}


@dataclass
class _Load:
    """One super-load: the data of a filter row for one output vector."""

    stream: Stream  # its first byte (at x = 0)
    size: int  # bytes: 64 or 128 (a v32int16/v16int32/... or the 1024-bit one)
    span: int  # bytes actually needed from the start
    taps: list[tuple[int, Tap]]  # (element index in the register, tap)


@dataclass(frozen=True)
class MacOp:
    """One MAC intrinsic: the register it reads and its parameters, as C++ arguments."""

    load: int
    weights: int  # the z register
    arguments: str
    useful: int  # multiply slots that are taps (not padding)
    tap: Tap  # its first tap


def aie_kernel(conv: Convolution, signature: list[tuple[str, str]]) -> str:
    """The C++ of `conv` as an AIE kernel with the C function's parameters `signature`
    ((type, name) pairs); NotAConvolution for what the datapath cannot do."""
    path = DATAPATHS[conv.element]
    plan = _Plan(conv, path)
    return plan.write(signature)


class _Plan:
    def __init__(self, conv: Convolution, path: Datapath):
        self.conv, self.path = conv, path
        vector = conv.loops[-1]
        if vector.start != 0 or vector.trips % path.lanes:
            raise NotAConvolution(
                f"the innermost loop runs {vector.trips} times from {vector.start}: the AIE "
                f"kernel computes {path.lanes} outputs at a time from 0"
            )
        self._aligned(conv.output, "the output")
        self.loads = self._super_loads()
        self.weights: list[str] = []  # the z table's entries, C expressions
        self.ops = [op for k in range(len(self.loads)) for op in self._macs(k)]
        if path.columns == 1:  # one tap per MAC: in C's order (float sums stay bit-exact)
            self.ops.sort(key=lambda op: conv.taps.index(op.tap))

    # -- planning ---------------------------------------------------------------------------

    def _aligned(self, stream: Stream, what: str) -> None:
        for stride in stream.strides[:-1]:
            if stride % ALIGN:
                raise NotAConvolution(
                    f"{what} ('{stream.base}') has rows of {stride} bytes, not a multiple of "
                    f"{ALIGN}: the AI Engine loads and stores 128-bit aligned vectors"
                )
        if stream.offset % ALIGN and what == "the output":
            raise NotAConvolution(f"{what} ('{stream.base}') starts off a 128-bit boundary")

    def _super_loads(self) -> list[_Load]:
        """The reuse graph's connected components: the taps whose data overlap, by row."""
        width = self.path.lanes * self.path.bytes
        rows: dict[tuple, list[Tap]] = {}
        for tap in self.conv.taps:
            self._aligned(tap.data, "the data")
            rows.setdefault((tap.data.base, tap.data.strides), []).append(tap)
        loads = []
        for (base, strides), taps in rows.items():
            taps = sorted(taps, key=lambda t: t.data.offset)
            group = [taps[0]]
            for tap in taps[1:]:
                if tap.data.offset < group[-1].data.offset + width:
                    group.append(tap)
                else:
                    loads.append(self._load(base, strides, group))
                    group = [tap]
            loads.append(self._load(base, strides, group))
        return loads

    def _load(self, base: str, strides: tuple[int, ...], taps: list[Tap]) -> _Load:
        low = taps[0].data.offset - taps[0].data.offset % ALIGN
        end = taps[-1].data.offset + self.path.lanes * self.path.bytes
        end += self.path.bytes * (self.path.columns - 1)  # mac16's pad tap reads one more
        span = -(-(end - low) // ALIGN) * ALIGN
        size = 64 if span <= 64 else 128
        if span > MAX_REGISTER_BITS // 8:
            raise NotAConvolution(
                f"a filter row of '{base}' needs {8 * span} bits of data per output vector, "
                f"more than the largest register ({MAX_REGISTER_BITS} bits)"
            )
        placed = [((t.data.offset - low) // self.path.bytes, t) for t in taps]
        return _Load(Stream(base, low, strides), size, span, placed)

    def _weight(self, tap: Tap | None) -> str:
        if tap is None:
            return "0"
        if isinstance(tap.weight, Stream):
            return f"PYCC_AIE_ELEMENT({self.path.element}, {tap.weight.base}, {tap.weight.offset})"
        return repr(float(tap.weight)) + "f" if self.path.element == "float" else str(tap.weight)

    def _macs(self, k: int) -> list[MacOp]:
        """The MACs of load k: mac16 fuses taps one element apart in pairs (a tap without a
        neighbour gets a zero-weight partner); lmac8 and fpmac take one tap each."""
        placed = self.loads[k].taps
        groups: list[list[tuple[int, Tap]]] = []
        for start, tap in placed:
            last = groups[-1] if groups else None
            if last is not None and len(last) < self.path.columns and start == last[-1][0] + 1:
                last.append((start, tap))
            else:
                groups.append([(start, tap)])
        return [self._mac(k, group) for group in groups]

    def _mac(self, k: int, group: list[tuple[int, Tap]]) -> MacOp:
        slot = len(self.weights)
        if self.path.columns == 2 and slot % 2:
            self.weights.append("0")  # a pair starts at an even z element
            slot += 1
        taps = [tap for _, tap in group] + [None] * (self.path.columns - len(group))
        self.weights += [self._weight(t) for t in taps]
        register, zstart = divmod(slot, self.path.z_elements)
        start = group[0][0]
        try:
            if self.path.columns == 2:
                x, z = encode_mac16_x(start, 1, 1), encode_mac16_z(zstart, 0, 1)
                arguments = (
                    f"{x.start}, {x.offsets:#010x}, {x.offsets_hi:#010x}, {x.square:#06x}, "
                    f"W{register}, {z.start}, {z.offsets:#x}, {z.offsets_hi:#x}, {z.step}"
                )
            else:
                x, z = encode_lane_x(start, 1), encode_lane_z(zstart, 0, self.path.z_elements)
                arguments = f"{x.start}, {x.offsets:#010x}, W{register}, {z.start}, {z.offsets:#x}"
        except ShuffleConstraintError as exc:
            raise NotAConvolution(f"the shuffle network cannot select the taps: {exc}") from None
        return MacOp(k, register, arguments, len(group) * self.path.lanes, group[0][1])

    # -- writing ----------------------------------------------------------------------------

    def write(self, signature: list[tuple[str, str]]) -> str:
        path, conv = self.path, self.conv
        table = -(-len(self.weights) // path.z_elements) * path.z_elements
        parameters = ", ".join(f"{t} {n}" for t, n in signature)
        lines = [
            f'extern "C" void {conv.function}({parameters}) {{',
            f"  alignas(32) {path.element} pycc_w[{table}] = {{{', '.join(self.weights)}}};",
        ]
        z = path.vector(path.z_elements)
        lines += [
            f"  const {z} W{r} = PYCC_AIE_LOAD({z}, pycc_w + {r * path.z_elements});"
            for r in range(table // path.z_elements)
        ]
        counters = [f"i{d}" for d in range(len(conv.loops))]
        indent = "  "
        for depth, loop in enumerate(conv.loops):
            name, step = counters[depth], 1
            trips = loop.trips
            if depth == len(conv.loops) - 1:
                step, trips = path.lanes, loop.trips // path.lanes
            lines.append(
                f"{indent}for (int {name} = {loop.start}; {name} < {loop.start + loop.trips}; "
                f"{name} += {step})"
            )
            lines.append(
                f"{indent}  chess_prepare_for_pipelining chess_loop_range({trips}, {trips}) {{"
            )
            indent += "  "
        lines += [indent + line for line in self._body(counters)]
        for _ in conv.loops:
            indent = indent[:-2]
            lines.append(f"{indent}}}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _at(self, stream: Stream, counters: list[str]) -> str:
        terms = [str(stream.offset)] + [f"{s} * {c}" for s, c in zip(stream.strides, counters) if s]
        return f"PYCC_AIE_AT({stream.base}, {' + '.join(terms)})"

    def _body(self, counters: list[str]) -> list[str]:
        path, conv = self.path, self.conv
        out = path.vector(path.lanes)
        at = self._at(conv.output, counters)
        float_path = not path.accumulator
        lines = []
        if float_path:
            first = f"PYCC_AIE_LOAD({out}, {at})" if conv.accumulates else "null_v8float()"
            lines.append(f"{out} acc0 = {first};")
        else:
            first = (
                f"ups(PYCC_AIE_LOAD({out}, {at}), 0)"
                if conv.accumulates
                else (f"null_{path.accumulator}()")
            )
            lines.append(f"{path.accumulator} acc0 = {first};")
        done: set[int] = set()
        for op in self.ops:
            if op.load not in done:
                lines += self._load_lines(op.load, counters)
                done.add(op.load)
            mac = "fpmac" if float_path else "mac16" if path.columns == 2 else "lmac8"
            lines.append(f"acc0 = {mac}(acc0, X{op.load}, {op.arguments});")
        result = "acc0" if float_path else "srs(acc0, 0)"
        lines.append(f"PYCC_AIE_STORE({out}, {at}, {result});")
        return lines

    def _load_lines(self, k: int, counters: list[str]) -> list[str]:
        """The super-load: 256-bit parts (a trailing 128-bit one where the data end there)."""
        load, path = self.loads[k], self.path
        register = path.vector(load.size // path.bytes)
        part, half = path.vector(PART // path.bytes), path.vector(ALIGN // path.bytes)
        lines = [f"{register} X{k} = undef_{register}();"]
        for index in range(-(-load.span // PART)):
            offset = load.stream.offset + index * PART
            address = self._at(Stream(load.stream.base, offset, load.stream.strides), counters)
            if (index + 1) * PART <= load.span:
                lines.append(f"X{k} = upd_w(X{k}, {index}, PYCC_AIE_LOAD({part}, {address}));")
            else:
                lines.append(f"X{k} = upd_v(X{k}, {2 * index}, PYCC_AIE_LOAD({half}, {address}));")
        return lines

    # -- what the kernel does, for the report ----------------------------------------------

    def mac_slots(self) -> tuple[int, int]:
        """(useful multiplies, multiply slots) of one output vector."""
        slots = len(self.ops) * self.path.lanes * self.path.columns
        return sum(op.useful for op in self.ops), slots

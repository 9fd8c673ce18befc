"""AI Engine kernels (Vyasa's steps 2-5: `aie_convolution`'s triplets in, C++ out): the
innermost output loop of a schedule (`aie_schedule` picks the loop order, the rows and the
layouts) vectorized (16 lanes x 2 columns of mac16 for int16, 8 lanes of lmac8/fpmac for
int32/float), `rows` x `vectors` output vectors per iteration (unroll-and-jam of the loop
around it and of the vector loop itself), one accumulator per output vector stored once
(lazy stores), the
data of each input row loaded once per iteration as an aligned super-load (the reuse graph's
connected components, at most 1024 bits), the weights broadcast from z registers filled from
the weight array (once per call, or per iteration of the loop they change with), mac16's
columns filled by taps one element apart, else by lone taps of two rows of data (cross-row
fusion), else by a zero weight, loads just before their first MAC, and the loop-count
pragmas of the AIE compiler's software pipeliner. `aie_styles` spells the plan in intrinsics
or in the AI Engine API.

The kernel keeps the C function's signature (pointers), so it runs where the original does:
`check --target aie` builds it with c++ against runtime/aie/. A float kernel sums each
output's taps in C's order, one fpmac after the other (bit-exact on the emulation, whose fpmac
rounds the product and then the sum); the FP MAC's two-cycle latency (UG1079) is hidden by
the independent accumulators of the output vectors, not by reordering a sum.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .aie_convolution import Convolution, NotAConvolution, Stream, Tap
from .aie_layout import PACKED_SUFFIX
from .aie_model import VECTOR_REGISTER_BITS, live_vector_bits
from .aie_shuffle import (
    MAX_REGISTER_BITS,
    ShuffleConstraintError,
    encode_lane_x,
    encode_lane_z,
    encode_mac16_x,
    encode_mac16_z,
)
from .aie_styles import STYLES, MacRun

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


@dataclass(frozen=True)
class _Use:
    """A tap as one of the output vectors of an iteration (its accumulator `acc`) computes
    it: its data shifted as that vector is from the iteration's first."""

    acc: int
    tap: Tap
    offset: int  # the data's byte offset
    order: int  # the tap's place in C's sum


@dataclass
class _Load:
    """One super-load: the data of an input row for the output vectors of an iteration."""

    stream: Stream  # its first byte (at the iteration's first output)
    size: int  # bytes: 64 or 128 (a v32int16/v16int32/... or the 1024-bit one)
    span: int  # bytes actually needed from the start
    uses: list[tuple[int, _Use]]  # (element index in the register, use)

    @property
    def parts(self) -> int:
        """Loads of at most 256 bits that fill it."""
        return -(-self.span // PART)


@dataclass(frozen=True)
class MacOp:
    """One MAC intrinsic: the register it reads, its accumulator, its parameters as C++
    arguments, and how many of its multiplies are taps (not padding)."""

    load: int
    acc: int  # its accumulator: the output vector of the iteration
    z: int  # the z register of its weights
    zstart: int  # its first weight's element there
    arguments: str
    useful: int
    order: int  # its first tap's place in C's sum
    start: int
    #: a second register whose tap fills the second column (cross-row fusion: the two
    #: registers read as one of 1024 bits, the second tap `step` elements after the first)
    partner: int | None = None
    step: int = 1

    @property
    def register(self) -> str:
        return f"X{self.load}" if self.partner is None else f"Y{self.load}_{self.partner}"


#: output vectors per iteration the tuner tries at most (program memory is 16 KB)
MOST_OUTPUTS = 8


def unroll_counts(conv: Convolution) -> list[tuple[int, int]]:
    """(rows, vectors): the unroll-and-jam factors of the loop around the vector loop and of
    the vector loop itself (powers of two that divide their trip counts, at most
    MOST_OUTPUTS output vectors in all; the MACs are ordered by data register or by output,
    `Plan.by_output`, where there are several)."""
    lanes = DATAPATHS[conv.element].lanes
    vectors = conv.loops[-1].trips // lanes if conv.loops[-1].trips % lanes == 0 else 1
    around = conv.loops[-2].trips if len(conv.loops) > 1 else 1
    powers = [1, 2, 4, 8]
    return [
        (u, v)
        for u in powers
        for v in powers
        if u * v <= MOST_OUTPUTS and around % u == 0 and vectors % v == 0
    ]


class Plan:
    """One way to write `conv` on `path`: its super-loads, weight table, MACs and the
    liveness of its registers (what the model estimates and `write` spells)."""

    def __init__(
        self,
        conv: Convolution,
        path: Datapath,
        rows: int = 1,
        vectors: int = 1,
        by_output: bool = False,
    ):
        """`by_output`: the MACs output vector after output vector (each accumulator live
        from its first MAC to its store), else data register after data register (each
        loaded register live from its load to its last MAC)."""
        self.conv, self.path, self.rows, self.vectors = conv, path, rows, vectors
        self.by_output = by_output
        #: output vectors per iteration (`rows` x `vectors`, row-major): one accumulator each
        self.outputs = rows * vectors
        vector = conv.loops[-1]
        if vector.start != 0 or vector.trips % path.lanes:
            raise NotAConvolution(
                f"the innermost loop runs {vector.trips} times from {vector.start}: the AIE "
                f"kernel computes {path.lanes} outputs at a time from 0"
            )
        if vector.trips % (path.lanes * vectors):
            raise NotAConvolution(f"{vectors} output vectors per row do not divide the loop")
        if rows != 1 and (len(conv.loops) < 2 or conv.loops[-2].trips % rows):
            raise NotAConvolution(f"{rows} output rows per iteration do not divide the loop")
        for tap in conv.taps if rows != 1 else ():
            if isinstance(tap.weight, Stream) and tap.weight.strides[-2]:
                raise NotAConvolution(
                    f"the weight '{tap.weight.base}' changes with the output rows (the rows of "
                    "an iteration share their weights)"
                )
        self._aligned(conv.output, "the output")
        self.loads = self._super_loads()
        self.weights: list[str] = []  # the z table's entries, C expressions
        self.slots: dict[tuple, int] = {}  # the z slot of each group of taps
        groups = [(k, acc, g) for k in range(len(self.loads)) for acc, g in self._groups(k)]
        self.ops = self._fused(groups) if path.columns == 2 else [self._mac(*g) for g in groups]
        if path.element == "float":  # one tap per MAC, in C's order per output: bit-exact
            self.ops.sort(key=lambda op: (op.order, op.acc))
        if by_output:  # stable: each output's MACs keep their order
            self.ops.sort(key=lambda op: op.acc)
        #: the z registers are loaded once per call where they fit the register file with
        #: the data; else each iteration loads each one before its first MAC
        self.hoisted = True
        if live_vector_bits(self) > VECTOR_REGISTER_BITS:
            self.hoisted = False

    def buffer_bytes(self) -> dict[str, int]:
        """Bytes from each array's start that the kernel touches: the output's and weights'
        elements, the data's super-loads (which may read a little past the last element the
        C reads)."""
        conv = self.conv
        last = [loop.start + loop.trips - 1 for loop in conv.loops]
        last[-1] = conv.loops[-1].trips - self.path.lanes  # the last vector's first element
        first_row = list(last)  # a super-load's offset includes its output of the iteration
        first_row[-1] = conv.loops[-1].trips - self.path.lanes * self.vectors
        if len(last) > 1:
            first_row[-2] = conv.loops[-2].start + conv.loops[-2].trips - self.rows

        def end(stream: Stream, width: int, counters: list[int]) -> int:
            return stream.offset + width + sum(s * c for s, c in zip(stream.strides, counters))

        vector = self.path.lanes * self.path.bytes
        ends = {conv.output.base: end(conv.output, vector, last)}
        for load in self.loads:
            reach = end(load.stream, load.span, first_row)
            ends[load.stream.base] = max(ends.get(load.stream.base, 0), reach)
        for tap in conv.taps:
            if isinstance(tap.weight, Stream):  # per output channel, for a layer's weights
                weight = end(tap.weight, self.path.bytes, last)
                ends[tap.weight.base] = max(ends.get(tap.weight.base, 0), weight)
        return ends

    def buffer_elements(self) -> dict[str, int]:
        """Elements of each array the kernel needs (`buffer_bytes`), a packed array whole."""
        found = {name: -(-end // self.path.bytes) for name, end in self.buffer_bytes().items()}
        for layout in self.conv.layouts:
            found[layout.base] = max(found[layout.base], layout.elements)
        return found

    def schedule(self) -> str:
        """The loop order, the vector loop and the packed arrays, as remarks and reports say."""
        names = [loop.name or f"l{n}" for n, loop in zip(self.conv.order, self.conv.loops)]
        text = f"loops {' '.join(names)}, the lanes along {names[-1]}"
        if self.by_output:
            text += ", output vector after output vector"
        for layout in self.conv.layouts:
            c_order = tuple(range(len(layout.dims)))
            text += (
                f"; '{layout.base}' packed [{layout.notation()}] (C's [{layout.notation(c_order)}])"
            )
        return text

    @property
    def kernel_name(self) -> str:
        """The C function's name, or FUNCTION_packed where the kernel takes packed arrays
        (the C function then packs, calls it and unpacks: `aie_layout.host_wrapper`)."""
        return self.conv.function + (PACKED_SUFFIX if self.conv.layouts else "")

    @property
    def z_registers(self) -> int:
        return -(-len(self.weights) // self.path.z_elements)

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

    def shift(self, stream: Stream, acc: int) -> int:
        """Bytes from the iteration's first output vector to output vector `acc`, in
        `stream`: down its rows, along its vectors."""
        row, vector = divmod(acc, self.vectors)
        down = stream.strides[-2] if len(stream.strides) > 1 else 0
        return row * down + vector * self.path.lanes * stream.strides[-1]

    def _super_loads(self) -> list[_Load]:
        """The reuse graph's connected components: the uses whose data overlap, by row (the
        output rows of an iteration share the input rows they both read)."""
        width = self.path.lanes * self.path.bytes
        groups: dict[tuple, list[_Use]] = {}
        for order, tap in enumerate(self.conv.taps):
            self._aligned(tap.data, "the data")
            for acc in range(self.outputs):
                use = _Use(acc, tap, tap.data.offset + self.shift(tap.data, acc), order)
                groups.setdefault((tap.data.base, tap.data.strides), []).append(use)
        loads = []
        for (base, strides), uses in groups.items():
            uses = sorted(uses, key=lambda u: (u.offset, u.acc))
            group = [uses[0]]
            for use in uses[1:]:
                if use.offset < max(u.offset for u in group) + width:
                    group.append(use)
                else:
                    loads.append(self._load(base, strides, group))
                    group = [use]
            loads.append(self._load(base, strides, group))
        return loads

    def _load(self, base: str, strides: tuple[int, ...], uses: list[_Use]) -> _Load:
        """The super-load of `uses`: the data from the first one's aligned start to the
        last one's end, in a register that also holds the element after it (mac16's second
        column reads it for a lone tap, times a zero weight: it need not be loaded)."""
        low = uses[0].offset - uses[0].offset % ALIGN
        end = max(u.offset for u in uses) + self.path.lanes * self.path.bytes
        span = -(-(end - low) // ALIGN) * ALIGN
        register = end - low + self.path.bytes * (self.path.columns - 1)
        if register > MAX_REGISTER_BITS // 8:
            raise NotAConvolution(
                f"a filter row of '{base}' needs {8 * register} bits of data per output "
                f"vector, more than the largest register ({MAX_REGISTER_BITS} bits)"
            )
        placed = [((u.offset - low) // self.path.bytes, u) for u in uses]
        return _Load(Stream(base, low, strides), 64 if register <= 64 else 128, span, placed)

    @property
    def fill_depth(self) -> int:
        """How many loops enclose the weight table's fill: the weights change with them (a
        layer's output channel); 0: filled once per call."""
        depths = [
            d + 1
            for tap in self.conv.taps
            if isinstance(tap.weight, Stream)
            for d, stride in enumerate(tap.weight.strides)
            if stride
        ]
        return max(depths, default=0)

    def _weight(self, tap: Tap | None) -> str:
        if tap is None:
            return "0"
        if isinstance(tap.weight, Stream):
            counters = [f"i{d}" for d in range(len(tap.weight.strides))]
            offset = self._offset(tap.weight, counters)
            return f"PYCC_AIE_ELEMENT({self.path.element}, {tap.weight.base}, {offset})"
        if self.path.element == "float":
            return repr(float(tap.weight)) + "f"
        bits = 8 * self.path.bytes
        if not -(1 << (bits - 1)) <= tap.weight < 1 << (bits - 1):
            raise NotAConvolution(
                f"the constant weight {tap.weight} does not fit the {bits}-bit weight lanes"
            )
        return str(tap.weight)

    def _groups(self, k: int) -> list[tuple[int, list[tuple[int, _Use]]]]:
        """The taps of load k as MAC groups, per output vector: for mac16 taps one element
        apart in pairs; for lmac8 and fpmac one tap each."""
        found = []
        for acc in range(self.outputs):
            placed = [(s, u) for s, u in self.loads[k].uses if u.acc == acc]
            placed.sort(key=lambda pair: pair[0])  # stable: a repeated tap keeps C's order
            groups: list[list[tuple[int, _Use]]] = []
            for start, use in placed:
                last = groups[-1] if groups else None
                if last and len(last) < self.path.columns and start == last[-1][0] + 1:
                    last.append((start, use))
                else:
                    groups.append([(start, use)])
            found += [(acc, group) for group in groups]
        return found

    def _fused(self, groups: list) -> list[MacOp]:
        """mac16's MACs: a pair of taps each; a tap left alone in its row of data is paired
        with one left alone in another row of data of the same output vector, the two
        registers read as one (the experts' cross-row fusion, which Vyasa does not do), else
        with a zero weight."""
        ops, alone = [], {}
        for k, acc, group in groups:
            if len(group) == 2:
                ops.append(self._mac(k, acc, group))
                continue
            other = alone.pop(acc, None)
            fused = other and self._cross(other[0], other[1], k, group[0], acc)
            if fused:
                ops.append(fused)
                continue
            if other:
                ops.append(self._mac(other[0], acc, other[1]))
            alone[acc] = (k, group)
        ops += [self._mac(k, acc, group) for acc, (k, group) in alone.items()]
        return ops

    def _cross(self, k1: int, group1: list, k2: int, use2: tuple, acc: int) -> MacOp | None:
        """One mac16 of the lone tap of load k1 and that of load k2 (registers of 512 bits:
        together the 1024-bit register mac16 reads), or None where the network cannot."""
        (start, use1), (start2, _) = group1[0], use2
        if self.loads[k1].size != 64 or self.loads[k2].size != 64:
            return None
        step = 32 + start2 - start  # elements: the second register follows the first
        try:
            x = encode_mac16_x(start, 1, step)
        except ShuffleConstraintError:
            return None
        register, zstart = divmod(self._slot((use1.tap, use2[1].tap)), self.path.z_elements)
        z = encode_mac16_z(zstart, 0, 1)
        arguments = (
            f"{x.start}, {x.offsets:#010x}, {x.offsets_hi:#010x}, {x.square:#06x}, "
            f"W{register}, {z.start}, {z.offsets:#x}, {z.offsets_hi:#x}, {z.step}"
        )
        useful = 2 * self.path.lanes
        return MacOp(k1, acc, register, zstart, arguments, useful, use1.order, start, k2, step)

    def _slot(self, taps: tuple[Tap | None, ...]) -> int:
        """The z slot of a group of taps' weights, shared by every output row."""
        if taps not in self.slots:
            if self.path.columns == 2 and len(self.weights) % 2:
                self.weights.append("0")  # a pair starts at an even z element
            self.slots[taps] = len(self.weights)
            self.weights += [self._weight(t) for t in taps]
        return self.slots[taps]

    def _mac(self, k: int, acc: int, group: list[tuple[int, _Use]]) -> MacOp:
        taps = tuple(use.tap for _, use in group) + (None,) * (self.path.columns - len(group))
        register, zstart = divmod(self._slot(taps), self.path.z_elements)
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
        useful = len(group) * self.path.lanes
        return MacOp(k, acc, register, zstart, arguments, useful, group[0][1].order, start)

    # -- writing ----------------------------------------------------------------------------

    def write(self, signature: list[tuple[str, str]], style=STYLES["intrinsics"]) -> str:
        """The kernel's C++ definition, spelled in `style` (`aie_styles`)."""
        path, conv = self.path, self.conv
        table = -(-len(self.weights) // path.z_elements) * path.z_elements
        parameters = ", ".join(f"{t} {n}" for t, n in signature)
        fill = [f"alignas(32) {path.element} pycc_w[{table}] = {{{', '.join(self.weights)}}};"]
        if self.hoisted:
            fill += [style.weights(path, r, r * path.z_elements) for r in range(self.z_registers)]
        lines = [f'extern "C" void {self.kernel_name}({parameters}) {{']
        used = {conv.output.base} | {t.data.base for t in conv.taps}
        used |= {t.weight.base for t in conv.taps if isinstance(t.weight, Stream)}
        lines += [f"  (void){name};" for _, name in signature if name not in used]
        counters = [f"i{d}" for d in range(len(conv.loops))]
        indent = "  "
        for depth, loop in enumerate(conv.loops):
            if depth == self.fill_depth:
                lines += [indent + line for line in fill]
            steps = {len(conv.loops) - 1: path.lanes * self.vectors, len(conv.loops) - 2: self.rows}
            step = steps.get(depth, 1)
            trips = loop.trips // step
            name = counters[depth]
            lines.append(
                f"{indent}for (int {name} = {loop.start}; {name} < {loop.start + loop.trips}; "
                f"{name} += {step})"
            )
            lines.append(
                f"{indent}  chess_prepare_for_pipelining chess_loop_range({trips}, {trips}) {{"
            )
            indent += "  "
        lines += [indent + line for line in self._body(counters, style)]
        for _ in conv.loops:
            indent = indent[:-2]
            lines.append(f"{indent}}}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def runs(self) -> list[MacRun]:
        """The MACs as runs of one accumulator over consecutive data and weights (the API's
        sliding multiplications; one intrinsic per MAC of the run)."""
        columns, found = self.path.columns, []
        for op in self.ops:
            last = found[-1] if found else None
            if (
                last is not None
                and (last.register, last.acc, last.z) == (op.register, op.acc, op.z)
                and op.step == last.step == 1
                and op.start == last.start + last.points
                and op.zstart == last.zstart + last.points
            ):
                found[-1] = replace(
                    last, points=last.points + columns, arguments=(*last.arguments, op.arguments)
                )
            else:
                found.append(
                    MacRun(
                        op.register,
                        op.acc,
                        op.z,
                        op.start,
                        op.zstart,
                        columns,
                        (op.arguments,),
                        op.step,
                    )  # fmt: skip
                )
        return found

    def _offset(self, stream: Stream, counters: list[str], acc: int = 0) -> str:
        """The C expression of the stream's byte offset at the counters' values (for output
        vector `acc` of the iteration)."""
        offset = stream.offset + self.shift(stream, acc)
        terms = [str(offset)] + [f"{s} * {c}" for s, c in zip(stream.strides, counters) if s]
        return " + ".join(terms)

    def _at(self, stream: Stream, counters: list[str], acc: int = 0) -> str:
        return f"PYCC_AIE_AT({stream.base}, {self._offset(stream, counters, acc)})"

    def _body(self, counters: list[str], style) -> list[str]:
        """One iteration: each output vector's accumulator just before its first MAC, the
        loads before their first MAC, one store per accumulator after its last MAC."""
        path, conv = self.path, self.conv
        lines = []
        runs = self.runs()
        last = {run.acc: n for n, run in enumerate(runs)}
        done: set = set()
        weights: set[int] = set() if not self.hoisted else set(range(self.z_registers))
        # a float sum that C starts with its first product (not 0 + it: the sign of zero)
        started = set() if path.element == "float" and not conv.starts_with_zero else None
        if conv.accumulates:
            started = None
        ops = iter(self.ops)
        for n, run in enumerate(runs):
            if ("acc", run.acc) not in done:
                at = self._at(conv.output, counters, run.acc)
                lines += style.accumulator(path, run.acc, at, conv.accumulates)
                done.add(("acc", run.acc))
            first_op = next(ops)
            for _ in run.arguments[1:]:
                next(ops)
            for k in (first_op.load, first_op.partner):
                if k is not None and k not in done:
                    lines += self._load_lines(k, counters, style)
                    done.add(k)
            if first_op.partner is not None and run.register not in done:
                lines.append(style.pair(path, first_op.load, first_op.partner))
                done.add(run.register)
            if run.z not in weights:
                lines.append(style.weights(path, run.z, run.z * path.z_elements))
                weights.add(run.z)
            first = started is not None and run.acc not in started
            lines += style.mac(path, run, first)
            if started is not None:
                started.add(run.acc)
            if last[run.acc] == n:
                lines.append(style.store(path, run.acc, self._at(conv.output, counters, run.acc)))
        return lines

    def _load_lines(self, k: int, counters: list[str], style) -> list[str]:
        """The super-load: 256-bit parts (a trailing 128-bit one where the data end there)."""
        load, path = self.loads[k], self.path
        lines = [style.register(path, k, load.size // path.bytes)]
        for index in range(load.parts):
            offset = load.stream.offset + index * PART
            address = self._at(Stream(load.stream.base, offset, load.stream.strides), counters)
            if (index + 1) * PART <= load.span:
                lines.append(style.part(path, k, index, PART // path.bytes, address))
            else:
                lines.append(style.part(path, k, 2 * index, ALIGN // path.bytes, address))
        return lines

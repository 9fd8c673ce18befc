"""The MACs/cycle model of an AI Engine kernel (Vyasa's F11) and the choice it makes.

Modelled, per iteration of the vector loop (`rows` output vectors): the AIE1 core issues per
cycle one vector MAC, two loads and one store of at most 256 bits (Vyasa Table V: "32B 2 read
and 1 write"; a 128-bit load takes a load slot as well), in a software-pipelined loop that
overlaps them, plus LOOP_OVERHEAD cycles; so

    cycles = max(MAC intrinsics, loads / 2, stores) + LOOP_OVERHEAD + weight fill
    MACs/cycle = rows x lanes x taps / cycles   (the unpadded MACs, as the paper counts)

against peaks of 32 (int16: 16 lanes x 2 columns), 8 (int32) and 8 (float); the weight fill
(WEIGHT_FILL cycles a weight, once per call or per output channel) is spread over the
iterations. Not modelled: stalls of the pipeline's prologue and epilogue, bank conflicts,
register spills (the plan's live vector bits are checked against the 16 x 128-bit register
file instead). LOOP_OVERHEAD is an assumption (the paper gives no
cycle breakdown): one cycle per iteration, which makes the model prefer, as the paper's tuner
did, 8 rows for a 2x2 int16 filter over 1 (Table VI)."""

from __future__ import annotations

from dataclasses import dataclass

#: issue slots per cycle: vector MAC, 256-bit loads, 256-bit stores
MAC_ISSUE, LOAD_ISSUE, STORE_ISSUE = 1, 2, 1
#: cycles per iteration of the vector loop beyond its issue slots (an assumption, above)
LOOP_OVERHEAD = 1
#: cycles per weight the kernel copies into its table (a scalar load and store: the store unit
#: does one a cycle)
WEIGHT_FILL = 1
#: the vector register file: 16 registers of 128 bits (accumulators live apart)
VECTOR_REGISTER_BITS = 16 * 128
#: the accumulator registers (AM009: eight 384-bit AM registers; a v16acc48 or a v8acc80
#: takes two). Float sums live in vector registers instead.
ACCUMULATOR_REGISTERS = 4
#: the tile's data memory: every array of the kernel in it (Vyasa §III-A)
LOCAL_MEMORY = 128 * 1024
#: the datapath's peak MACs per cycle by element type
PEAK = {"int16": 32, "int32": 8, "float": 8}


@dataclass(frozen=True)
class Estimate:
    rows: int  # output rows per iteration
    vectors: int  # output vectors per row and iteration
    macs: int  # MAC intrinsics per iteration
    loads: int  # loads of at most 256 bits per iteration
    stores: int
    cycles: float
    useful: int  # multiplies that are taps, per iteration
    slots: int  # multiplies the MAC intrinsics occupy
    vector_bits: int  # the most vector register bits live at once
    accumulators: int  # the most accumulator registers live at once
    peak: int

    @property
    def macs_per_cycle(self) -> float:
        return self.useful / self.cycles

    @property
    def utilization(self) -> float:
        """Taps over the MAC slots the intrinsics occupy (1 - padding)."""
        return self.useful / self.slots

    @property
    def fits(self) -> bool:
        return (
            self.vector_bits <= VECTOR_REGISTER_BITS and self.accumulators <= ACCUMULATOR_REGISTERS
        )


def estimate(plan) -> Estimate:
    """The model's figures for a kernel plan (`aie_kernel.kernel_plan`)."""
    path = plan.path
    loads = sum(load.parts for load in plan.loads)
    if not plan.hoisted:
        loads += len({op.z for op in plan.ops})
    stores = plan.outputs
    macs = len(plan.ops)
    cycles = max(-(-macs // MAC_ISSUE), -(-loads // LOAD_ISSUE), -(-stores // STORE_ISSUE))
    cycles += weight_fill(plan)
    useful = sum(op.useful for op in plan.ops)
    return Estimate(
        rows=plan.rows,
        vectors=plan.vectors,
        macs=macs,
        loads=loads,
        stores=stores,
        cycles=cycles + LOOP_OVERHEAD,
        useful=useful,
        slots=macs * path.lanes * path.columns,
        vector_bits=live_vector_bits(plan),
        accumulators=live_accumulators(plan) if plan.path.accumulator else 0,
        peak=PEAK[plan.conv.element],
    )


def weight_fill(plan) -> float:
    """Cycles per iteration of filling the weight table: WEIGHT_FILL per weight read from
    memory, once per call or per iteration of the loops the weights change with (a layer's
    output channel), spread over the vector loop's iterations in between."""
    read = sum(1 for w in plan.weights if w.startswith("PYCC_AIE_ELEMENT"))
    loops = plan.conv.loops
    iterations = 1
    for depth, loop in enumerate(loops[plan.fill_depth :], plan.fill_depth):
        step = plan.path.lanes * plan.vectors if depth == len(loops) - 1 else 1
        step = plan.rows if depth == len(loops) - 2 else step
        iterations *= loop.trips // step
    return WEIGHT_FILL * read / iterations


def _live_ranges(plan) -> dict[tuple[str, int], list[int]]:
    """From the first to the last MAC that reads it: each loaded register ("x"), weight
    register ("z") and accumulator ("acc")."""
    ranges: dict[tuple[str, int], list[int]] = {}
    for n, op in enumerate(plan.ops):
        keys = [("x", op.load), ("z", op.z), ("acc", op.acc)]
        if op.partner is not None:  # two registers read as one
            keys.append(("x", op.partner))
        for key in keys:
            ranges.setdefault(key, [n, n])[1] = n
    return ranges


def _most_live(plan, size: dict) -> int:
    """The largest sum of `size` over the ranges live at one MAC."""
    ranges = {k: v for k, v in _live_ranges(plan).items() if k in size}
    return max(
        (sum(size[k] for k, (a, b) in ranges.items() if a <= n <= b) for n in range(len(plan.ops))),
        default=0,
    )


def live_vector_bits(plan) -> int:
    """The most vector register bits live at once: float accumulators (in vector
    registers), the weights' z registers (throughout when hoisted out of the loops) and each
    register loaded in the loop from its load to its last MAC."""
    path = plan.path
    z_bits = path.z_elements * path.bytes * 8
    size = {("x", k): load.size * 8 for k, load in enumerate(plan.loads)}
    if not path.accumulator:
        size |= {("acc", a): path.lanes * path.bytes * 8 for a in range(plan.outputs)}
    fixed = 0
    if getattr(plan, "hoisted", True):
        fixed += plan.z_registers * z_bits
    else:
        size |= {("z", z): z_bits for z in range(plan.z_registers)}
    return fixed + _most_live(plan, size)


def live_accumulators(plan) -> int:
    """The most accumulators live at once (each from its first MAC to its store)."""
    return _most_live(plan, {("acc", a): 1 for a in range(plan.outputs)})


def best(plans: list):
    """The plan the model ranks first: the most MACs/cycle among those that fit the register
    file (all do not: the fewest live bits); on a tie, fewer packed arrays, the loops nearer
    the source's order, fewer output vectors (less code), rows rather than vectors.
    Deterministic."""

    def plainness(plan) -> tuple:
        order = plan.conv.order
        swaps = sum(a > b for i, a in enumerate(order) for b in order[i + 1 :])
        return (-len(plan.conv.layouts), -swaps, -plan.outputs, -plan.vectors, -plan.by_output)

    estimates = [(plan, estimate(plan)) for plan in plans]
    fitting = [(p, e) for p, e in estimates if e.fits]
    if not fitting:
        return min(estimates, key=lambda pe: (pe[1].vector_bits, pe[0].outputs))[0]
    return max(fitting, key=lambda pe: (pe[1].macs_per_cycle, plainness(pe[0])))[0]

"""The AI Engine's shuffle network: the intrinsic parameters that select, for every lane and
column of a vector MAC, the element of each operand register it multiplies (AIE1, UG1078
"Full Lane Addressing Scheme", UG1079 "MAC on 16x16 bits"/"MAC on 32x32 bits"; the encoding
of Vyasa's step 4, ../shared/reference/aie-vectorization-vyasa.md §1.2 and §2.6).

An operand's wanted element for (lane i, column j) is `start + a*i + b*j` (a: the lane stride,
b: the distance between the fused taps). The encoders return the parameters that select it,
or raise ShuffleConstraintError when the network cannot (the candidate schedule is then
pruned); the `*_index` functions are the documented selection rules themselves, which the
encoders are checked against and the host emulation (runtime/aie/pycc_aie.h) implements.
"""

from __future__ import annotations

from dataclasses import dataclass

#: lanes x columns of mac16 (16-bit), lanes of lmac8 (32-bit) and of fpmac (float)
MAC16_LANES, MAC16_COLUMNS = 16, 2
LMAC8_LANES = 8
#: the largest register an operand may be read from: 1024 bits
MAX_REGISTER_BITS = 1024
#: mac16's z buffer is a v16int16, and AIE1 encodes zstart in 4 bits
Z16_ELEMENTS = 16


class ShuffleConstraintError(Exception):
    """The shuffle network cannot select the wanted elements (Vyasa prunes the schedule)."""


@dataclass(frozen=True)
class XSelect:
    """mac16's x-side parameters (`xsquare` unused by the 32-bit and float MACs: 0)."""

    start: int
    offsets: int
    offsets_hi: int
    square: int = 0


@dataclass(frozen=True)
class ZSelect:
    """The z-side parameters (`step` and `offsets_hi` are mac16's only: 0 elsewhere)."""

    start: int
    offsets: int
    offsets_hi: int = 0
    step: int = 0


def nibble(word: int, index: int) -> int:
    """The 4-bit field `index` of `word`, least significant first."""
    return (word >> (4 * index)) & 0xF


def _pack(values: list[int]) -> int:
    """Nibbles, least significant first, as one word; each must fit 4 bits."""
    word = 0
    for index, value in enumerate(values):
        if not 0 <= value <= 15:
            raise ShuffleConstraintError(f"offset {value} does not fit a 4-bit lane field")
        word |= value << (4 * index)
    return word


# ------------------------------------------------------------------- 16-bit: mac16 (16 x 2)


def mac16_x_index(select: XSelect, lane: int, column: int) -> int:
    """The x-buffer element mac16 multiplies at (lane, column), before the wrap modulo the
    buffer's size. Lanes go in pairs (2p, 2p+1) over 32-bit words: the even lane's word is
    xstart/2 + n(2p), the odd lane's that plus n(2p+1) + 1; `xsquare` then picks each lane's
    two elements among the four of those words."""
    offsets = select.offsets if lane < 8 else select.offsets_hi
    pair = (lane % 8) // 2
    even = select.start // 2 + nibble(offsets, 2 * pair)
    odd = even + nibble(offsets, 2 * pair + 1) + 1
    candidates = (2 * even, 2 * even + 1, 2 * odd, 2 * odd + 1)
    pick = nibble(select.square, 2 * (lane % 2) + column)
    if pick > 3:
        raise ShuffleConstraintError(f"xsquare field {pick} picks none of a lane pair's 4 elements")
    return candidates[pick]


def mac16_z_index(select: ZSelect, lane: int, column: int) -> int:
    """The z-buffer element mac16 multiplies at (lane, column)."""
    offsets = select.offsets if lane < 8 else select.offsets_hi
    return select.start + nibble(offsets, lane % 8) + column * select.step


def encode_mac16_x(start: int, a: int, b: int) -> XSelect:
    """mac16's x parameters for elements `start + a*lane + b*column`; a, b >= 0 (the form
    of mlir-aie's computeXbuffAttr_i16xi16)."""
    if start < 0 or a < 0 or b < 0:
        raise ShuffleConstraintError("negative start or stride")
    if not (b <= 1 or b % 2 == 0):
        raise ShuffleConstraintError(f"fused taps {b} elements apart (must be 0, 1 or even)")
    if a > 1 and b > 1:
        raise ShuffleConstraintError(f"lane stride {a} and tap distance {b} both exceed 1")
    xstart, shift = start - start % 2, start % 2
    spread = max(a, b)
    odd = 0 if spread <= 1 else (spread - 2) // 2
    lanes = [a * (lane // 2) if lane % 2 == 0 else odd for lane in range(MAC16_LANES)]
    column, lane = min(2, b), min(2, a)
    if shift and (column > 1 or lane > 1):
        raise ShuffleConstraintError("an odd start needs lane stride and tap distance <= 1")
    square = _pack([v + shift for v in (0, column, lane, lane + column)])
    select = XSelect(xstart, _pack(lanes[:8]), _pack(lanes[8:]), square)
    _verify(start, a, b, lambda i, j: mac16_x_index(select, i, j), MAC16_LANES, MAC16_COLUMNS)
    return select


def encode_mac16_z(start: int, a: int, b: int) -> ZSelect:
    """mac16's z parameters for elements `start + a*lane + b*column` of a v16int16 (a = 0:
    a scalar broadcast on every lane, the weights' case)."""
    if not 0 <= start < Z16_ELEMENTS:
        raise ShuffleConstraintError(f"zstart {start} does not fit 4 bits")
    lanes = [a * lane for lane in range(MAC16_LANES)]
    select = ZSelect(start, _pack(lanes[:8]), _pack(lanes[8:]), b)
    _verify(start, a, b, lambda i, j: mac16_z_index(select, i, j), MAC16_LANES, MAC16_COLUMNS)
    return select


# ----------------------------------------------- 32-bit and float: lmac8 and fpmac (8 x 1)


def lane_x_index(select: XSelect, lane: int) -> int:
    """lmac8's and fpmac's x element at `lane`: xstart plus the lane's offset."""
    return select.start + nibble(select.offsets, lane)


def lane_z_index(select: ZSelect, lane: int) -> int:
    return select.start + nibble(select.offsets, lane)


def encode_lane_x(start: int, a: int) -> XSelect:
    """lmac8's (and fpmac's) x parameters for elements `start + a*lane`."""
    if start < 0 or a < 0:
        raise ShuffleConstraintError("negative start or stride")
    select = XSelect(start, _pack([a * lane for lane in range(LMAC8_LANES)]), 0)
    _verify(start, a, 0, lambda i, _: lane_x_index(select, i), LMAC8_LANES, 1)
    return select


def encode_lane_z(start: int, a: int, elements: int) -> ZSelect:
    """The z parameters for elements `start + a*lane` of a z buffer of `elements`."""
    if not 0 <= start < elements:
        raise ShuffleConstraintError(f"zstart {start} is outside the {elements}-element buffer")
    select = ZSelect(start, _pack([a * lane for lane in range(LMAC8_LANES)]))
    _verify(start, a, 0, lambda i, _: lane_z_index(select, i), LMAC8_LANES, 1)
    return select


def _verify(start: int, a: int, b: int, index, lanes: int, columns: int) -> None:
    """The parameters select what was asked for, on every lane and column (an encoder bug
    must never become a wrong kernel)."""
    for lane in range(lanes):
        for column in range(columns):
            if index(lane, column) != start + a * lane + b * column:
                raise ShuffleConstraintError(
                    f"no selection of start {start}, lane stride {a}, tap distance {b}"
                )

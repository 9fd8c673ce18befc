"""Alignment facts: the largest power of two that provably divides an access's address.

SIMD binding chooses aligned or unaligned vector loads, and the C66x back end `_amem8` or
`_mem8`, from this. The address is `base + offset` (`ir_passes.affine`); its alignment is the
minimum of the base's alignment and the alignment of every term of the offset, where a term
`c · v1 · v2 ...` is divisible by `c` times whatever is known to divide the values `v` (a row
length declared a multiple of 8, an induction variable starting at 0 and stepping by 4). The
facts about bases and values come from the caller (declarations, loop analysis); with none, the
answer is what the constant coefficients alone prove.
"""

from __future__ import annotations

from collections.abc import Mapping

from llvmlite import ir

from .affine import Address

#: no address is assumed more aligned than this (a cache line / AVX-512 vector)
MAX_ALIGNMENT = 64


def power_of_two_dividing(value: int) -> int:
    """The largest power of two dividing `value` (MAX_ALIGNMENT for 0)."""
    if value == 0:
        return MAX_ALIGNMENT
    return min(abs(value) & -abs(value), MAX_ALIGNMENT)


def address_alignment(
    address: Address,
    base_alignment: Mapping[ir.Value, int] | None = None,
    divisors: Mapping[ir.Value, int] | None = None,
    default_base_alignment: int = 1,
) -> int:
    """The alignment in bytes that `address` has for every value of its symbols.

    `base_alignment` maps base pointers to their known alignment (otherwise
    `default_base_alignment`); `divisors` maps SSA values to a power of two known to divide
    them (otherwise 1).
    """
    base_alignment = base_alignment or {}
    divisors = divisors or {}
    alignment = base_alignment.get(address.base, default_base_alignment)
    for monomial, coefficient in address.offset.terms:
        term = power_of_two_dividing(coefficient)
        for value in monomial:
            term *= divisors.get(value, 1)
        alignment = min(alignment, min(term, MAX_ALIGNMENT))
    return alignment

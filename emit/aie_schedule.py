"""The auto-tuner (Vyasa's step 6, F12): which loop the lanes run along, the order of the
other loops, the output vectors per iteration (unroll-and-jam of the vector loop and of the
loop around it) and the data layouts that makes necessary, ranked by the MACs/cycle model.

The search is exhaustive over the output loops' orders (at most 4! for a CONV3D layer): the
last loop of an order is vectorized, it and the one before it unrolled and jammed (up to 8
output vectors an iteration), the outer ones decide how often the weight table is filled.
An array the vector loop walks along another dimension than C's innermost is packed with
that dimension innermost (`aie_layout`). Pruned: the schedules the kernel writer refuses
(operands the vector loop does not move as lanes, a shuffle the network cannot encode,
factors that do not divide their loop). The reduction loops are always unrolled before
(`unroll-reductions`). Ties go to fewer packed arrays, then the source's order, then fewer
output vectors, so a nest the source already orders well keeps its order.
"""

from __future__ import annotations

from itertools import permutations

from .aie_convolution import Convolution, NotAConvolution, reordered, vectorized
from .aie_kernel import DATAPATHS, Plan, unroll_counts
from .aie_layout import innermost_along_vector
from .aie_model import best


def kernel_plan(conv: Convolution) -> Plan:
    """The model's best kernel for `conv` over every loop order, the vector loop last, with
    the layouts it needs; NotAConvolution with the source order's reason (it is tried first)
    where none works."""
    plans, reason = [], None
    path = DATAPATHS[conv.element]
    for order in permutations(range(len(conv.loops))):  # the identity first
        try:
            scheduled = vectorized(innermost_along_vector(reordered(conv, order)))
        except NotAConvolution as exc:
            reason = reason or exc
            continue
        for rows, vectors in unroll_counts(scheduled):
            for by_output in (False, True) if rows * vectors > 1 else (False,):
                try:
                    plans.append(Plan(scheduled, path, rows, vectors, by_output))
                except NotAConvolution as exc:
                    reason = reason or exc
    if not plans:
        raise reason
    return best(plans)

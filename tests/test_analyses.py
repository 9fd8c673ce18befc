"""Shared IR analyses: CFG, dominators and post-dominators (Cooper-Harvey-Kennedy)."""

from __future__ import annotations

from llvmlite import ir
from pycc_stencil.ir_passes.core.cfg import CFG
from pycc_stencil.ir_passes.core.dominance import VIRTUAL_EXIT, dominator_tree, post_dominator_tree


def diamond_in_loop():
    """entry -> header -> (then | else) -> join -> header | exit; plus an unreachable block."""
    module = ir.Module()
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(1)]), "f")
    names = ["entry", "header", "then", "else", "join", "exit", "dead"]
    blocks = {n: f.append_basic_block(n) for n in names}
    b = ir.IRBuilder()
    edges = {
        "entry": ["header"],
        "header": ["then", "else"],
        "then": ["join"],
        "else": ["join"],
        "join": ["header", "exit"],
        "dead": ["exit"],
    }
    for name, targets in edges.items():
        b.position_at_end(blocks[name])
        if len(targets) == 1:
            b.branch(blocks[targets[0]])
        else:
            b.cbranch(f.args[0], blocks[targets[0]], blocks[targets[1]])
    b.position_at_end(blocks["exit"])
    b.ret_void()
    return CFG(f), blocks


def test_cfg_edges_and_orders():
    cfg, blocks = diamond_in_loop()
    assert cfg.succs[blocks["header"]] == [blocks["then"], blocks["else"]]
    assert set(cfg.preds[blocks["header"]]) == {blocks["entry"], blocks["join"]}
    assert cfg.exits == [blocks["exit"]]
    order = [b.name for b in cfg.reverse_postorder()]
    assert order[0] == "entry" and "dead" not in order
    assert order.index("join") > order.index("then") and order.index("join") > order.index("else")
    assert cfg.reachable([blocks["then"]], barrier=blocks["join"]) == {blocks["then"]}


def test_dominators():
    cfg, blocks = diamond_in_loop()
    dom = dominator_tree(cfg)
    assert dom.idom(blocks["join"]) is blocks["header"]
    assert dom.idom(blocks["then"]) is blocks["header"]
    assert dom.idom(blocks["entry"]) is None
    assert dom.dominates(blocks["header"], blocks["exit"])
    assert not dom.dominates(blocks["then"], blocks["join"])
    assert blocks["dead"] not in dom


def test_post_dominators():
    cfg, blocks = diamond_in_loop()
    pdom = post_dominator_tree(cfg)
    assert pdom.idom(blocks["header"]) is blocks["join"]
    assert pdom.idom(blocks["exit"]) is VIRTUAL_EXIT
    assert pdom.dominates(blocks["exit"], blocks["entry"])
    assert not pdom.dominates(blocks["then"], blocks["header"])

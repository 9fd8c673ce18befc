"""The Target registry: every target fact a pass asks for comes from the module's Target."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest
from llvmlite import ir
from pycc_stencil.cli import main
from pycc_stencil.emit.targets import host_target, target_named, target_names
from pycc_stencil.frontend import lower_file
from pycc_stencil.ir_passes.core.copying import fresh_copy
from pycc_stencil.ir_passes.core.facts import describe, fact
from pycc_stencil.ir_passes.core.target import NoCostModel, Target, set_target, target_of
from pycc_stencil.ir_passes.pipeline import parse_pipeline, run_passes
from pycc_stencil.ir_passes.registry import NoTarget, PassContext, PassSpec


def test_the_registry_finds_every_target_file():
    assert target_names() == ["host", "aie", "c", "c66x", "hexagon", "hls"]
    for name in target_names():
        target = target_named(name)
        assert isinstance(target, Target) and target.name == name
    with pytest.raises(ValueError, match="unknown target .arm.*host, aie, c, c66x, hexagon, hls"):
        target_named("arm")


def test_the_host_target_imports_no_other_back_end():
    """A compile's host target comes from its own module: the HLS back end and numpy cost a
    cold compile 0.2 s of imports."""
    probe = (
        "import sys; from pycc_stencil.emit.targets import host_target, target_named; "
        "host_target(); target_named('c66x'); "
        "print(sorted(m for m in sys.modules if m.endswith('.hls') or m == 'numpy'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "[]\n", done.stderr


def test_vector_registers_and_neighbour_costs_per_target():
    sse, avx = host_target(features="+sse4.2,-avx"), host_target(features="+avx,+avx2")
    assert (sse.vector_bytes, avx.vector_bytes) == (16, 32)
    assert sse.neighbour_costs(16) == (0.5, 1.0) and avx.neighbour_costs(32) == (0.5, 2.0)
    hexagon, c66x = target_named("hexagon"), target_named("c66x")
    assert hexagon.data_layout.startswith("e-m:e-p:32:32") and avx.data_layout.startswith("e-m:e")
    assert c66x.data_layout == ""  # LLVM has no C6000 back end
    assert (hexagon.vector_bytes, c66x.vector_bytes) == (128, 8)
    assert hexagon.neighbour_costs(128) == (1.0, 0.5) and c66x.neighbour_costs(8) == (0.5, 0.25)
    # the strategy search's widths: the full register, and on Hexagon the smaller powers of 2
    assert avx.vector_widths(4) == [1, 8] and c66x.vector_widths(8) == [1]
    assert hexagon.vector_widths(4) == [1, 32, 16, 8, 4, 2]


FIXED_JACOBI = """
#define N 300
void jacobi(double a[N][N], double b[N][N]) {
  for (int t = 0; t < 10; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        b[i][j] = 0.25 * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++) a[i][j] = b[i][j];
  }
}
"""


def test_the_large_passes_tile_only_beyond_half_the_last_level_cache(tmp_path, monkeypatch):
    """Two 300x300 grids of doubles (1.4 MB) exceed a 512 KiB L2 but not half a 32 MiB L3,
    where time tiles lost to the untiled sweeps (Target.locality_threshold): refused there,
    tiled below a 1 MiB L3."""
    path = tmp_path / "k.c"
    path.write_text(FIXED_JACOBI)
    monkeypatch.setenv("PYCC_CACHE_L2", "512K")
    for l3, tiled in (("32M", False), ("1M", True)):
        monkeypatch.setenv("PYCC_CACHE_L3", l3)
        target = host_target()
        assert target.locality_threshold() == max(512 << 10, target.cache_bytes(3) // 2)
        module = lower_file(str(path), []).module
        remarks = run_passes(module, parse_pipeline("time-tile-large"), target=target).remarks
        done = [r for r in remarks if r.kind == "passed"]
        refused = [r for r in remarks if "less than half the last-level cache" in r.message]
        assert (bool(done), bool(refused)) == (tiled, not tiled), [str(r) for r in remarks]


def test_cache_sizes_are_overridable(monkeypatch):
    host = host_target()
    measured = host.cache_bytes(2)
    assert measured >= 64 << 10
    monkeypatch.setenv("PYCC_CACHE_L2", "16K")
    assert host.cache_bytes(2) == 16 << 10
    monkeypatch.setenv("PYCC_CACHE_L2", "3M")
    assert host.cache_bytes(2) == 3 << 20


def test_cost_models_belong_to_targets():
    class Bare(Target):
        name = "bare"
        vector_bytes = 4

        def neighbour_costs(self, vector_size):
            return 1.0, 1.0

    with pytest.raises(NoCostModel):
        Bare().loop_costs(ir.Module(), 1)
    assert Bare().original_loop_cycles(ir.Module(), {}) == {}


def test_the_module_carries_its_target_and_copies_keep_it():
    module = ir.Module()
    assert target_of(module) is None
    hexagon = target_named("hexagon")
    set_target(module, hexagon)
    assert target_of(module) is hexagon and module.triple == hexagon.triple
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "f")
    fact(function, "unrolled loops", dict)["x"] = 1
    copied = fresh_copy(module)
    assert target_of(copied).name == "hexagon"
    assert describe(copied) == [
        f"; pycc.facts: target = {hexagon.describe()}",
        "; pycc.facts @f: unrolled loops = 1 entries",
    ]
    assert target_of(copy.deepcopy(module)).vector_bytes == 128


def test_passes_get_the_modules_target_and_a_missing_one_is_named():
    seen = []

    def probe(module, *, context: PassContext):
        seen.append(context.target)
        return module

    registry = {"probe": PassSpec(probe)}
    module = ir.Module()
    with pytest.raises(NoTarget, match="pass probe needs the module's target"):
        run_passes(module, [("probe", ())], registry)
    c66x = target_named("c66x")
    run_passes(module, [("probe", ())], registry, target=c66x)
    set_target(module, c66x)
    run_passes(module, [("probe", ())], registry)
    assert seen == [c66x, c66x]


def test_emit_prints_the_target_with_the_ir(c_file, capsys):
    path = c_file("void k(int n, float *a) { for (int i = 0; i < n; i++) a[i] = 2 * a[i]; }")
    assert main(["emit", str(path), "--emit", "llvm", "--target", "hexagon"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("; pycc.facts: target = hexagon (hexagon-unknown-elf, 128-byte vectors)")
    assert 'target triple = "hexagon-unknown-elf"' in out
    assert main(["emit", str(path), "--emit", "llvm", "--target", "vax"]) == 1
    assert "unknown target 'vax'" in capsys.readouterr().err

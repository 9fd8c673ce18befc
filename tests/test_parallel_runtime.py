"""The parallel-loop runtimes (polyhedral/parallel.py) on hand-built modules.

The JIT's pool, JIT-compiled in this process: results identical to serial for any iteration
and thread count, chunks that partition the range, really more than one thread, the debug
orders (reverse, seeded shuffle) that tests of tiled code rely on. The OpenMP runtime of
compiler mode, compiled to objects and linked by `cc`: one chunk per thread of the team
(`OMP_NUM_THREADS`), a team of one inside the user's own parallel region, objects that link
and run serially without an OpenMP runtime, one copy of the glue per program. The serial
runtime: one direct call, no runtime at all."""

from __future__ import annotations

import ctypes
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import I64, PTR, Kernel, counted_loop, element, lowered_module
from llvmlite import ir
from pycc_stencil.dropin_takeover import Takeover, kernel_module
from pycc_stencil.emit.cc_target import target_from_flags
from pycc_stencil.emit.cc_threads import LINK_OPENMP
from pycc_stencil.emit.host_jit import compile_module
from pycc_stencil.emit.host_object import compile_to_object
from pycc_stencil.frontend import c_types as ct
from pycc_stencil.ir_passes.core.machine_model import OPENMP, POOL, SERIAL
from pycc_stencil.polyhedral.parallel import (
    BODY_TYPE,
    emit_parallel_call,
    pack_context,
    unpack_context,
)
from pycc_stencil.runtime.isolate import run_isolated
from test_large_tiles import preload_library

LO = 3  # ranges start away from 0, so a runtime that ignores `lo` is caught
#: how pycc-stencil links a program that asks for threads (`emit.cc_threads`): the objects'
#: references to the OpenMP runtime are weak, which --as-needed alone does not keep
OPENMP_LINK = ("-fopenmp", *LINK_OPENMP)
GUARD = -1


I32 = ir.IntType(32)
SEVEN = ir.Constant(I32, 7)  # packed next to `out`: a context mixing types


def _fill_body(module: ir.Module, prefix: str) -> ir.Function:
    """out[k] = k*k + seven for k in [lo, hi); ctx = {out, i32 seven}."""
    body = ir.Function(module, BODY_TYPE, f"{prefix}fill_body")
    body.linkage = "internal"
    ctx, lo, hi = body.args
    b = ir.IRBuilder(body.append_basic_block("entry"))
    out, seven = unpack_context(b, ctx, [PTR, I32])

    def store(b: ir.IRBuilder, k: ir.Value) -> None:
        b.store(b.add(b.mul(k, k), b.sext(seven, I64)), element(b, out, k, I64))

    counted_loop(b, lo, hi, store)
    b.ret_void()
    return body


def _record_body(module: ir.Module, prefix: str) -> ir.Function:
    """Appends (lo, hi) to calls and pthread_self() to threads at an atomic position;
    ctx = {calls, counter, threads}."""
    body = ir.Function(module, BODY_TYPE, f"{prefix}record_body")
    body.linkage = "internal"
    ctx, lo, hi = body.args
    b = ir.IRBuilder(body.append_basic_block("entry"))
    calls, counter, threads = unpack_context(b, ctx, [PTR, PTR, PTR])
    position = b.atomic_rmw("add", counter, ir.Constant(I64, 1), "seq_cst")
    pair = b.mul(position, ir.Constant(I64, 2))
    b.store(lo, element(b, calls, pair, I64))
    b.store(hi, element(b, calls, b.add(pair, ir.Constant(I64, 1)), I64))
    self_type = ir.FunctionType(I64, [])
    pthread_self = module.globals.get("pthread_self") or ir.Function(
        module, self_type, "pthread_self"
    )
    b.store(b.call(pthread_self, []), element(b, threads, position, I64))
    b.ret_void()
    return body


def _driver(
    module: ir.Module,
    name: str,
    body: ir.Function,
    pointers: int,
    extra: tuple = (),
    runtime: str = POOL,
) -> None:
    """`void name(ptr p1, ..., ptr pN, i64 lo, i64 hi)`: runs body over [lo, hi) in parallel
    on `runtime` with the context {p1, ..., pN, *extra}."""
    signature = ir.FunctionType(ir.VoidType(), [PTR] * pointers + [I64, I64])
    driver = ir.Function(module, signature, name)
    *values, lo, hi = driver.args
    b = ir.IRBuilder(driver.append_basic_block("entry"))
    emit_parallel_call(b, body, pack_context(b, [*values, *extra]), lo, hi, runtime)
    b.ret_void()


def _module(prefix: str = "", runtime: str = POOL) -> ir.Module:
    """`{prefix}fill(out, lo, hi)` and `{prefix}record(calls, counter, threads, lo, hi)`."""
    module = ir.Module(name=f"{prefix}parallel")
    _driver(module, f"{prefix}fill", _fill_body(module, prefix), 1, (SEVEN,), runtime)
    _driver(module, f"{prefix}record", _record_body(module, prefix), 3, runtime=runtime)
    return module


@pytest.fixture(scope="module")
def jit():
    return compile_module(_module(), export=["fill", "record"])


@pytest.fixture
def env(monkeypatch):
    """A clean environment for the runtime's variables; tests set what they need."""
    monkeypatch.delenv("PYCC_NUM_THREADS", raising=False)
    monkeypatch.delenv("PYCC_PARALLEL_ORDER", raising=False)
    return monkeypatch


def _fill(jit, n: int) -> np.ndarray:
    out = np.full(LO + n + 2, GUARD, dtype=np.int64)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
    signature(jit.function_address("fill"))(out.ctypes.data, LO, LO + n)
    return out


def _expected(n: int) -> np.ndarray:
    expected = np.full(LO + n + 2, GUARD, dtype=np.int64)
    k = np.arange(LO, LO + n, dtype=np.int64)
    expected[LO : LO + n] = k * k + 7
    return expected


def _record(jit, n: int) -> tuple[list[tuple[int, int]], list[int]]:
    """The body calls in the order they took their slot, and the thread of each."""
    calls = np.full(2 * max(n, 1), GUARD, dtype=np.int64)
    threads = np.zeros(max(n, 1), dtype=np.uint64)
    counter = np.zeros(1, dtype=np.int64)
    signature = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 3, ctypes.c_int64, ctypes.c_int64)
    address = jit.function_address("record")
    signature(address)(calls.ctypes.data, counter.ctypes.data, threads.ctypes.data, LO, LO + n)
    made = int(counter[0])
    pairs = [(int(calls[2 * i]), int(calls[2 * i + 1])) for i in range(made)]
    return pairs, [int(t) for t in threads[:made]]


@pytest.mark.parametrize("threads", ["1", "2", "3", "5"])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 1000])
def test_results_identical_to_serial(jit, env, n, threads):
    env.setenv("PYCC_NUM_THREADS", threads)
    np.testing.assert_array_equal(_fill(jit, n), _expected(n))


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 1000])
def test_one_contiguous_chunk_per_thread(jit, env, n, threads):
    env.setenv("PYCC_NUM_THREADS", str(threads))
    calls, _ = _record(jit, n)
    chunks = sorted(calls)
    assert len(chunks) == min(threads, n)
    if n == 0:
        return
    bounds = [LO] + [hi for _, hi in chunks]
    assert chunks == list(zip(bounds, bounds[1:])) and bounds[-1] == LO + n
    sizes = [hi - lo for lo, hi in chunks]
    assert max(sizes) - min(sizes) <= 1


def test_two_threads_really_run(jit, env):
    env.setenv("PYCC_NUM_THREADS", "2")
    calls, threads = _record(jit, 10)
    assert len(set(threads)) == 2
    first = threads[calls.index((LO, LO + 5))]
    assert first == threading.get_ident()  # chunk 0 runs on the calling thread


@pytest.mark.parametrize("value", ["0", "-4", "many"])
def test_unusable_thread_count_means_online_processors(jit, env, value):
    env.setenv("PYCC_NUM_THREADS", value)
    calls, _ = _record(jit, 50)
    assert len(calls) == min(os.sysconf("SC_NPROCESSORS_ONLN"), 50)


@pytest.mark.parametrize("n", [1, 2, 9])
def test_reverse_order(jit, env, n):
    env.setenv("PYCC_NUM_THREADS", "4")  # the order variable wins: serial
    env.setenv("PYCC_PARALLEL_ORDER", "reverse")
    calls, threads = _record(jit, n)
    assert calls == [(k, k + 1) for k in reversed(range(LO, LO + n))]
    assert set(threads) == {threading.get_ident()}
    np.testing.assert_array_equal(_fill(jit, n), _expected(n))


def _shuffled(jit, env, n: int, order: str) -> list[int]:
    env.setenv("PYCC_PARALLEL_ORDER", order)
    calls, _ = _record(jit, n)
    assert all(hi == lo + 1 for lo, hi in calls)
    return [lo for lo, _ in calls]


@pytest.mark.parametrize("n", [1, 2, 8, 13, 64, 100])
def test_shuffle_is_a_permutation(jit, env, n):
    visited = _shuffled(jit, env, n, "shuffle:7")
    assert sorted(visited) == list(range(LO, LO + n))
    if n >= 8:
        assert visited != list(range(LO, LO + n))
        assert visited != list(reversed(range(LO, LO + n)))
    np.testing.assert_array_equal(_fill(jit, n), _expected(n))


def test_shuffle_is_deterministic_per_seed(jit, env):
    n = 40
    assert _shuffled(jit, env, n, "shuffle:5") == _shuffled(jit, env, n, "shuffle:5")
    assert _shuffled(jit, env, n, "shuffle:5") != _shuffled(jit, env, n, "shuffle:6")
    assert _shuffled(jit, env, n, "shuffle") == _shuffled(jit, env, n, "shuffle:0")


def test_runs_in_the_harness_child_process(jit, env):
    """check and tune run kernels in a forked child: threads start there as well, although
    the child inherits the parent's pool state but not its workers."""
    env.setenv("PYCC_NUM_THREADS", "2")
    assert len(set(_record(jit, 10)[1])) == 2  # the parent's pool has a worker
    calls, threads = run_isolated(lambda: _record(jit, 10), timeout=60)
    assert sorted(calls) == [(LO, LO + 5), (LO + 5, LO + 10)] and len(set(threads)) == 2


def test_context_packed_in_a_loop_lives_in_the_entry_block(env):
    """`repeat(out, lo, hi, times)` packs and runs the fill once per trip of a loop; the
    context's alloca must not grow the stack per trip."""
    module = ir.Module(name="repeat")
    body = _fill_body(module, "")
    repeat = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64]), "repeat")
    out, lo, hi, times = repeat.args
    b = ir.IRBuilder(repeat.append_basic_block("entry"))

    def trip(b: ir.IRBuilder, _: ir.Value) -> None:
        emit_parallel_call(b, body, pack_context(b, [out, SEVEN]), lo, hi, POOL)

    counted_loop(b, ir.Constant(I64, 0), times, trip)
    b.ret_void()
    allocas = [i for block in repeat.blocks for i in block.instructions if i.opname == "alloca"]
    assert len(allocas) == 1 and all(i.parent is repeat.entry_basic_block for i in allocas)
    jit = compile_module(module, export=["repeat"])
    buffer = np.full(12, GUARD, dtype=np.int64)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *[ctypes.c_int64] * 3)
    env.setenv("PYCC_NUM_THREADS", "2")
    signature(jit.function_address("repeat"))(buffer.ctypes.data, 0, 9, 3)
    expected = np.full(12, GUARD, dtype=np.int64)
    expected[:9] = np.arange(9) ** 2 + 7
    np.testing.assert_array_equal(buffer, expected)


# ------------------------------------------------------------------ the pool of workers
def _tid_module() -> ir.Module:
    """`many(tids, counter, lo, hi, times)`: `times` parallel calls over [lo, hi) of a body
    that appends its thread's kernel id (gettid: unlike pthread_self values, ids of exited
    threads are not handed out again at once) at an atomic position."""
    module = ir.Module(name="tids")
    body = ir.Function(module, BODY_TYPE, "tid_body")
    body.linkage = "internal"
    ctx, _, _ = body.args
    b = ir.IRBuilder(body.append_basic_block("entry"))
    tids, counter = unpack_context(b, ctx, [PTR, PTR])
    position = b.atomic_rmw("add", counter, ir.Constant(I64, 1), "seq_cst")
    gettid = ir.Function(module, ir.FunctionType(I32, []), "gettid")
    b.store(b.call(gettid, []), element(b, tids, position, I32))
    b.ret_void()
    signature = ir.FunctionType(ir.VoidType(), [PTR, PTR, I64, I64, I64])
    many = ir.Function(module, signature, "many")
    tids, counter, lo, hi, times = many.args
    b = ir.IRBuilder(many.append_basic_block("entry"))

    def call(b: ir.IRBuilder, _: ir.Value) -> None:
        emit_parallel_call(b, body, pack_context(b, [tids, counter]), lo, hi, POOL)

    counted_loop(b, ir.Constant(I64, 0), times, call)
    b.ret_void()
    return module


def _tids(jit, times: int, n: int) -> tuple[int, set[int]]:
    """The threads of `times` calls over n iterations; each call must make min(threads, n)
    body calls, which the caller checks through the count."""
    tids = np.zeros(64 * times, dtype=np.int32)
    counter = np.zeros(1, dtype=np.int64)
    signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, *[ctypes.c_int64] * 3)
    signature(jit.function_address("many"))(tids.ctypes.data, counter.ctypes.data, 0, n, times)
    return int(counter[0]), set(tids[: int(counter[0])].tolist())


def test_workers_are_reused_across_calls(env):
    """2000 calls (a tiled loop's wavefronts) run on the same two threads: no thread is
    started per call; the pool grows when more threads are asked for, and fewer run when
    fewer are asked."""
    jit = compile_module(_tid_module(), export=["many"])
    env.setenv("PYCC_NUM_THREADS", "2")
    calls, two = _tids(jit, 2000, 7)
    assert calls == 4000 and len(two) == 2 and os.getpid() in two  # (the caller's tid is the pid)
    env.setenv("PYCC_NUM_THREADS", "3")
    calls, three = _tids(jit, 500, 7)
    assert calls == 1500 and len(three) == 3 and two < three
    env.setenv("PYCC_NUM_THREADS", "2")
    calls, again = _tids(jit, 500, 7)
    assert calls == 1000 and len(again) == 2 and again < three


def _nested_module() -> ir.Module:
    """`grid(out, rows, cols)`: a parallel loop over rows whose body runs a parallel loop over
    the columns: out[i*cols + j] = i*1000 + j."""
    module = ir.Module(name="nested")
    inner = ir.Function(module, BODY_TYPE, "column_body")
    inner.linkage = "internal"
    ctx, lo, hi = inner.args
    b = ir.IRBuilder(inner.append_basic_block("entry"))
    out, i, cols = unpack_context(b, ctx, [PTR, I64, I64])

    def store(b: ir.IRBuilder, j: ir.Value) -> None:
        value = b.add(b.mul(i, ir.Constant(I64, 1000)), j)
        b.store(value, element(b, out, b.add(b.mul(i, cols), j), I64))

    counted_loop(b, lo, hi, store)
    b.ret_void()
    outer = ir.Function(module, BODY_TYPE, "row_body")
    outer.linkage = "internal"
    ctx, lo, hi = outer.args
    b = ir.IRBuilder(outer.append_basic_block("entry"))
    out, cols = unpack_context(b, ctx, [PTR, I64])

    def row(b: ir.IRBuilder, i: ir.Value) -> None:
        context = pack_context(b, [out, i, cols])
        emit_parallel_call(b, inner, context, ir.Constant(I64, 0), cols, POOL)

    counted_loop(b, lo, hi, row)
    b.ret_void()
    signature = ir.FunctionType(ir.VoidType(), [PTR, I64, I64])
    grid = ir.Function(module, signature, "grid")
    out, rows, cols = grid.args
    b = ir.IRBuilder(grid.append_basic_block("entry"))
    emit_parallel_call(b, outer, pack_context(b, [out, cols]), ir.Constant(I64, 0), rows, POOL)
    b.ret_void()
    return module


@pytest.mark.parametrize("threads", ["2", "3"])
def test_nested_calls_complete(env, threads):
    """A body that calls the runtime (the pool is busy) runs its loop itself, without
    deadlock; in a child process, so a hang fails the test instead of the suite."""
    jit = compile_module(_nested_module(), export=["grid"])
    env.setenv("PYCC_NUM_THREADS", threads)
    rows, cols = 5, 13

    def grid() -> np.ndarray:
        out = np.full(rows * cols + 1, GUARD, dtype=np.int64)
        signature = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
        for _ in range(50):
            signature(jit.function_address("grid"))(out.ctypes.data, rows, cols)
        return out

    expected = np.full(rows * cols + 1, GUARD, dtype=np.int64)
    expected[:-1] = (np.arange(rows)[:, None] * 1000 + np.arange(cols)).ravel()
    np.testing.assert_array_equal(run_isolated(grid, timeout=60), expected)


def test_concurrent_callers(jit, env):
    """Two Python threads (ctypes releases the GIL) call the runtime at once: one gets the
    pool, the other runs its loop itself; both results are right."""
    env.setenv("PYCC_NUM_THREADS", "2")
    results: dict[int, list[bool]] = {0: [], 1: []}

    def caller(index: int) -> None:
        for n in range(1, 300):
            results[index].append(np.array_equal(_fill(jit, n), _expected(n)))

    callers = [threading.Thread(target=caller, args=(k,)) for k in (0, 1)]
    for thread in callers:
        thread.start()
    for thread in callers:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in callers)
    assert results[0] == results[1] == [True] * 299


# ------------------------------------------------------------------ objects (compiler mode)
_MAIN = r"""
#include <stdio.h>
void %(p)sfill(long *out, long lo, long hi);
void %(p)srecord(long *calls, long *counter, unsigned long *threads, long lo, long hi);
int %(p)smain(void) {
    enum { N = 1000 };
    static long out[N], calls[2 * N];
    static unsigned long threads[N];
    long counter = 0, wrong = 0;
    %(p)sfill(out, 0, N);
    for (long k = 0; k < N; k++)
        wrong += out[k] != k * k + 7;
    %(p)srecord(calls, &counter, threads, 0, 10);
    printf("%(p)swrong=%%ld chunks=%%ld\n", wrong, counter);
    return 0;
}
"""
#: the same, called from each thread of the user's own parallel region of two threads
_NESTED_MAIN = r"""
#include <stdio.h>
void fill(long *out, long lo, long hi);
void record(long *calls, long *counter, unsigned long *threads, long lo, long hi);
int main(void) {
    #pragma omp parallel num_threads(2)
    {
        long out[100], calls[20], counter = 0, wrong = 0;
        unsigned long threads[10];
        fill(out, 0, 100);
        for (long k = 0; k < 100; k++)
            wrong += out[k] != k * k + 7;
        record(calls, &counter, threads, 0, 10);
        #pragma omp critical
        printf("wrong=%ld chunks=%ld\n", wrong, counter);
    }
    return 0;
}
"""


def _object(tmp_path: Path, prefix: str, runtime: str) -> Path:
    target = target_from_flags("cc", ["-O2"])
    path = tmp_path / f"{prefix or 'kernels'}.o"
    path.write_bytes(compile_to_object(str(_module(prefix, runtime)), target))
    return path


def _run(program: Path, threads: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYCC_PARALLEL_ORDER"}
    env.update(PYCC_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    return subprocess.run([program], env=env, capture_output=True, text=True, check=True).stdout


def _link(tmp_path: Path, main: str, objects: list[Path], flags: tuple[str, ...] = ()) -> Path:
    """cc with `flags` (-fopenmp: the program links the OpenMP runtime) and no library."""
    (tmp_path / "main.c").write_text(main)
    program = tmp_path / "program"
    subprocess.run(["cc", *flags, tmp_path / "main.c", *objects, "-o", program], check=True)
    return program


def _symbols(path: Path) -> list[str]:
    return subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout


def test_openmp_loops_run_on_the_team(tmp_path):
    """One chunk per thread of the team OMP_NUM_THREADS asks for, on distinct threads."""
    program = _link(tmp_path, _MAIN % {"p": ""}, [_object(tmp_path, "", OPENMP)], OPENMP_LINK)
    assert _run(program, "3") == "wrong=0 chunks=3\n"
    assert _run(program, "1") == "wrong=0 chunks=1\n"
    assert "U GOMP_parallel" in _symbols(program) or "w GOMP_parallel" in _symbols(program)


def test_openmp_loops_inside_the_users_parallel_region_get_a_team_of_one(tmp_path):
    program = _link(tmp_path, _NESTED_MAIN, [_object(tmp_path, "", OPENMP)], OPENMP_LINK)
    assert _run(program, "2") == "wrong=0 chunks=1\n" * 2


_FORK_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void record(long *calls, long *counter, unsigned long *threads, long lo, long hi);
static long run(void) {
    long calls[20], counter = 0;
    unsigned long threads[10];
    record(calls, &counter, threads, 0, 10);
    return counter;
}
int main(void) {
    long parent = run();
    pid_t child = fork();
    if (child == 0) { printf("child chunks=%ld\n", run()); fflush(stdout); _exit(0); }
    int status;
    waitpid(child, &status, 0);
    printf("parent chunks=%ld, again %ld\n", parent, run());
    return status;
}
"""


def test_openmp_loops_in_a_forked_child_run_serially(tmp_path):
    """libgomp's team does not survive a fork (it hangs in the child: GCC PR 60035): a child
    of a process whose loops used it runs them on its own thread."""
    program = _link(tmp_path, _FORK_MAIN, [_object(tmp_path, "", OPENMP)], OPENMP_LINK)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    run = subprocess.run([program], env=env, capture_output=True, text=True, timeout=60)
    assert run.stdout == "child chunks=1\nparent chunks=2, again 2\n" and run.returncode == 0


#: LD_PRELOAD'ed: a program that cannot load libraries (as where there is no libgomp)
NO_DLOPEN_C = "void *dlopen(const char *file, int mode) { return 0; }\n"


@pytest.mark.parametrize(
    "flags", [(), ("-fopenmp", "-Wl,--as-needed")], ids=["no -fopenmp", "--as-needed"]
)
def test_openmp_object_links_wherever_and_loads_a_runtime_the_link_dropped(tmp_path, flags):
    """Weak references: the object links wherever cc's object links. A link without the
    runtime (or one `--as-needed` dropped: weak references do not keep a library) has the
    first parallel call load libgomp; a program that cannot load it runs the loops serially."""
    obj = _object(tmp_path, "", OPENMP)
    undefined = [line.split()[-1] for line in _symbols(obj).splitlines() if " U " in line]
    assert "w GOMP_parallel" in _symbols(obj) and "w dlsym" in _symbols(obj)
    assert set(undefined) == {"getpid", "pthread_self"}  # libc's (pthread_self: the test body)
    program = _link(tmp_path, _MAIN % {"p": ""}, [obj], flags)
    assert "libgomp" not in subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    assert _run(program, "3") == "wrong=0 chunks=3\n"
    shim = preload_library(tmp_path, NO_DLOPEN_C)
    env = dict(os.environ, LD_PRELOAD=shim, OMP_NUM_THREADS="3")
    run = subprocess.run([program], env=env, capture_output=True, text=True, check=True)
    assert run.stdout == "wrong=0 chunks=1\n"


def test_serial_runtime_calls_the_body_directly(tmp_path):
    module = _module("", SERIAL)
    assert not [f for f in module.functions if f.is_declaration and f.name != "pthread_self"]
    program = _link(tmp_path, _MAIN % {"p": ""}, [_object(tmp_path, "", SERIAL)], OPENMP_LINK)
    assert _run(program, "3") == "wrong=0 chunks=1\n"


def test_threads_that_cannot_start_leave_their_chunks_to_the_caller(tmp_path):
    """The pool, in an object so that it runs under resource limits: glibc gives a thread a
    stack of RLIMIT_STACK bytes, and a 4 GB stack limit under a 3 GB address-space limit makes
    every pthread_create fail."""
    program = _link(tmp_path, _MAIN % {"p": ""}, [_object(tmp_path, "", POOL)])
    env = {k: v for k, v in os.environ.items() if k != "PYCC_PARALLEL_ORDER"}
    env["PYCC_NUM_THREADS"] = "3"
    limited = f"ulimit -s 4000000 && ulimit -v 3000000 && exec {program}"
    run = subprocess.run(["sh", "-c", limited], env=env, capture_output=True, text=True, timeout=60)
    assert run.stdout == "wrong=0 chunks=3\n"


def test_objects_with_openmp_loops_link_together(tmp_path):
    objects = [_object(tmp_path, "a_", OPENMP), _object(tmp_path, "b_", OPENMP)]
    for path in objects:
        assert "W __pycc_omp_chunk" in _symbols(path)  # a weak (linkonce_odr) copy in each
    main = (
        (_MAIN % {"p": "a_"})
        + (_MAIN % {"p": "b_"}).replace("#include <stdio.h>", "")
        + "int main(void) { return a_main() + b_main(); }\n"
    )
    program = _link(tmp_path, main, objects, OPENMP_LINK)
    assert _run(program, "2") == "a_wrong=0 chunks=2\nb_wrong=0 chunks=2\n"
    names = [line.split()[-1] for line in _symbols(program).splitlines()]
    assert len([n for n in names if n.startswith("__pycc_omp_chunk")]) == 1


#: the OpenMP glue of an earlier pycc-stencil, as its object defines it (one-copy, weak
#: symbols): its `ready` says yes whenever the program links the runtime, and knows no table
EARLIER_GLUE_C = r"""
__attribute__((weak)) _Bool __pycc_omp_ready(void) { return 1; }
__attribute__((weak)) void __pycc_omp_chunk(void *job) { (void)job; }
__attribute__((weak)) long __pycc_omp_owner;
"""


def test_objects_of_an_earlier_version_keep_their_own_glue(tmp_path):
    """A build tree compiled before an upgrade links objects of both versions: the loops of
    this one must call this version's glue (the earlier `ready` never fills the table they
    call the runtime through), whichever copy the linker meets first."""
    (tmp_path / "earlier.c").write_text(EARLIER_GLUE_C)
    earlier = tmp_path / "earlier.o"
    subprocess.run(["cc", "-c", tmp_path / "earlier.c", "-o", earlier], check=True)
    program = _link(
        tmp_path, _MAIN % {"p": ""}, [earlier, _object(tmp_path, "", OPENMP)], OPENMP_LINK
    )
    assert _run(program, "3") == "wrong=0 chunks=3\n"


def test_compiler_mode_keeps_bodies_and_the_openmp_glue(tmp_path):
    """kernel_module keeps what the kernel reaches only through pointers (the body, the
    chunk function) and leaves the glue's one-copy linkage alone."""

    def build(b: ir.IRBuilder, args: list[ir.Argument]) -> None:
        out, n = args
        body = _fill_body(b.module, "")
        context = pack_context(b, [out, SEVEN])
        emit_parallel_call(b, body, context, ir.Constant(I64, 0), n, OPENMP)

    params = [("out", ct.PointerType(ct.LONG)), ("n", ct.LONG)]
    lowered = lowered_module(tmp_path / "fill.c", [Kernel("fill", params, build)])
    target = target_from_flags("cc", ["-O2"])
    takeover = Takeover(lowered.functions["fill"], "fill")
    text = kernel_module(lowered, [takeover], target, hidden=False, debug_info=False)
    path = tmp_path / "fill.o"
    path.write_bytes(compile_to_object(text, target))
    assert "W __pycc_omp_chunk" in _symbols(path)
    main = r"""
#include <stdio.h>
void fill(long *out, long n);
int main(void) {
    static long out[1001];
    long wrong = 0;
    fill(out, 1001);
    for (long k = 0; k < 1001; k++)
        wrong += out[k] != k * k + 7;
    printf("wrong=%ld\n", wrong);
    return 0;
}
"""
    assert _run(_link(tmp_path, main, [path], OPENMP_LINK), "2") == "wrong=0\n"

"""How a parallel loop of tiled code runs: serially, on the OpenMP runtime, or on a private pool.

The polyhedral code generator outlines the body of a parallel loop into a function
`void body(ptr ctx, i64 lo, i64 hi)` that runs iterations [lo, hi), packs the live-in values
into a context (`pack_context` / `unpack_context`) and hands the loop to `emit_parallel_call`
with one of three runtimes, chosen by whoever builds the module (the Target's
`parallel_runtime`):

- `SERIAL` (compiler mode unless the flags ask for threads, as gcc): one direct call
  `body(ctx, lo, hi)`. No runtime, no library, no thread; LLVM inlines the body (internal, one
  caller), so this is the tiled schedule with no parallel overhead at all.
- `OPENMP` (compiler mode under `-fopenmp`, `-ftree-parallelize-loops=N>1`, `-fpycc-parallel`):
  the OpenMP runtime the program links, through libgomp's documented ABI, as gcc's own
  auto-parallelization calls it: `GOMP_parallel(fn, data, num_threads, flags)` runs `fn(data)`
  on a team (the calling thread is thread 0) and returns after the team's barrier; `fn` is
  `__pycc_omp_chunk`, which runs chunk `omp_get_thread_num()` of `omp_get_num_threads()`
  contiguous chunks. The team has min(n, `omp_get_max_threads()`) threads, so
  `OMP_NUM_THREADS`, affinity and cgroup limits apply, a call inside the user's own parallel
  region gets a team of one (nested parallelism is off by default), and the runtime's threads
  belong to the runtime library, not to the object: a shared library carrying such loops can
  be unloaded (the runtime library is pinned, `_omp_ready`). The OpenMP symbols are weak
  references: an object links wherever cc's object links. A link that drops libgomp (`gcc
  -fopenmp` under `--as-needed` keeps a library only for a strong reference: a C++ `main`
  linked by g++, say) leaves `GOMP_parallel` null; the first parallel call then loads
  `libgomp.so.1` itself, and the loops run serially only when there is none. A forked child
  of a process whose loops used the runtime runs them serially too (libgomp does not survive
  a fork).
- `POOL` (the JIT of `check`, `tune` and the tests): a private thread pool emitted as LLVM IR
  (below) with the tests' debug orders. It stays in the JIT because check and tune run kernels
  in forked children of a process that ran parallel code before, where libgomp's team is gone
  (its loops would run serially there; the pool notices the fork and starts a fresh one), and
  because the debug orders prove the schedule's independence claims. It never goes into a
  compiler-mode object.

The pool splits [lo, hi) into one contiguous chunk per thread, runs chunk 0 on the calling
thread and the others on worker threads that live as long as the process: a tiled
loop calls the runtime once per wavefront of tiles, thousands of times per kernel, so starting
threads per call (about 100 us) would eat the parallel gain; handing out a job costs a few
microseconds. The pool is started by the first parallel call, grows when more threads are
asked for (workers beyond the current count skip the job), and a forked child starts its own.
Worker t waits for its ticket to move (checking a bounded number of times, then asleep on a
condition variable, so an idle program does not burn a core), runs chunk t
and counts itself done; the caller waits for the count the same way. If a thread cannot be
created its chunk runs on the calling thread, which is slower but still correct. Thread count:
`PYCC_NUM_THREADS` if it is set and >= 1, else the online processors
(`sysconf(_SC_NPROCESSORS_ONLN)`, read once), never more than the iteration count or
`MAX_THREADS`.

One call owns the pool at a time: a call that finds it busy (a body calling the runtime, or
another user thread's call) runs its whole range on its own thread. Worker threads never exit:
the JIT pins engines whose code hosts them.

`PYCC_PARALLEL_ORDER=reverse` or `shuffle[:SEED]` runs the pool's iterations serially, one per
call (`body(ctx, k, k + 1)`), in reverse order or in a seeded pseudo-random permutation: the
tests' proof that iterations the schedule calls independent really are (a hidden dependence
changes the result). Other values are ignored (the loop runs in parallel). Both variables are
read on every call, so a test can change them in-process (CPython's os.environ writes through
putenv).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from llvmlite import ir

from ..ir_passes.core.machine_model import OPENMP, PARALLEL_RUNTIMES, POOL, SERIAL
from ..ir_passes.core.rewrite import opaque

_VOID = ir.VoidType()
_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = ir.PointerType()

#: The outlined loop body: `void body(ptr ctx, i64 lo, i64 hi)` runs iterations [lo, hi).
BODY_TYPE = ir.FunctionType(_VOID, [_PTR, _I64, _I64])


class _BodyPointer(ir.PointerType):
    """The opaque `ptr` type of a body pointer, remembering the body's function type:
    llvmlite reads the callee's type from `.pointee` to build an indirect call."""

    pointee = BODY_TYPE


_BODY_PTR = _BodyPointer()

PARALLEL_FOR = "__pycc_parallel_for"
_THREAD_ENTRY = "__pycc_parallel_thread"
_SHUFFLED = "__pycc_parallel_shuffled"
#: `linkonce_odr` keeps one copy when several objects carrying the runtime are linked together;
#: `hidden` keeps it out of a shared library's interface (llvmlite prints the linkage verbatim
#: after `define`, so it carries the visibility too).
_LINKAGE = "linkonce_odr hidden"

#: Upper bound on threads: the pool has a ticket per thread.
MAX_THREADS = 1024
#: `_SC_NPROCESSORS_ONLN` in glibc's <bits/confname.h> (the enum is shared by all of glibc's
#: Linux ports, x86-64 and aarch64 alike; musl uses the same number).
_SC_NPROCESSORS_ONLN = 84

_POOL_NAME = "__pycc_parallel_pool"
_WORKER = "__pycc_parallel_worker"
#: glibc's pthread_mutex_t and pthread_cond_t are 40 and 48 bytes on x86-64 (48 and 48 on
#: aarch64): 64-byte slots hold either, and all-zero bytes are their static initializers.
_SYNC = ir.ArrayType(_I8, 64)
#: Checks of a wait condition (about a nanosecond each) before a thread sleeps on a condition
#: variable: enough to bridge the gap between the wavefronts of a tiled loop (tens of
#: microseconds), short enough not to burn a shared machine's core when the program idles.
#: No sched_yield in between: on a loaded machine it sends the thread behind every other
#: runnable one (milliseconds), while a futex wake-up is scheduled at once.
_SPINS = 50000
#: The pool, one per program: {busy (i32: a call owns the pool), pid (i32: the process that
#: started the workers), workers (threads started), pending (workers still running the job),
#: online (cached CPU count, 0 = unknown), the job: body, ctx, lo, q, r, the mutex, the
#: condition variables `work` (tickets moved) and `done` (pending reached 0), and a ticket per
#: worker (bumped by the caller to hand worker t chunk t of the job)}.
_POOL = ir.LiteralStructType(
    [_I32, _I32, _I64, _I64, _I64, _BODY_PTR, _PTR, _I64, _I64, _I64, _SYNC, _SYNC, _SYNC]
    + [ir.ArrayType(_I64, MAX_THREADS)]
)
(_POOL_BUSY, _POOL_PID, _POOL_WORKERS, _POOL_PENDING, _POOL_ONLINE) = range(5)
(_POOL_BODY, _POOL_CTX, _POOL_LO, _POOL_Q, _POOL_R) = range(5, 10)
(_POOL_MUTEX, _POOL_WORK, _POOL_DONE, _POOL_TICKETS) = range(10, 14)

#: glibc functions the runtime calls, with their C signatures on LP64 Linux.
_LIBC = {
    "getenv": ir.FunctionType(_PTR, [_PTR]),
    "strcmp": ir.FunctionType(_I32, [_PTR, _PTR]),
    "strncmp": ir.FunctionType(_I32, [_PTR, _PTR, _I64]),
    "strtoll": ir.FunctionType(_I64, [_PTR, _PTR, _I32]),
    "sysconf": ir.FunctionType(_I64, [_I32]),
    "pthread_create": ir.FunctionType(_I32, [_PTR, _PTR, _PTR, _PTR]),
    "pthread_mutex_lock": ir.FunctionType(_I32, [_PTR]),
    "pthread_mutex_unlock": ir.FunctionType(_I32, [_PTR]),
    "pthread_cond_wait": ir.FunctionType(_I32, [_PTR, _PTR]),
    "pthread_cond_broadcast": ir.FunctionType(_I32, [_PTR]),
    "getpid": ir.FunctionType(_I32, []),
}


def _i64(value: int) -> ir.Constant:
    """An i64 constant; values of 2**63 and above are written as their signed twin."""
    return ir.Constant(_I64, value - (1 << 64) if value >= 1 << 63 else value)


#: `void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags)`
#: (libgomp's ABI since GCC 4.9; LLVM's libomp provides it too) and the OpenMP API calls the
#: chunk function needs, as weak references (see the module docstring).
_OPENMP = {
    "GOMP_parallel": ir.FunctionType(_VOID, [_PTR, _PTR, _I32, _I32]),
    "omp_get_max_threads": ir.FunctionType(_I32, []),
    "omp_get_num_threads": ir.FunctionType(_I32, []),
    "omp_get_thread_num": ir.FunctionType(_I32, []),
}
#: the OpenMP glue's version, in its one-copy (linkonce_odr) symbols' names: a program that
#: links objects built by an earlier pycc-stencil (a build tree compiled before an upgrade)
#: keeps each version's glue, never one version's `ready` with another's loops
_GLUE = "_2"
_OMP_CHUNK = "__pycc_omp_chunk" + _GLUE
_OMP_READY = "__pycc_omp_ready" + _GLUE
_OMP_OWNER = "__pycc_omp_owner" + _GLUE
#: the runtime's functions the loops call, in `_OPENMP`'s order, as `_omp_ready` found them
#: (the weak references, or `dlsym`'s answers): GOMP_parallel's slot is set last
_OMP_API = "__pycc_omp_api" + _GLUE
_OMP_LIBRARY = "libgomp.so.1"
_BOOL = ir.IntType(1)
#: glibc's dynamic-loader calls that keep the OpenMP runtime loaded (`_omp_ready`), also weak
#: (in libc since glibc 2.34, in libdl before); Dl_info is four pointers
_DL = {
    "dladdr": ir.FunctionType(_I32, [_PTR, _PTR]),
    "dlopen": ir.FunctionType(_PTR, [_PTR, _I32]),
    "dlsym": ir.FunctionType(_PTR, [_PTR, _PTR]),
}
_DL_INFO = ir.ArrayType(_PTR, 4)
#: RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE in glibc's <bits/dlfcn.h> (all Linux ports)
_PIN_MODE = 0x0001 | 0x0004 | 0x1000
#: RTLD_NOW | RTLD_NODELETE: the runtime a link dropped, loaded and pinned
_LOAD_MODE = 0x0002 | 0x1000
#: what `GOMP_parallel` hands `__pycc_omp_chunk`: {body, ctx, lo, hi}
_JOB = ir.LiteralStructType([_BODY_PTR, _PTR, _I64, _I64])


def declare_parallel_for(module: ir.Module) -> ir.Function:
    """`void __pycc_parallel_for(ptr body, ptr ctx, i64 lo, i64 hi)` in `module`, defined
    on first use (with its helpers and glibc declarations) and reused afterwards."""
    existing = module.globals.get(PARALLEL_FOR)
    if isinstance(existing, ir.Function):
        return existing
    return _RuntimeBuilder(module).define_parallel_for()


def emit_parallel_call(
    builder: ir.IRBuilder,
    body: ir.Function,
    ctx: ir.Value,
    lo: ir.Value,
    hi: ir.Value,
    runtime: str,
    team: int = 0,
) -> None:
    """Run `body(ctx, ·, ·)` over [lo, hi) with `runtime` (SERIAL, OPENMP or POOL; OPENMP
    teams of at most `team` threads, 0: the runtime's default), returning when every chunk is
    done."""
    if body.function_type != BODY_TYPE:
        raise TypeError(f"a parallel body must have type {BODY_TYPE}, not {body.function_type}")
    if runtime == SERIAL:
        builder.call(body, [ctx, lo, hi])
    elif runtime == OPENMP:
        _openmp_call(builder, body, ctx, lo, hi, team)
    elif runtime == POOL:
        builder.call(declare_parallel_for(builder.module), [body, ctx, lo, hi])
    else:
        valid = ", ".join(PARALLEL_RUNTIMES)
        raise ValueError(f"unknown parallel runtime {runtime!r} (valid: {valid})")


def _openmp_call(
    builder: ir.IRBuilder,
    body: ir.Function,
    ctx: ir.Value,
    lo: ir.Value,
    hi: ir.Value,
    team: int,
) -> None:
    """`if (hi > lo)`: `GOMP_parallel(__pycc_omp_chunk, &{body, ctx, lo, hi},
    min(hi - lo, team or omp_get_max_threads()), 0)` for a team of two or more, else
    `body(ctx, lo, hi)`, as when the runtime may not be used (`_omp_ready`)."""
    module = builder.module
    n = builder.sub(hi, lo, name="n")
    with builder.if_then(builder.icmp_signed(">", n, _i64(0))):
        with builder.if_else(builder.call(_omp_ready(module), [])) as (parallel, serial):
            with parallel:
                gomp = _openmp_api(builder, "GOMP_parallel")
                if team:
                    most = _i64(team)
                else:
                    default = builder.call(_openmp_api(builder, "omp_get_max_threads"), [])
                    most = builder.sext(default, _I64)
                threads = _select(builder, "<", n, most)
                with builder.if_else(builder.icmp_signed(">", threads, _i64(1))) as (many, one):
                    with many:
                        job = _entry_alloca(builder, _JOB, "parallel.job")
                        for index, value in enumerate((body, ctx, lo, hi)):
                            builder.store(value, _field(builder, _JOB, job, index))
                        size = builder.trunc(threads, _I32)
                        builder.call(gomp, [_omp_chunk(module), job, size, ir.Constant(_I32, 0)])
                    with one:  # a team of one: no runtime call (it costs a microsecond)
                        builder.call(body, [ctx, lo, hi])
            with serial:
                builder.call(body, [ctx, lo, hi])


class _TypedPointer(ir.PointerType):
    """An opaque `ptr` to a function of type `pointee`: llvmlite reads the callee's type
    from `.pointee` to build an indirect call."""

    def __init__(self, pointee: ir.FunctionType):
        super().__init__()
        self._function_type = pointee

    @property
    def pointee(self) -> ir.FunctionType:  # type: ignore[override]
        return self._function_type


def _openmp_api(builder: ir.IRBuilder, name: str) -> ir.Value:
    """The runtime's `name` as `_omp_ready` found it (a call may use it once that said so)."""
    slot = _api_slot(builder, name)
    return builder.load(slot, typ=_TypedPointer(_OPENMP[name]), name=name)


def _api_slot(builder: ir.IRBuilder, name: str) -> ir.Value:
    module = builder.module
    table = module.globals.get(_OMP_API)
    if table is None:
        table = ir.GlobalVariable(module, ir.ArrayType(_PTR, len(_OPENMP)), name=_OMP_API)
        table.linkage = _LINKAGE
        table.initializer = ir.Constant(table.value_type, None)
    index = list(_OPENMP).index(name)
    return builder.gep(opaque(table), [_i64(0), _i64(index)], True, source_etype=table.value_type)


def _openmp_function(module: ir.Module, name: str) -> ir.Function:
    """The OpenMP runtime's (or the dynamic loader's) `name`, declared once as a weak
    reference."""
    existing = module.globals.get(name)
    if isinstance(existing, ir.Function):
        return existing
    function = ir.Function(module, {**_OPENMP, **_DL}[name], name)
    function.linkage = "extern_weak"
    return function


def _omp_ready(module: ir.Module) -> ir.Function:
    """`i1 __pycc_omp_ready(void)`: may this call use the OpenMP runtime?

    False when the program has none (the weak `GOMP_parallel` is null) or when this process is
    a fork of the one whose first call used it: libgomp's team of the parent does not exist in
    a child, and libgomp hangs there (GCC PR 60035), so a forked child runs the loops serially.
    The first call in a process records its pid and marks the library that defines
    `GOMP_parallel` RTLD_NODELETE (`dladdr` finds its file, `dlopen(file, RTLD_NOLOAD |
    RTLD_NODELETE)` promotes it): the runtime's threads stay after a parallel region, and when
    a library linking libgomp is dlopen'ed by a program that does not, its dlclose would unload
    libgomp under its idle threads (a crash, with gcc's own `-fopenmp` code too). Pinned,
    libgomp stays, its threads wait in libgomp's code, and our library itself unloads as cc's
    would. Racing first calls both record the same pid and pin twice, which is harmless."""
    existing = module.globals.get(_OMP_READY)
    if isinstance(existing, ir.Function):
        return existing
    ready = ir.Function(module, ir.FunctionType(_BOOL, []), _OMP_READY)
    ready.linkage = _LINKAGE
    ready.attributes.add("nounwind")
    owner = ir.GlobalVariable(module, _I64, name=_OMP_OWNER)
    owner.linkage = _LINKAGE
    owner.initializer = _i64(0)
    b = ir.IRBuilder(ready.append_basic_block("entry"))
    null = ir.Constant(_PTR, None)
    gomp = _openmp_function(module, "GOMP_parallel")
    getpid = _RuntimeBuilder(module).libc("getpid")
    pid = b.sext(b.call(getpid, []), _I64)
    first = b.load_atomic(owner, "monotonic", 8, typ=_I64)
    dladdr, dlopen, dlsym = (_openmp_function(module, n) for n in ("dladdr", "dlopen", "dlsym"))
    with b.if_then(_is_zero(b, first)):
        _atomic_store(b, pid, owner, "monotonic")
        with b.if_else(b.icmp_unsigned("!=", gomp, null)) as (linked, dropped):
            with linked:
                usable = b.and_(
                    b.icmp_unsigned("!=", dladdr, null), b.icmp_unsigned("!=", dlopen, null)
                )
                with b.if_then(usable):
                    info = _entry_alloca(b, _DL_INFO, "info")
                    found = b.icmp_signed("!=", b.call(dladdr, [gomp, info]), ir.Constant(_I32, 0))
                    with b.if_then(found):
                        name = b.load(info, typ=_PTR)
                        with b.if_then(b.icmp_unsigned("!=", name, null)):
                            b.call(dlopen, [name, ir.Constant(_I32, _PIN_MODE)])
                _fill_api(b, [_openmp_function(module, n) for n in _OPENMP])
            with dropped:
                _load_runtime(b, dlopen, dlsym)
    owned = b.or_(_is_zero(b, first), _is_equal(b, first, pid))
    table = b.load_atomic(_api_slot(b, "GOMP_parallel"), "acquire", 8, typ=_PTR)
    b.ret(b.and_(owned, b.icmp_unsigned("!=", table, null)))
    return ready


def _load_runtime(b: ir.IRBuilder, dlopen: ir.Value, dlsym: ir.Value) -> None:
    """The link dropped the runtime: load `libgomp.so.1` (pinned) and fill the table from
    it, if the program can load libraries and the library has every function."""
    null = ir.Constant(_PTR, None)
    builder = _RuntimeBuilder(b.module)
    usable = b.and_(b.icmp_unsigned("!=", dlopen, null), b.icmp_unsigned("!=", dlsym, null))
    with b.if_then(usable):
        library = b.call(
            dlopen, [builder.string("libgomp", _OMP_LIBRARY), ir.Constant(_I32, _LOAD_MODE)]
        )
        with b.if_then(b.icmp_unsigned("!=", library, null)):
            found = [b.call(dlsym, [library, builder.string(n, n)]) for n in _OPENMP]
            every = b.icmp_unsigned("!=", found[0], null)
            for function in found[1:]:
                every = b.and_(every, b.icmp_unsigned("!=", function, null))
            with b.if_then(every):
                _fill_api(b, found)


def _fill_api(b: ir.IRBuilder, functions: list[ir.Value]) -> None:
    """Store the runtime's functions in the table, GOMP_parallel's last (released: a thread
    that reads it there finds the others too)."""
    names = list(_OPENMP)
    for name, function in list(zip(names, functions, strict=True))[1:]:
        b.store(function, _api_slot(b, name))
    _atomic_store(b, functions[0], _api_slot(b, names[0]), "release")


def _omp_chunk(module: ir.Module) -> ir.Function:
    """`void __pycc_omp_chunk(ptr job)`, what each thread of the team runs: chunk
    `omp_get_thread_num()` of [lo, hi) split in `omp_get_num_threads()` (`_chunk`).
    `linkonce_odr hidden` like the pool: one copy per program, outside a library's interface."""
    existing = module.globals.get(_OMP_CHUNK)
    if isinstance(existing, ir.Function):
        return existing
    chunk = ir.Function(module, ir.FunctionType(_VOID, [_PTR]), _OMP_CHUNK)
    chunk.linkage = _LINKAGE
    chunk.attributes.add("nounwind")
    job = chunk.args[0]
    job.name = "job"
    b = ir.IRBuilder(chunk.append_basic_block("entry"))
    body, ctx, lo, hi = (
        b.load(_field(b, _JOB, job, index), typ=_JOB.elements[index]) for index in range(4)
    )
    t, threads = (
        b.sext(b.call(_openmp_api(b, name), []), _I64)
        for name in ("omp_get_thread_num", "omp_get_num_threads")
    )
    n = b.sub(hi, lo, name="n")
    q, r = b.sdiv(n, threads, name="q"), b.srem(n, threads, name="r")
    b.call(body, [ctx, *_chunk(b, lo, q, r, t)])
    b.ret_void()
    return chunk


def _entry_alloca(builder: ir.IRBuilder, record_type: ir.Type, name: str) -> ir.Value:
    """A stack record of `record_type` allocated in the entry block of the current function,
    so allocating inside a loop does not grow the stack per iteration."""
    entry = builder.function.entry_basic_block
    allocation = builder
    if builder.block is not entry:  # (a second builder in `entry` would shift `builder`)
        allocation = ir.IRBuilder(entry)
        allocation.position_at_start(entry)
    return opaque(allocation.alloca(record_type, name=name))


def pack_context(builder: ir.IRBuilder, values: list[ir.Value]) -> ir.Value:
    """Store `values` in a stack record of the current function and return its address.

    The record is allocated in the entry block (`_entry_alloca`); it stays valid during the
    parallel call because every runtime waits for every chunk before it returns.
    """
    record_type = ir.LiteralStructType([value.type for value in values])
    record = _entry_alloca(builder, record_type, "parallel.ctx")
    for index, value in enumerate(values):
        builder.store(value, _field(builder, record_type, record, index))
    return record


def unpack_context(
    builder: ir.IRBuilder, ctx_ptr: ir.Value, types: list[ir.Type]
) -> list[ir.Value]:
    """Load the values `pack_context` stored (their types in the same order) in the body."""
    return [context_value(builder, ctx_ptr, types[: k + 1]) for k in range(len(types))]


def context_value(builder: ir.IRBuilder, ctx_ptr: ir.Value, types: list[ir.Type]) -> ir.Value:
    """Load the last of `types` from a context packed with values of these types first: a
    field's offset depends only on the fields before it, so a body can read each value as it
    discovers that it needs it, before the whole context is known."""
    record_type = ir.LiteralStructType(types)
    return builder.load(_field(builder, record_type, ctx_ptr, len(types) - 1), typ=types[-1])


def _field(builder: ir.IRBuilder, record_type: ir.Type, record: ir.Value, index: int) -> ir.Value:
    return builder.gep(
        record, [ir.Constant(_I32, 0), ir.Constant(_I32, index)], True, source_etype=record_type
    )


@contextmanager
def _counting(builder: ir.IRBuilder, start: ir.Value, stop: ir.Value) -> Iterator[ir.Value]:
    """`for (i64 k = start; k < stop; k++) { <with-block> }`; the builder continues after it."""
    function = builder.function
    preheader = builder.block
    header, body, done = (function.append_basic_block(n) for n in ("loop", "step", "done"))
    builder.branch(header)
    builder.position_at_end(header)
    k = builder.phi(_I64, "k")
    k.add_incoming(start, preheader)
    builder.cbranch(builder.icmp_signed("<", k, stop), body, done)
    builder.position_at_end(body)
    yield k
    k.add_incoming(builder.add(k, _i64(1), flags=["nsw"]), builder.block)
    builder.branch(header)
    builder.position_at_end(done)


class _RuntimeBuilder:
    """Defines the runtime's functions in one module."""

    def __init__(self, module: ir.Module):
        self.module = module

    def libc(self, name: str) -> ir.Function:
        """glibc's `name`, declared once (an existing declaration must agree on the type)."""
        existing = self.module.globals.get(name)
        if existing is None:
            return ir.Function(self.module, _LIBC[name], name)
        if existing.function_type != _LIBC[name]:
            raise TypeError(f"{name} is declared as {existing.function_type}, not {_LIBC[name]}")
        return existing

    def string(self, name: str, text: str) -> ir.Value:
        data = bytearray(text.encode() + b"\0")
        constant = ir.Constant(ir.ArrayType(_I8, len(data)), data)
        variable = ir.GlobalVariable(self.module, constant.type, name=f"{PARALLEL_FOR}.{name}")
        variable.linkage = "private"
        variable.global_constant = True
        variable.unnamed_addr = True
        variable.initializer = constant
        return opaque(variable)

    def function(self, name: str, signature: ir.FunctionType, args: tuple[str, ...]) -> ir.Function:
        function = ir.Function(self.module, signature, name)
        function.linkage = _LINKAGE
        function.attributes.add("nounwind")
        for argument, arg_name in zip(function.args, args):
            argument.name = arg_name
        return function

    def define_parallel_for(self) -> ir.Function:
        run = self.function(
            PARALLEL_FOR,
            ir.FunctionType(_VOID, [_BODY_PTR, _PTR, _I64, _I64]),
            ("body", "ctx", "lo", "hi"),
        )
        run.attributes.add("noinline")  # a pool hand-off dwarfs a call; one copy per program
        body, ctx, lo, hi = run.args
        b = ir.IRBuilder(run.append_basic_block("entry"))
        n = b.sub(hi, lo, name="n")
        with b.if_then(b.icmp_signed("<=", n, _i64(0))):
            b.ret_void()
        self.debug_orders(b, body, ctx, lo, hi, n)
        threads = self.thread_count(b, n)
        with b.if_then(b.icmp_signed("==", threads, _i64(1))):
            b.call(body, [ctx, lo, hi])
            b.ret_void()
        self.pool_call(b, body, ctx, lo, n, threads)
        b.ret_void()
        return run

    def debug_orders(
        self,
        b: ir.IRBuilder,
        body: ir.Value,
        ctx: ir.Value,
        lo: ir.Value,
        hi: ir.Value,
        n: ir.Value,
    ) -> None:
        """`PYCC_PARALLEL_ORDER=reverse|shuffle[:SEED]`: serial, one iteration per call."""
        order = b.call(self.libc("getenv"), [self.string("order_env", "PYCC_PARALLEL_ORDER")])
        with b.if_then(b.icmp_unsigned("!=", order, ir.Constant(_PTR, None))):
            reverse = b.call(self.libc("strcmp"), [order, self.string("reverse", "reverse")])
            with b.if_then(b.icmp_signed("==", reverse, ir.Constant(_I32, 0))):
                with _counting(b, _i64(0), n) as k:
                    last = b.sub(b.sub(hi, k), _i64(1))
                    b.call(body, [ctx, last, b.add(last, _i64(1))])
                b.ret_void()
            prefix = [order, self.string("shuffle", "shuffle"), _i64(len("shuffle"))]
            shuffle = b.call(self.libc("strncmp"), prefix)
            with b.if_then(b.icmp_signed("==", shuffle, ir.Constant(_I32, 0))):
                b.call(self.define_shuffled(), [body, ctx, lo, n, self.seed(b, order)])
                b.ret_void()

    def seed(self, b: ir.IRBuilder, order: ir.Value) -> ir.Value:
        """SEED of `shuffle:SEED` (strtoll, any base C accepts), 0 for a bare `shuffle`."""
        colon = b.gep(order, [_i64(len("shuffle"))], True, source_etype=_I8)
        after = b.gep(colon, [_i64(1)], True, source_etype=_I8)
        has_seed = b.icmp_signed("==", b.load(colon, typ=_I8), ir.Constant(_I8, ord(":")))
        parse = [after, ir.Constant(_PTR, None), ir.Constant(_I32, 0)]
        return _when(b, has_seed, lambda: b.call(self.libc("strtoll"), parse), _i64(0))

    def thread_count(self, b: ir.IRBuilder, n: ir.Value) -> ir.Value:
        """min(PYCC_NUM_THREADS if >= 1, else the online CPUs (at least 1); n; MAX_THREADS)."""
        env = b.call(self.libc("getenv"), [self.string("threads_env", "PYCC_NUM_THREADS")])
        parse = [env, ir.Constant(_PTR, None), ir.Constant(_I32, 10)]
        is_set = b.icmp_unsigned("!=", env, ir.Constant(_PTR, None))
        asked = _when(b, is_set, lambda: b.call(self.libc("strtoll"), parse), _i64(0))
        unset = b.icmp_signed("<", asked, _i64(1))
        count = _when(b, unset, lambda: self.online_processors(b), asked)
        count = _select(b, ">", count, _i64(1))
        return _select(b, "<", _select(b, "<", count, n), _i64(MAX_THREADS))

    def online_processors(self, b: ir.IRBuilder) -> ir.Value:
        """sysconf(_SC_NPROCESSORS_ONLN), read from /sys once per process (tens of
        microseconds: more than a whole call to the pool)."""
        cache = _field(b, _POOL, self.pool(), _POOL_ONLINE)
        cached = b.load_atomic(cache, "monotonic", 8, typ=_I64)

        def ask() -> ir.Value:
            online = b.call(self.libc("sysconf"), [ir.Constant(_I32, _SC_NPROCESSORS_ONLN)])
            _atomic_store(b, online, cache, "monotonic")
            return online

        return _when(b, _is_zero(b, cached), ask, cached)

    def pool_call(
        self,
        b: ir.IRBuilder,
        body: ir.Value,
        ctx: ir.Value,
        lo: ir.Value,
        n: ir.Value,
        threads: ir.Value,
    ) -> None:
        """Runs [lo, lo + n) as `threads` chunks (`_chunk`) on the pool.

        Takes the pool (else runs [lo, hi) here: a nested or concurrent call), grows it to
        threads - 1 workers, publishes the job, hands chunks 1.. to workers by bumping their
        tickets, runs chunk 0 (and the chunks of workers that could not be created) here and
        waits until every worker is done."""
        pool = self.pool()
        q, r = b.sdiv(n, threads, name="q"), b.srem(n, threads, name="r")
        free, one = ir.Constant(_I32, 0), ir.Constant(_I32, 1)
        taken = b.cmpxchg(_field(b, _POOL, pool, _POOL_BUSY), free, one, "acquire", "monotonic")
        with b.if_then(b.not_(b.extract_value(taken, 1))):
            b.call(body, [ctx, lo, b.add(lo, n)])
            b.ret_void()
        self.forget_forked_pool(b, pool)
        workers = self.grow(b, pool, threads)
        helpers = _select(b, "<", b.sub(threads, _i64(1)), workers)
        job = ((_POOL_BODY, body), (_POOL_CTX, ctx), (_POOL_LO, lo), (_POOL_Q, q), (_POOL_R, r))
        for index, value in (*job, (_POOL_PENDING, helpers)):
            b.store(value, _field(b, _POOL, pool, index))
        with _counting(b, _i64(1), b.add(helpers, _i64(1))) as t:
            ticket = _ticket(b, pool, t)
            _atomic_store(b, b.add(b.load(ticket, typ=_I64), _i64(1)), ticket, "release")
        self.broadcast(b, pool, _POOL_WORK)
        b.call(body, [ctx, *_chunk(b, lo, q, r, _i64(0))])
        with _counting(b, b.add(helpers, _i64(1)), threads) as t:
            b.call(body, [ctx, *_chunk(b, lo, q, r, t)])  # no worker for this chunk
        pending = _field(b, _POOL, pool, _POOL_PENDING)
        self.wait_until(b, pool, _POOL_DONE, lambda: _is_zero(b, _acquire(b, pending)))
        _atomic_store(b, free, _field(b, _POOL, pool, _POOL_BUSY), "release")

    def pool(self) -> ir.Value:
        """The pool's state, one per program: `linkonce_odr hidden` like the functions, so
        objects that each carry the runtime share it. All-zero bytes are the initial state
        (no workers; glibc's static mutex and condition variable initializers are zeros)."""
        pool = self.module.globals.get(_POOL_NAME)
        if pool is None:
            pool = ir.GlobalVariable(self.module, _POOL, name=_POOL_NAME)
            pool.linkage = _LINKAGE
            pool.initializer = ir.Constant(_POOL, None)
            pool.align = 64
        return opaque(pool)

    def forget_forked_pool(self, b: ir.IRBuilder, pool: ir.Value) -> None:
        """A forked child (check and tune run kernels in one) inherits the pool's state but
        not its threads, and maybe a mutex a worker held: it starts a fresh pool."""
        pid = b.call(self.libc("getpid"), [])
        owner = _field(b, _POOL, pool, _POOL_PID)
        with b.if_then(b.icmp_signed("!=", b.load(owner, typ=_I32), pid)):
            b.store(pid, owner)
            b.store(_i64(0), _field(b, _POOL, pool, _POOL_WORKERS))
            for index in (_POOL_MUTEX, _POOL_WORK, _POOL_DONE):
                b.store(ir.Constant(_SYNC, None), _field(b, _POOL, pool, index))

    def grow(self, b: ir.IRBuilder, pool: ir.Value, threads: ir.Value) -> ir.Value:
        """Starts workers until there are threads - 1, stopping at the first that
        pthread_create refuses (workers are numbered 1..count without gaps; the chunks of the
        missing ones run on the caller); returns the number of workers."""
        count = _field(b, _POOL, pool, _POOL_WORKERS)
        entry = ir.IRBuilder(b.function.entry_basic_block)
        entry.position_at_start(b.function.entry_basic_block)
        handle = entry.alloca(_I64, name="handle")  # pthread_create's output, unused
        with _counting(b, b.add(b.load(count, typ=_I64), _i64(1)), threads) as t:
            previous_started = _is_equal(b, b.load(count, typ=_I64), b.sub(t, _i64(1)))
            with b.if_then(previous_started):
                b.store(_i64(0), _ticket(b, pool, t))  # a new worker has seen ticket 0
                null = ir.Constant(_PTR, None)
                worker = [handle, null, self.worker(), b.inttoptr(t, _PTR)]
                created = b.call(self.libc("pthread_create"), worker)
                with b.if_then(b.icmp_signed("==", created, ir.Constant(_I32, 0))):
                    b.store(t, count)
        return b.load(count, typ=_I64)

    def worker(self) -> ir.Function:
        """`ptr __pycc_parallel_worker(ptr t)`: worker t's loop, forever: wait for its ticket
        to move, run chunk t of the published job, count itself done (the last one wakes the
        caller)."""
        existing = self.module.globals.get(_WORKER)
        if existing is not None:
            return existing
        worker = self.function(_WORKER, ir.FunctionType(_PTR, [_PTR]), ("t",))
        pool = self.pool()
        b = ir.IRBuilder(worker.append_basic_block("entry"))
        t = b.ptrtoint(worker.args[0], _I64, name="t")
        ticket = _ticket(b, pool, t)
        entry, loop = b.block, worker.append_basic_block("job")
        b.branch(loop)
        b.position_at_end(loop)
        seen = b.phi(_I64, "seen")
        seen.add_incoming(_i64(0), entry)
        moved = lambda: b.not_(_is_equal(b, _acquire(b, ticket), seen))  # noqa: E731
        self.wait_until(b, pool, _POOL_WORK, moved)
        current = _acquire(b, ticket)
        body, ctx, lo, q, r = (
            b.load(_field(b, _POOL, pool, index), typ=_POOL.elements[index])
            for index in (_POOL_BODY, _POOL_CTX, _POOL_LO, _POOL_Q, _POOL_R)
        )
        b.call(body, [ctx, *_chunk(b, lo, q, r, t)])
        pending = _field(b, _POOL, pool, _POOL_PENDING)
        left = b.atomic_rmw("sub", pending, _i64(1), "acq_rel")
        with b.if_then(_is_equal(b, left, _i64(1))):
            self.broadcast(b, pool, _POOL_DONE)
        seen.add_incoming(current, b.block)
        b.branch(loop)
        return worker

    def wait_until(
        self, b: ir.IRBuilder, pool: ir.Value, condition: int, ready: Callable[[], ir.Value]
    ) -> None:
        """Returns when `ready()` holds: checks it up to _SPINS times (the next job or the last
        chunk usually comes within microseconds), then sleeps on the pool's condition variable
        `condition`, whose waker changes what `ready` reads before it broadcasts under the
        mutex (so no wake-up is lost)."""
        function = b.function
        spin, more, sleep, check, wait, woken, go = (
            function.append_basic_block(name)
            for name in ("spin", "spin.again", "sleep", "sleep.check", "sleep.wait", "woken", "go")
        )
        before = b.block
        b.branch(spin)
        b.position_at_end(spin)
        spins = b.phi(_I64, "spins")
        spins.add_incoming(_i64(0), before)
        b.cbranch(ready(), go, more)
        b.position_at_end(more)
        spins.add_incoming(b.add(spins, _i64(1)), more)
        b.cbranch(b.icmp_signed("<", spins, _i64(_SPINS)), spin, sleep)
        b.position_at_end(sleep)
        mutex = _field(b, _POOL, pool, _POOL_MUTEX)
        b.call(self.libc("pthread_mutex_lock"), [mutex])
        b.branch(check)
        b.position_at_end(check)
        b.cbranch(ready(), woken, wait)
        b.position_at_end(wait)
        b.call(self.libc("pthread_cond_wait"), [_field(b, _POOL, pool, condition), mutex])
        b.branch(check)
        b.position_at_end(woken)
        b.call(self.libc("pthread_mutex_unlock"), [mutex])
        b.branch(go)
        b.position_at_end(go)

    def broadcast(self, b: ir.IRBuilder, pool: ir.Value, condition: int) -> None:
        """Wakes the threads sleeping on `condition` (under the mutex: see `wait_until`)."""
        mutex = _field(b, _POOL, pool, _POOL_MUTEX)
        b.call(self.libc("pthread_mutex_lock"), [mutex])
        b.call(self.libc("pthread_cond_broadcast"), [_field(b, _POOL, pool, condition)])
        b.call(self.libc("pthread_mutex_unlock"), [mutex])

    def define_shuffled(self) -> ir.Function:
        """`void __pycc_parallel_shuffled(ptr body, ptr ctx, i64 lo, i64 n, i64 seed)`.

        Visits k = h(i) for i in [0, 2**bits) with 2**bits the power of two >= n, skipping
        k >= n. h is a seeded bijection of [0, 2**bits) (rounds of an odd multiply-add and an
        xor-shift, both invertible modulo 2**bits), so every iteration runs exactly once, in
        an order fixed by the seed, with no array to allocate.
        """
        existing = self.module.globals.get(_SHUFFLED)
        if existing is not None:
            return existing
        signature = ir.FunctionType(_VOID, [_BODY_PTR, _PTR, _I64, _I64, _I64])
        shuffled = self.function(_SHUFFLED, signature, ("body", "ctx", "lo", "n", "seed"))
        body, ctx, lo, n, seed = shuffled.args
        b = ir.IRBuilder(shuffled.append_basic_block("entry"))
        leading = b.ctlz(b.sub(n, _i64(1)), ir.Constant(ir.IntType(1), 0))
        bits = b.sub(_i64(64), leading, name="bits")
        span = b.shl(_i64(1), bits, name="span")
        mask = b.sub(span, _i64(1), name="mask")
        shift = b.add(b.lshr(bits, _i64(1)), _i64(1), name="shift")
        multiplier = b.or_(_mix(b, seed), _i64(1), name="multiplier")
        increment = _mix(b, b.add(seed, _i64(_GOLDEN)))
        with _counting(b, _i64(0), span) as i:
            k = i
            for _ in range(_SHUFFLE_ROUNDS):
                k = b.and_(b.add(b.mul(k, multiplier), increment), mask)
                k = b.xor(k, b.lshr(k, shift))
            with b.if_then(b.icmp_signed("<", k, n)):
                first = b.add(lo, k)
                b.call(body, [ctx, first, b.add(first, _i64(1))])
        b.ret_void()
        return shuffled


_SHUFFLE_ROUNDS = 3
_GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: splitmix64's increment


def _mix(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """splitmix64's finalizer: nearby seeds give unrelated multipliers and increments."""
    z = b.add(value, _i64(_GOLDEN))
    z = b.mul(b.xor(z, b.lshr(z, _i64(30))), _i64(0xBF58476D1CE4E5B9))
    z = b.mul(b.xor(z, b.lshr(z, _i64(27))), _i64(0x94D049BB133111EB))
    return b.xor(z, b.lshr(z, _i64(31)))


def _chunk(
    b: ir.IRBuilder, lo: ir.Value, q: ir.Value, r: ir.Value, t: ir.Value
) -> tuple[ir.Value, ir.Value]:
    """Chunk t of [lo, lo + n) split in `threads` with q, r = divmod(n, threads):
    [lo + t*q + min(t, r), +q + (t < r))."""
    start = b.add(b.add(lo, b.mul(t, q)), _select(b, "<", t, r))
    return start, b.add(b.add(start, q), b.zext(b.icmp_signed("<", t, r), _I64))


def _ticket(b: ir.IRBuilder, pool: ir.Value, t: ir.Value) -> ir.Value:
    tickets = _field(b, _POOL, pool, _POOL_TICKETS)
    return b.gep(tickets, [_i64(0), t], True, source_etype=_POOL.elements[_POOL_TICKETS])


def _acquire(b: ir.IRBuilder, pointer: ir.Value) -> ir.Value:
    return b.load_atomic(pointer, "acquire", 8, typ=_I64)


def _atomic_store(b: ir.IRBuilder, value: ir.Value, pointer: ir.Value, ordering: str) -> None:
    """An atomic store, as an exchange whose old value is unused: llvmlite's `store_atomic`
    needs a typed pointer."""
    b.atomic_rmw("xchg", pointer, value, ordering)


def _is_zero(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    return _is_equal(b, value, _i64(0))


def _is_equal(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.icmp_signed("==", x, y)


def _select(b: ir.IRBuilder, relation: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """x if `x relation y` (signed) else y: min with "<", max with ">"."""
    return b.select(b.icmp_signed(relation, x, y), x, y)


def _when(
    b: ir.IRBuilder, condition: ir.Value, compute: Callable[[], ir.Value], otherwise: ir.Value
) -> ir.Value:
    """`condition ? compute() : otherwise`, evaluating `compute` only when it is needed
    (getenv's result may be null; sysconf reads /sys)."""
    before = b.block
    with b.if_then(condition):
        value = compute()
        computed_in = b.block
    result = b.phi(otherwise.type)
    result.add_incoming(value, computed_in)
    result.add_incoming(otherwise, before)
    return result

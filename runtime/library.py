"""The Python API: `load` a C file, call its kernels on numpy arrays through the JIT.

Every call is checked before it reaches machine code: argument count, scalar ranges, array
dtypes, contiguity, writability and size. Array sizes come from the declared array types
evaluated at the scalar arguments, or for plain pointers from the measured footprint (cached
per scalar arguments). When the footprint of a plain pointer depends on the data (see
`ir_passes.taint`), its size check is skipped with a warning: the caller is then responsible
for passing a large enough array.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence

from ..emit.host_jit import compile_module
from ..emit.targets import host_target
from ..frontend.c_types import ArrayType, PointerType
from ..frontend.signature import FunctionInfo, LoweredModule, SkippedFunction
from ..ir_passes.pipeline import PassRecord, parse_pipeline, run_passes
from ..ir_passes.registry import Remark
from .footprint import FootprintProbe, ParamFootprint
from .globals import GlobalHome
from .marshal import (
    check_array,
    convert_scalar,
    declared_shape,
    inner_row_elements,
    is_buffer,
    prototype,
    unsupported_reason,
)


class DataDependentWarning(UserWarning):
    """Array sizes cannot be checked for a kernel whose footprint depends on data."""


class KernelFunction:
    """One lowered C function, callable with numpy arrays and Python scalars."""

    def __init__(self, library: Library, info: FunctionInfo, address: int):
        self.info = info
        self._library = library
        self._unsupported = unsupported_reason(info)
        self._cfunc = None if self._unsupported else prototype(info)(address)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.ctype} {p.name}" for p in self.info.params)
        return f"<kernel {self.info.result} {self.info.name}({params})>"

    def __call__(self, *args: object) -> int | float | None:
        info = self.info
        if self._unsupported:
            raise TypeError(f"{info.name} cannot be called from Python: {self._unsupported}")
        if len(args) != len(info.params):
            raise TypeError(f"{info.name}() takes {len(info.params)} arguments, {len(args)} given")
        scalars = {
            p.name: convert_scalar(p, a)
            for p, a in zip(info.params, args, strict=True)
            if not is_buffer(p)
        }
        footprints = self._library.footprints(info, scalars)
        c_args = []
        for param, value in zip(info.params, args, strict=True):
            if is_buffer(param):
                footprint = footprints.get(param.name)
                if footprint is not None and footprint.bounds and footprint.bounds[0] < 0:
                    raise ValueError(
                        f"parameter '{param.name}': the kernel accesses elements before the "
                        f"start of the array ({footprint}); a numpy array cannot provide them"
                    )
                needed = _needed_elements(param.ctype, scalars, footprint)
                written = _may_write(param.ctype, footprint)
                c_args.append(check_array(param, value, needed or 0, written))
            else:
                c_args.append(scalars[param.name])
        return self._cfunc(*c_args)


def _needed_elements(
    ctype: PointerType | ArrayType, scalars: dict, footprint: ParamFootprint | None
) -> int | None:
    """Elements an array argument must have; None if unknown (the footprint depends on data)."""
    if isinstance(ctype, ArrayType):
        shape = declared_shape(ctype, scalars)
        if shape is not None:
            return math.prod(shape)
    if footprint is None:
        return None
    bounds = footprint.bounds
    if bounds is None:
        return 0
    if isinstance(ctype, ArrayType):  # `float A[][N]`: whole rows
        inner = inner_row_elements(ctype, scalars)
        return -(-bounds[1] // inner) * inner if inner else 0
    return bounds[1]


def _may_write(ctype: PointerType | ArrayType, footprint: ParamFootprint | None) -> bool:
    if footprint is not None:
        return footprint.written is not None
    return not (isinstance(ctype, PointerType) and ctype.const_pointee)


class Library:
    """The lowered functions of one C file; attributes are callable kernels."""

    def __init__(
        self,
        lowered: LoweredModule,
        relower: Callable[[], LoweredModule],
        passes: str | None = None,
        opt_level: int = 3,
    ):
        """`relower` returns a fresh lowering of the same file (for footprint dry runs)."""
        self.path = lowered.source_path
        self.skipped: dict[str, SkippedFunction] = {s.name: s for s in lowered.skipped}
        result = run_passes(lowered.module, parse_pipeline(passes or ""), target=host_target())
        #: what each pass of `passes` did: its name, arguments, remarks and time
        self.pass_records: list[PassRecord] = result.records
        #: every remark of the pipeline; `print(*lib.remarks, sep="\n")` shows them as clang would
        self.remarks: list[Remark] = result.remarks
        #: the storage of the file's globals the kernels use (zeroed), and its values
        self.globals = GlobalHome(lowered.globals.values())
        self._jit = compile_module(
            result.module, lowered.functions, opt_level, symbols=self.globals.symbols()
        )
        self._relower = relower
        self._probe: FootprintProbe | None = None
        self._warned: set[str] = set()
        self.functions = {
            name: KernelFunction(self, info, self._jit.function_address(name))
            for name, info in lowered.functions.items()
        }

    def __getattr__(self, name: str) -> KernelFunction:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        skipped = self.__dict__.get("skipped", {})
        if name in skipped:
            raise AttributeError(f"{name} was not compiled: {skipped[name]}")
        raise AttributeError(f"{self.__dict__.get('path')} defines no function named {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.functions))

    def footprints(self, info: FunctionInfo, scalars: dict) -> dict[str, ParamFootprint]:
        """Measured footprints of `info`'s buffer parameters, except those that depend on
        data."""
        if not any(is_buffer(p) for p in info.params):
            return {}
        if self._probe is None:
            self._probe = FootprintProbe(self._relower(), home=self.globals)
        dependences = self._probe.dependences(info.name)
        unchecked = [
            p.name
            for p in info.params
            if p.name in dependences and _needed_elements(p.ctype, scalars, None) is None
        ]
        if unchecked and info.name not in self._warned:
            self._warned.add(info.name)
            warnings.warn(
                f"{info.name}: the size of {', '.join(unchecked)} is not checked: the footprint "
                f"depends on data ({dependences[unchecked[0]]})",
                DataDependentWarning,
                stacklevel=3,
            )
        return self._probe.measure(info.name, scalars)


def load(
    path: str, cflags: Sequence[str] = (), passes: str | None = None, opt_level: int = 3
) -> Library:
    """JIT-compile the C file at `path` (with cc-style -I/-D/-U/-std flags) and return its
    functions, optionally transformed by the pass pipeline `passes` (e.g. "unroll(4)"); the
    pipeline's remarks and per-pass times are in `.remarks` and `.pass_records`.

    Raises diagnostics.CompilerError for C the front end rejects, PipelineError for a bad
    pipeline string.
    """
    from ..frontend import lower_file

    flags = list(cflags)
    return Library(
        lower_file(str(path), flags), lambda: lower_file(str(path), flags), passes, opt_level
    )

"""What compiler mode does with each gcc option that changes the generated code.

Read before anything else of a compile (no process, no parsing, no LLVM): a file whose
flags leave every kernel to cc is then never parsed. `emit/cc_target.py` reads the honoured
ones into the LLVM target; README's table is `codegen_option_table()`.
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Sequence

#: x86 ISA extensions gcc enables with `-mNAME` (disables with `-mno-NAME`); all of them only
#: change which instructions the code may use, which `cc -dM -E` reports as macros
ISA_EXTENSIONS = frozenset(
    """3dnow 3dnowa abm adx aes amx-bf16 amx-complex amx-fp16 amx-int8 amx-tile avx avx2
    avx5124fmaps avx5124vnniw avx512bf16 avx512bitalg avx512bw avx512cd avx512dq avx512er avx512f
    avx512fp16 avx512ifma avx512pf avx512vbmi avx512vbmi2 avx512vl avx512vnni avx512vp2intersect
    avx512vpopcntdq avxifma avxneconvert avxvnni avxvnniint8 bmi bmi2 cldemote clflushopt clwb
    clzero cmpccxadd crc32 cx16 enqcmd f16c fma fma4 fsgsbase fxsr gfni hle hreset kl lwp lzcnt
    mmx movbe movdir64b movdiri mwait mwaitx pclmul pconfig pku popcnt prefetchi prefetchwt1
    prfchw ptwrite raoint rdpid rdrnd rdseed rtm sahf serialize sgx sha shstk sse sse2 sse3 sse4
    sse4.1 sse4.2 sse4a ssse3 tbm tsxldtrk uintr vaes vpclmulqdq waitpkg wbnoinvd widekl xop
    xsave xsavec xsaveopt xsaves""".split()
)


class CodegenOption(namedtuple("CodegenOption", "spellings honoured how")):
    """gcc options that change the generated code, and what compiler mode does with them.

    A spelling ending in `=` or `*` matches every option it begins (`*` is not part of the
    option); any other spelling matches exactly. `honoured` options are implemented for the
    kernels pycc-stencil compiles (`how` says how); any other makes every kernel of the file
    go to cc (`how` says why only cc can do it). A named tuple, not a dataclass: every compile
    reads this table, and `dataclasses` costs start-up time."""

    __slots__ = ()
    spellings: tuple[str, ...]
    honoured: bool
    how: str

    def matches(self, flag: str) -> bool:
        return any(
            flag.startswith(s.rstrip("*")) if s.endswith(("=", "*")) else flag == s
            for s in self.spellings
        )


def _honoured(*spellings: str, how: str) -> CodegenOption:
    return CodegenOption(spellings, True, how)


def _cc_only(*spellings: str, why: str) -> CodegenOption:
    return CodegenOption(spellings, False, why)


#: gcc's "Options for Code Generation Conventions", instrumentation options and the -f
#: options that change what a program computes, first match winning (README's table is
#: `codegen_option_table()`; tests/test_dropin_flags.py keeps the two equal). Optimization
#: choices (-funroll-loops, -fno-inline, ...) are not listed: LLVM's -O<n> pipeline chooses its
#: own, and no correct program can tell.
CODEGEN_OPTIONS = (
    _honoured("-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic", "-fno-PIE", "-fno-pie",
              how="position-independent code exactly when cc's `__PIC__`/`__PIE__` are defined"),
    _honoured("-fwrapv", "-fno-wrapv", "-fstrict-overflow", "-fno-wrapv-pointer",
              how="`-fwrapv`: signed `+ - * <<` wrap (no `nsw` in the IR)"),
    _honoured("-fstack-protector", "-fstack-protector-strong", "-fstack-protector-all",
              "-fstack-protector-explicit", "-fno-stack-protector",
              how="LLVM's `ssp`/`sspstrong`/`sspreq` as cc's `__SSP*__` macros say (a spec file's "
              "default too; kernels with attributes go to cc)"),
    _honoured("-fstack-clash-protection", "-fno-stack-clash-protection",
              how='stack probes (`"probe-stack"="inline-asm"`) when cc enables them (the flag or '
              "a spec file's default: `cc -Q --help=common`)"),
    _honoured("-ftrivial-auto-var-init=uninitialized",
              how="gcc's default (a spec file's `pattern`/`zero` leaves the kernels to cc)"),
    _honoured("-fomit-frame-pointer", "-fno-omit-frame-pointer",
              how='`"frame-pointer"="all"` when cc keeps frame pointers (the flag, a spec file\'s '
              "default, -O0)"),
    _honoured("-ffunction-sections", "-fno-function-sections", "-fdata-sections",
              "-fno-data-sections", how="`.text.NAME` / `.rodata.NAME` sections"),
    _honoured("-fexceptions", "-fno-exceptions", "-funwind-tables", "-fno-unwind-tables",
              "-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables",
              how="unwind tables exactly when gcc emits them (not with "
              "`-fno-asynchronous-unwind-tables` alone)"),
    _honoured("-ffast-math", "-fno-fast-math",
              how="LLVM's `fast` flags when cc defines `__FAST_MATH__`"),
    _honoured("-fmath-errno", "-fno-math-errno",
              how="`sqrt` calls libm (sets `errno`) unless cc defines `__NO_MATH_ERRNO__`"),
    _honoured("-ffp-contract=",
              how="`fast`: the multiply-adds gcc fuses, fused alike (see above); `off`/`on`: none"),
    _honoured("-funsafe-math-optimizations", "-fno-unsafe-math-optimizations",
              "-fassociative-math", "-fno-associative-math", "-freciprocal-math",
              "-fno-reciprocal-math", "-fsigned-zeros", "-fno-signed-zeros", "-ffinite-math-only",
              "-fno-finite-math-only", "-ftrapping-math", "-fno-trapping-math",
              "-fno-rounding-math", "-fno-signaling-nans",
              how="they allow rewrites, never require them: kernels keep IEEE semantics"),
    _honoured("-fexcess-precision=", "-ffloat-store", "-fno-float-store",
              how="no effect with SSE2 math (x87 math is cc's, below)"),
    _honoured("-fstrict-aliasing", "-fno-strict-aliasing",
              how="type-based alias tags (`!tbaa`, as clang's) exactly when cc assumes C's "
              "aliasing rules (`-fstrict-aliasing`, gcc's default from -O2)"),
    _honoured("-fsigned-char", "-funsigned-char", "-fno-signed-char", "-fno-unsigned-char",
              "-fshort-enums", "-fno-short-enums", "-fshort-wchar", "-fno-short-wchar",
              how="the front end reads the types as cc does"),
    _honoured("-fcommon", "-fno-common", "-fident", "-fno-ident", "-frecord-gcc-switches",
              "-fno-record-gcc-switches", "-fno-zero-initialized-in-bss",
              how="variables and the object's notes are cc's part of the object"),
    _honoured("-fvisibility=default", "-fvisibility=hidden", how="kernel symbols' visibility"),
    _honoured("-fstrict-volatile-bitfields", "-fno-strict-volatile-bitfields",
              how="kernels using `volatile` go to cc"),
    _honoured("-fopenmp", "-fopenmp-simd", "-ftree-parallelize-loops=",
              how="kernels with OpenMP directives go to cc; tiled code's parallel loops (and, "
              "at `-O3`, single sweeps) run on libgomp only under `-fopenmp` or "
              "`-ftree-parallelize-loops=N` (see Threads)"),
    _honoured("-fcf-protection", "-fcf-protection=full", "-fcf-protection=branch",
              "-fcf-protection=return", "-fcf-protection=none",
              how="as cc's `__CET__` says: `endbr64` and the object's IBT/SHSTK note"),
    _honoured("-fno-lto", "-fno-sanitize=", how="gcc's default"),
    _honoured("-m<ISA>", "-mno-<ISA>", "-march=", "-mtune=", "-mcpu=", "-m64",
              "-mprefer-vector-width=", "-mprefer-avx128", "-mfpmath=sse", "-mcmodel=small",
              how="`-m<ISA>` is every x86 extension gcc has (`-msse4.1`, `-mno-avx2`, "
              "`-mavx512f`, ...): LLVM gets the features cc's predefined macros name "
              "(`-march=native`: the host's, less those the macros lack); "
              "`-mprefer-vector-width=` and `-mprefer-avx128` set the width of LLVM's vectors "
              "(`emit.vector_width`: else 512 bits with AVX-512); the others only tune"),
    _cc_only("-fsanitize*", "--coverage", "-fprofile-*", "-ftest-coverage", "-pg", "-p",
             "-finstrument-functions*", "-fpatchable-function-entry=", "-fcf-protection=*",
             "-fharden-*", "-fzero-call-used-regs=",
             why="instrumentation and hardening only gcc emits"),
    _cc_only("-ftrivial-auto-var-init=*",
             why="`pattern`/`zero` fill uninitialized locals; pycc-stencil's code does not"),
    _cc_only("-fstack-check*", "-fstack-limit-*", "-fsplit-stack", "-fstack-reuse=",
             why="stack conventions LLVM does not implement as gcc does"),
    _cc_only("-ftrapv", "-fno-strict-overflow", "-fwrapv-pointer",
             why="trapping signed overflow; wrapping pointer arithmetic"),
    _cc_only("-frounding-math", "-fsignaling-nans", "-fsingle-precision-constant",
             "-fcx-limited-range", "-fcx-fortran-rules",
             why="floating-point semantics the front end does not model"),
    _cc_only("-fno-builtin*", "-ffreestanding",
             why="gcc keeps calls as written; LLVM would still form `memset`/`memcpy`"),
    _cc_only("-fno-delete-null-pointer-checks", why="LLVM assumes a null dereference is UB"),
    _cc_only("-fpack-struct*", "-fpcc-struct-return", "-freg-struct-return",
             "-fleading-underscore", "-ffixed-*", "-fcall-used-*", "-fcall-saved-*",
             "-ftls-model=", "-fno-plt", "-fno-jump-tables", "-fno-bit-tests",
             "-fnon-call-exceptions", "-finhibit-size-directive", "-fverbose-asm", "-fvisibility=*",
             "-ftrampolines", "-fno-sync-libcalls",
             why="layout, ABI and assembly conventions only cc implements"),
    _cc_only("-gsplit-dwarf", "-fstack-usage",
             why="cc's `.dwo`/`.su` next to the output would describe only its part of the object"),
    _cc_only("-flto*", "-save-temps*",
             why="LTO bytecode; the temporaries would be those of the rewritten file"),
    _cc_only("-aux-info*", why="the prototypes cc lists would include the rewritten file's"),
    _cc_only("-m*", why="every other `-m` option: ABI (`-mabi=`, `-m32`, `-mx32`), code "
             "model, x87 math, `-mgeneral-regs-only`, `-mfentry`, red zone, retpolines, ..."),
)  # fmt: skip
_ISA_OPTION = re.compile(r"-m(no-)?(?P<name>[\w.-]+)")


def codegen_option(flag: str) -> CodegenOption | None:
    """The row of `CODEGEN_OPTIONS` deciding `flag`, None for options that are not listed."""
    isa = _ISA_OPTION.fullmatch(flag)
    if isa is not None and isa["name"] in ISA_EXTENSIONS:
        return CODEGEN_OPTIONS[[o.spellings[0] for o in CODEGEN_OPTIONS].index("-m<ISA>")]
    return next((o for o in CODEGEN_OPTIONS if o.matches(flag)), None)


def refusal_of_flags(flags: Sequence[str]) -> str | None:
    """Why cc must compile every kernel of a file compiled with `flags`, read from the flags
    alone (no process, no parsing: it is checked before anything else), or None."""
    for flag in flags:
        option = codegen_option(flag)
        if option is not None and not option.honoured:
            return f"'{flag}' is implemented by cc only"
    return None


def codegen_option_table() -> str:
    """The README's table of `CODEGEN_OPTIONS` (Markdown)."""
    rows = ["| options | kernels | how / why |", "|---|---|---|"]
    for option in CODEGEN_OPTIONS:
        spellings = ", ".join(f"`{s}`" for s in option.spellings)
        rows.append(f"| {spellings} | {'honoured' if option.honoured else 'left to cc'} | "
                    f"{option.how} |")  # fmt: skip
    return "\n".join(rows)

"""What machine and floating-point semantics a `cc` command line asks for, as LLVM sees them.

A drop-in compiler must derive the target exactly as `cc` does from the same flags. Rather
than re-implementing gcc's option logic, `cc` itself is asked: its predefined macros for the
command line (`cc <flags> -dM -E`) name the ISA extensions (`__AVX2__`, `__FMA__`), the
optimization level (`__OPTIMIZE__`), position independence (`__PIC__`/`__PIE__`) and
fast-math (`__FAST_MATH__`). Only what the macros do not show (the `-O` digit, the FP
contraction mode, `-march=native`) is read from the flags, last one winning as in gcc.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm

#: gcc's predefined ISA macros and the LLVM x86 features they stand for
_X86_FEATURE_MACROS = {
    "__SSE3__": "sse3",
    "__SSSE3__": "ssse3",
    "__SSE4_1__": "sse4.1",
    "__SSE4_2__": "sse4.2",
    "__POPCNT__": "popcnt",
    "__AVX__": "avx",
    "__AVX2__": "avx2",
    "__FMA__": "fma",
    "__F16C__": "f16c",
    "__BMI__": "bmi",
    "__BMI2__": "bmi2",
    "__LZCNT__": "lzcnt",
    "__MOVBE__": "movbe",
    "__AVX512F__": "avx512f",
    "__AVX512VL__": "avx512vl",
    "__AVX512BW__": "avx512bw",
    "__AVX512DQ__": "avx512dq",
    "__AVX512CD__": "avx512cd",
}


class UnsupportedTarget(Exception):
    """The flags ask for a machine pycc-stencil does not generate code for (e.g. -m32)."""


@dataclass(frozen=True)
class TargetSpec:
    """An LLVM target machine and the code generation options of one `cc` command line."""

    triple: str
    cpu: str
    features: str
    opt_level: int  # 0..3 (-Os/-Oz count as 2, as in clang)
    size_level: int  # 0, 1 (-Os) or 2 (-Oz)
    pic: bool
    #: LLVM fast-math flags every floating-point operation may carry: () for strict C,
    #: ("contract",) where gcc would fuse multiply-adds, ("fast",) under -ffast-math
    fp_flags: tuple[str, ...]
    wrapv: bool = False  # -fwrapv: signed integer overflow wraps
    stack_protector: str = ""  # LLVM attribute for -fstack-protector{,-strong,-all}
    frame_pointer: bool = False  # -fno-omit-frame-pointer
    math_errno: bool = True  # sqrt of a negative sets errno (gcc's default, not -ffast-math)
    function_sections: bool = False  # -ffunction-sections: .text.<name> per function
    data_sections: bool = False  # -fdata-sections
    #: LLVM's loop / SLP vectorizer from -f[no-]tree-{,loop-,slp-}vectorize; None: the flags
    #: do not say, LLVM's pipeline default for the level applies
    loop_vectorize: bool | None = None
    slp_vectorize: bool | None = None

    @property
    def vectorizers(self) -> tuple[bool | None, bool | None]:
        """(loop, SLP) vectorizer settings, in the order `host_jit.optimize` takes them."""
        return self.loop_vectorize, self.slp_vectorize

    def target_machine(self) -> llvm.TargetMachine:
        """A new target machine (MCJIT takes ownership of the one it is given)."""
        from .host_jit import initialize

        initialize()
        target = llvm.Target.from_triple(self.triple)
        return target.create_target_machine(
            cpu=self.cpu,
            features=self.features,
            opt=self.opt_level,
            reloc="pic" if self.pic else "static",
            codemodel="default",
        )


def predefined_macros(cc: str, flags: Sequence[str]) -> dict[str, str]:
    """`cc`'s predefined macros for a C compilation with `flags`."""
    out = subprocess.run(
        [cc, *flags, "-x", "c", "-dM", "-E", "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    if out.returncode != 0:
        raise UnsupportedTarget(f"'{cc} -dM -E' failed: {out.stderr.strip()[:200]}")
    macros = {}
    for line in out.stdout.splitlines():
        _, name, value = (line.split(" ", 2) + [""])[:3]
        macros[name] = value
    return macros


#: options whose code only cc can produce (instrumentation, LTO bytecode, trapping overflow)
_CC_ONLY_OPTIONS = (
    "-fsanitize=",
    "-ftrapv",
    "--coverage",
    "-fprofile-arcs",
    "-ftest-coverage",
    "-fprofile-generate",
    "-fprofile-use",
    "-fprofile-instr",
    "-pg",
    "-finstrument-functions",
    "-flto",
    "-fcf-protection",
    "-save-temps",  # the temporaries would be those of the rewritten file
    # auxiliary outputs cc writes next to the object: they would describe (and, for the
    # .dwo of -gsplit-dwarf, be named after) the rewritten unit, without the kernels
    "-gsplit-dwarf",
    "-fstack-usage",
    "-frounding-math",
    "-fsignaling-nans",
    "-fpatchable-function-entry",
    "-fzero-call-used-regs",
    "-fharden-",
    "-fsplit-stack",
    "-fno-builtin",  # gcc then keeps calls as written; LLVM would still form memset/memcpy
    "-ffreestanding",
)
#: -m options that only select ISA extensions (which `cc -dM` reports) or tuning; every
#: other -m option (ABI, code model, x87 math, red zone, retpolines, ...) is cc's alone
_ISA_OPTION = re.compile(
    r"-m(arch|tune)=.*|-m64|-m(no-)?(sse\d?|sse\d_\d|ssse3|avx\w*|fma|fma4|f16c|bmi2?|lzcnt|"
    r"popcnt|movbe|aes|pclmul|sha|adx|rdrnd|rdseed|xsave\w*|fsgsbase|prfchw|clflushopt|clwb|"
    r"vaes|vpclmulqdq|gfni|mmx|cx16|sahf|abm|3dnow\w*|prefer-vector-width=\w+)"
)
_STACK_PROTECTORS = {
    "-fstack-protector": "ssp",
    "-fstack-protector-strong": "sspstrong",
    "-fstack-protector-all": "sspreq",
    "-fstack-protector-explicit": "",
    "-fno-stack-protector": "",
}


def target_from_flags(cc: str, flags: Sequence[str]) -> TargetSpec:
    """The target `cc flags` compiles for; raises `UnsupportedTarget` for foreign machines
    and for options whose effect on code only cc implements."""
    for flag in flags:
        if flag.startswith(_CC_ONLY_OPTIONS) and flag not in ("-fcf-protection=none", "-flto=no"):
            raise UnsupportedTarget(f"'{flag}' is implemented by cc only")
        if flag.startswith("-m") and not _ISA_OPTION.fullmatch(flag):
            raise UnsupportedTarget(f"'{flag}' is implemented by cc only")
    macros = predefined_macros(cc, flags)
    if "__SSE2_MATH__" not in macros:
        raise UnsupportedTarget("floating point without SSE2 (x87 or soft float) is cc's alone")
    if "__x86_64__" not in macros or "__LP64__" not in macros:
        raise UnsupportedTarget("only x86-64 (LP64) code generation is supported")
    host_triple = llvm.get_process_triple()
    if not host_triple.startswith("x86_64"):
        raise UnsupportedTarget(f"host triple {host_triple} is not x86-64")
    march = _last_value(flags, "-march=")
    if march == "native":
        cpu = llvm.get_host_cpu_name()
        features = llvm.get_host_cpu_features().flatten()
    else:
        cpu = "x86-64"
        features = ",".join(
            f"{'+' if macro in macros else '-'}{feature}"
            for macro, feature in _X86_FEATURE_MACROS.items()
        )
    opt_level, size_level = _optimization_level(flags, macros)
    return TargetSpec(
        triple=host_triple,
        cpu=cpu,
        features=features,
        opt_level=opt_level,
        size_level=size_level,
        pic="__PIC__" in macros or "__PIE__" in macros,
        fp_flags=_fp_flags(flags, macros, opt_level),
        wrapv=_last_of(flags, ("-fwrapv", "-fno-wrapv", "-fno-strict-overflow"))
        not in (
            None,
            "-fno-wrapv",
        ),
        math_errno="__NO_MATH_ERRNO__" not in macros,
        frame_pointer=_last_of(flags, ("-fomit-frame-pointer", "-fno-omit-frame-pointer"))
        == "-fno-omit-frame-pointer",
        function_sections=_last_of(flags, ("-ffunction-sections", "-fno-function-sections"))
        == "-ffunction-sections",
        data_sections=_last_of(flags, ("-fdata-sections", "-fno-data-sections"))
        == "-fdata-sections",
        stack_protector=_STACK_PROTECTORS.get(_last_of(flags, tuple(_STACK_PROTECTORS)) or "", ""),
        loop_vectorize=_vectorizer(flags, "loop"),
        slp_vectorize=_vectorizer(flags, "slp"),
    )


def _vectorizer(flags: Sequence[str], kind: str) -> bool | None:
    """gcc's switch for its `kind` ("loop" or "slp") vectorizer, last one winning;
    `-f[no-]tree-vectorize` sets both."""
    chosen = _last_of(flags, (f"-ftree-{kind}-vectorize", f"-fno-tree-{kind}-vectorize",
                              "-ftree-vectorize", "-fno-tree-vectorize"))  # fmt: skip
    return None if chosen is None else not chosen.startswith("-fno-")


def _last_of(flags: Sequence[str], choices: tuple[str, ...]) -> str | None:
    chosen = [f for f in flags if f in choices]
    return chosen[-1] if chosen else None


def _last_value(flags: Sequence[str], prefix: str) -> str | None:
    values = [f[len(prefix) :] for f in flags if f.startswith(prefix)]
    return values[-1] if values else None


def _optimization_level(flags: Sequence[str], macros: dict[str, str]) -> tuple[int, int]:
    if "__OPTIMIZE__" not in macros:
        return 0, 0
    level = [f[2:] for f in flags if f.startswith("-O")][-1:] or ["1"]
    digit = {"": "1", "g": "1", "fast": "3", "s": "2", "z": "2"}.get(level[0], level[0])
    size = {"s": 1, "z": 2}.get(level[0], 0)
    return min(int(digit), 3) if digit.isdigit() else 2, size


def _fp_flags(flags: Sequence[str], macros: dict[str, str], opt_level: int) -> tuple[str, ...]:
    """gcc fuses a*b+c across expressions (-ffp-contract=fast) in GNU C modes when optimizing;
    ISO modes (-std=c99 ...) and -ffp-contract=off/on keep every rounding (gcc has no `on`;
    clang's default `on`, within one expression, is kept as no contraction at all)."""
    if "__FAST_MATH__" in macros:
        return ("fast",)
    contract = _last_value(flags, "-ffp-contract=")
    if contract is None and "__clang__" in macros:
        contract = "on"  # clang fuses within one expression only: the IR cannot say that
    if contract is None:
        contract = "off" if "__STRICT_ANSI__" in macros else "fast"
    return ("contract",) if contract == "fast" and opt_level > 0 else ()

"""What machine and floating-point semantics a `cc` command line asks for, as LLVM sees them.

A drop-in compiler must derive the target exactly as `cc` does from the same flags. Rather
than re-implementing gcc's option logic, `cc` itself is asked: its predefined macros for the
command line (`cc <flags> -dM -E`) name the ISA extensions (`__AVX2__`, `__FMA__`), the
optimization level (`__OPTIMIZE__`), position independence (`__PIC__`/`__PIE__`) and
fast-math (`__FAST_MATH__`). Only what the macros do not show (the `-O` digit, the FP
contraction mode, `-march=native`) is read from the flags, last one winning as in gcc.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import llvmlite.binding as llvm

from .cc_options import refusal_of_flags
from .vector_width import with_preferred_width

#: the extensions LLVM's code generator can use, each reported by gcc as `__NAME__`
#: (`__SSE4_1__`); with -march=native they override the host's features, so `-mno-avx2`
#: and `-march=native` give LLVM what they give gcc
_LLVM_FEATURES = (
    "sse3 ssse3 sse4.1 sse4.2 sse4a popcnt lzcnt bmi bmi2 movbe f16c fma fma4 xop avx avx2 "
    "avx512f avx512vl avx512bw avx512dq avx512cd avx512ifma avx512vbmi avx512vbmi2 avx512vnni "
    "avx512bitalg avx512vpopcntdq avx512bf16 avx512fp16 avxvnni aes pclmul vaes vpclmulqdq gfni "
    "sha adx rdrnd rdseed crc32 prfchw clflushopt clwb fsgsbase xsave xsaveopt xsavec xsaves"
).split()
_FEATURE_MACROS = {f"__{f.upper().replace('.', '_')}__": f for f in _LLVM_FEATURES}


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
    #: LLVM fast-math flags every floating-point operation may carry: () unless -ffast-math
    fp_flags: tuple[str, ...]
    #: gcc would fuse multiply-adds here (-ffp-contract=fast, -fexpensive-optimizations, FMA
    #: in the ISA): `emit/cc_contraction` fuses the same ones
    contraction: bool = False
    #: gcc's vectorizer may fuse a complex multiply's products (`vfmaddsub`: gcc 12 with FMA in
    #: the ISA, a vectorizer on) whatever -ffp-contract says: `cc_contraction.paired_fusion`
    vector_fma: bool = False
    wrapv: bool = False  # -fwrapv: signed integer overflow wraps
    #: C's effective-type rules may be assumed (gcc: -fstrict-aliasing, on from -O2): the front
    #: end's `!tbaa` tags stay; without it they are dropped (`frontend/tbaa.strip_tbaa`)
    strict_aliasing: bool = True
    stack_protector: str = ""  # LLVM attribute for -fstack-protector{,-strong,-all}
    frame_pointer: bool = False  # -fno-omit-frame-pointer
    math_errno: bool = True  # sqrt of a negative sets errno (gcc's default, not -ffast-math)
    function_sections: bool = False  # -ffunction-sections: .text.<name> per function
    data_sections: bool = False  # -fdata-sections
    #: LLVM module flags for gcc's -fcf-protection (`cf-protection-branch`, `-return`)
    cf_protection: tuple[str, ...] = ()
    stack_clash: bool = False  # -fstack-clash-protection: probe each page of a large frame
    unwind_tables: bool = True  # gcc's x86-64 default; off with both -fno-*unwind-tables
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


def effective_options(cc: str, flags: Sequence[str]) -> dict[str, str]:
    """gcc's own view of its -f options for `flags`, with the defaults a distribution's spec
    file adds (Ubuntu's -fstack-clash-protection) and the ones the -O level sets: `cc -Q
    --help=common --help=optimizers`, option -> state (`[enabled]`, a value); {} from a cc
    that cannot say (clang)."""
    out = subprocess.run(
        [cc, *flags, "-Q", "--help=common", "--help=optimizers"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    states = (line.split() for line in out.stdout.splitlines())
    options = {p[0]: p[-1] for p in states if len(p) >= 2 and p[0].startswith("-f")}
    return options if out.returncode == 0 else {}


_AUTO_VAR_INIT = "-ftrivial-auto-var-init=[uninitialized|pattern|zero]"  # as --help prints it
#: gcc's macros for -fstack-protector{-all,-strong,} (also a distribution's default) and the
#: LLVM attributes for them; -fstack-protector-explicit protects only functions with an
#: attribute, which go to cc
_STACK_PROTECTOR_MACROS = {"__SSP_ALL__": "sspreq", "__SSP_STRONG__": "sspstrong", "__SSP__": "ssp"}
#: the bits of gcc's `__CET__` (-fcf-protection, also a distribution's default) and the LLVM
#: module flags that make LLVM emit `endbr64` and the object's x86 feature note for them
_CET_MODULE_FLAGS = {1: "cf-protection-branch", 2: "cf-protection-return"}


def target_from_flags(cc: str, flags: Sequence[str]) -> TargetSpec:
    """The target `cc flags` compiles for; raises `UnsupportedTarget` for foreign machines
    and for options whose effect on code only cc implements."""
    refusal = refusal_of_flags(flags)
    if refusal is not None:
        raise UnsupportedTarget(refusal)
    macros = predefined_macros(cc, flags)
    if "__SSE2_MATH__" not in macros:
        raise UnsupportedTarget("floating point without SSE2 (x87 or soft float) is cc's alone")
    if "__x86_64__" not in macros or "__LP64__" not in macros:
        raise UnsupportedTarget("only x86-64 (LP64) code generation is supported")
    host_triple = llvm.get_process_triple()
    if not host_triple.startswith("x86_64"):
        raise UnsupportedTarget(f"host triple {host_triple} is not x86-64")
    options = effective_options(cc, flags)
    initialization = options.get(_AUTO_VAR_INIT, "uninitialized")
    if initialization != "uninitialized":  # a spec file's default: no flag says it
        raise UnsupportedTarget(
            f"cc's default -ftrivial-auto-var-init={initialization} is cc's alone"
        )
    opt_level, size_level = _optimization_level(flags, macros)
    cpu, features = _cpu_and_features(flags, macros)
    return TargetSpec(
        triple=host_triple,
        cpu=cpu,
        features=features,
        opt_level=opt_level,
        size_level=size_level,
        pic="__PIC__" in macros or "__PIE__" in macros,
        fp_flags=("fast",) if "__FAST_MATH__" in macros else (),
        contraction="__FAST_MATH__" not in macros
        and _contracts(flags, macros)
        and _enabled("expensive-optimizations", options, flags, default=opt_level >= 2)
        and bool({"__FMA__", "__FMA4__", "__AVX512F__"} & set(macros)),
        vector_fma=_vector_fma(flags, macros, opt_level),
        wrapv=_last_of(flags, ("-fwrapv", "-fno-wrapv", "-fstrict-overflow")) == "-fwrapv",
        strict_aliasing=_enabled("strict-aliasing", options, flags, default=opt_level >= 2),
        math_errno="__NO_MATH_ERRNO__" not in macros,
        frame_pointer=not _enabled("omit-frame-pointer", options, flags, default=True),
        function_sections=_last_of(flags, ("-ffunction-sections", "-fno-function-sections"))
        == "-ffunction-sections",
        data_sections=_last_of(flags, ("-fdata-sections", "-fno-data-sections"))
        == "-fdata-sections",
        stack_protector=next((a for m, a in _STACK_PROTECTOR_MACROS.items() if m in macros), ""),
        cf_protection=tuple(
            flag for bit, flag in _CET_MODULE_FLAGS.items() if int(macros.get("__CET__", 0)) & bit
        ),
        stack_clash=_enabled("stack-clash-protection", options, flags, default=False),
        unwind_tables=_unwind_tables(flags),
        loop_vectorize=_vectorizer(flags, "loop"),
        slp_vectorize=_vectorizer(flags, "slp"),
    )


def _cpu_and_features(flags: Sequence[str], macros: dict[str, str]) -> tuple[str, str]:
    """LLVM's CPU and features: the baseline x86-64 plus the extensions cc's macros name, or
    under -march=native the host's, each extension gcc has a macro for set as cc's macros say
    (`-march=native -mno-avx2` has no AVX2), and the vector width `emit.vector_width` chooses."""
    chosen = {feature: macro in macros for macro, feature in _FEATURE_MACROS.items()}
    # gcc fuses multiply-adds with AVX-512F's instructions even without `__FMA__`
    # (`-mavx512f`, `-march=native -mno-fma`); LLVM has them only with +fma (-fma would
    # turn AVX-512F off)
    chosen["fma"] = chosen["fma"] or chosen["avx512f"]
    native = _last_value(flags, "-march=") == "native"
    host = llvm.get_host_cpu_features() if native else {}
    # LLVM applies features in order, and turning one off turns off every feature implying it:
    # what cc's macros lack goes last (`-avx` after the `+vaes` gcc keeps with -mno-avx, and
    # after the host's `+avx10.1-512`)
    ordered = [(name, on) for name, on in host.items() if name not in chosen]
    ordered += sorted(chosen.items(), key=lambda item: not item[1])
    cpu = llvm.get_host_cpu_name() if native else "x86-64"
    features = ",".join(f"{'+' if on else '-'}{name}" for name, on in ordered)
    return cpu, with_preferred_width(flags, features)


def _enabled(name: str, options: dict[str, str], flags: Sequence[str], default: bool) -> bool:
    """Is gcc's `-f<name>` in force: as `effective_options` says (spec-file defaults
    included), else the last of `-f<name>`/`-fno-<name>` in `flags`, else `default`."""
    if f"-f{name}" in options:
        return options[f"-f{name}"] == "[enabled]"
    chosen = _last_of(flags, (f"-f{name}", f"-fno-{name}"))
    return default if chosen is None else chosen == f"-f{name}"


def _unwind_tables(flags: Sequence[str]) -> bool:
    """gcc's x86-64 emits unwind tables unless -fno-asynchronous-unwind-tables, and then
    still with -funwind-tables or -fexceptions (last one of each pair winning)."""
    chosen = [_last_of(flags, (f"-f{name}", f"-fno-{name}")) for name in
              ("asynchronous-unwind-tables", "unwind-tables", "exceptions")]  # fmt: skip
    return chosen[0] != "-fno-asynchronous-unwind-tables" or any(
        c is not None and not c.startswith("-fno-") for c in chosen[1:]
    )


def _vector_fma(flags: Sequence[str], macros: dict[str, str], opt_level: int) -> bool:
    """Whether gcc (not clang) vectorizes with FMA in the ISA: its vectorizer then makes
    `vfmaddsub` of a difference and a sum of products stored side by side (a complex
    multiply), even under -ffp-contract=off or an ISO -std (gcc 12, found by a review: the
    vectorizer's complex-arithmetic patterns). gcc 12 vectorizes from -O2."""
    if "__clang__" in macros or not {"__FMA__", "__FMA4__", "__AVX512F__"} & set(macros):
        return False
    switches = [_vectorizer(flags, "loop"), _vectorizer(flags, "slp")]
    return True in switches or (opt_level >= 2 and switches != [False, False])


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


def _contracts(flags: Sequence[str], macros: dict[str, str]) -> bool:
    """gcc fuses a*b+c across expressions (-ffp-contract=fast) in GNU C modes; ISO modes
    (-std=c99 ...) and -ffp-contract=off/on keep every rounding (gcc has no `on`). clang's
    default `on`, within one expression, is kept as no contraction at all."""
    contract = _last_value(flags, "-ffp-contract=")
    if contract is None and "__clang__" in macros:
        contract = "on"  # clang fuses within one expression only: the IR cannot say that
    if contract is None:
        contract = "off" if "__STRICT_ANSI__" in macros else "fast"
    return contract == "fast"

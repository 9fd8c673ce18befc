"""Reading a `cc` command line the way gcc does: inputs, their languages, stage and output.

Only what the drop-in compiler must know is modelled; every other option is kept verbatim
and handed to `cc` unchanged, in its original order (order matters for `-l`, `-x`, `-I`).
"""

from __future__ import annotations

import os
import re
import shlex

from .emit.cc_machine import streaming_stores
from .emit.cc_threads import LINK_OPENMP, PARALLEL_FLAG, PARALLEL_OPTION, wants_threads
from .ir_passes.presets import locality_passes

#: gcc options whose value is the next argument (when not attached)
VALUE_OPTIONS = frozenset(
    "-o -I -D -U -include -imacros -iquote -isystem -idirafter -iprefix -iwithprefix "
    "-iwithprefixbefore -isysroot -imultilib -L -l -x -MF -MT -MQ -Xlinker -Xassembler "
    "-Xpreprocessor -u -T -z -e -aux-info -dumpbase -dumpdir -dumpbase-ext --param -B "
    "-specs --sysroot "
    # gcc's long spellings of preprocessor options (`--define-macro X=2` is `-D X=2`)
    "--define-macro --undefine-macro --include-directory --include-directory-after "
    "--include-prefix --include-with-prefix --include-with-prefix-after "
    "--include-with-prefix-before --include --imacros --assert".split()
)
#: options that change how C is read, not only preprocessed: the front end shares them with cc
_LANGUAGE_PREFIXES = (
    "-std=",
    "-ansi",
    "-funsigned-char",
    "-fsigned-char",
    "-fno-signed-char",
    "-fno-unsigned-char",
    "-fopenmp",
    "-fshort-enums",
    "-fno-short-enums",
    "-fshort-wchar",
    "-fno-short-wchar",
)
#: dependency-file options of a compile (`-MD`, `-MMD` and their modifiers)
_DEPENDENCY_FLAGS = frozenset("-MD -MMD -MP -MG".split())
_DEPENDENCY_VALUE_FLAGS = frozenset("-MF -MT -MQ".split())
#: options only the link step uses (clang warns about them in a compile step)
_LINK_OPTIONS = frozenset(
    "-shared -static -static-libgcc -pie -no-pie -rdynamic -nostdlib -nostartfiles "
    "-nodefaultlibs -s".split()
)
_LINK_VALUE_OPTIONS = frozenset("-l -L -Xlinker -T -u -z -e".split())
_LINK_PREFIXES = ("-l", "-L", "-Wl,")
#: options that make gcc print something and exit, or only preprocess / check syntax
_INFORMATION_OPTIONS = ("--version", "--help", "-dumpversion", "-dumpmachine", "-dumpspecs")
_C_SUFFIXES = (".c",)

PYCC_PREFIX = "-fpycc-"
#: pycc-stencil's own options, `-fpycc-NAME=VALUE`; any other `-fpycc-*` is an error, as an
#: unknown option is to gcc (a typo must not be silently ignored)
PYCC_OPTIONS = ("passes", "report", "row-align", "cache-size", "takeover")


class Input:
    """One input file (plain class, not a dataclass: every build step imports this module)."""

    def __init__(self, path: str, language: str | None, position: int):
        self.path = path
        self.language = language  # the `-x` in force, or None (from the suffix)
        self.position = position  # index in `CompilerCommand.args`

    @property
    def is_c(self) -> bool:
        if self.language is not None:
            return self.language == "c"
        return self.path.endswith(_C_SUFFIXES)


class CompilerCommand:
    """One `cc` command line, with pycc-stencil's own `-fpycc-*` options taken out."""

    def __init__(self, args: list[str]):
        self.args = args
        self.inputs: list[Input] = []
        self.output: str | None = None
        self.stage = "link"  # link | object | assembly | preprocess | syntax | information
        self.pycc_options: dict[str, str] = {}
        self.unknown_options: list[str] = []  # `-fpycc-*` options pycc-stencil does not have
        #: an option that takes a value ends the command (`... -I`): cc's error to report
        self.missing_value = False

    @property
    def c_inputs(self) -> list[Input]:
        return [i for i in self.inputs if i.is_c and i.path != "-"]

    def compile_flags(self) -> list[str]:
        """The options of a compile step: everything but inputs, `-o`, the stage flags, the
        dependency-file options (`dependency_flags`) and linker-only options, in order."""
        flags: list[str] = []
        skip_next = False
        input_positions = {i.position for i in self.inputs}
        for index, arg in enumerate(self.args):
            if skip_next:
                skip_next = False
                continue
            if index in input_positions or arg in ("-c", "-S") or arg in _DEPENDENCY_FLAGS:
                continue
            if arg == "-o" or arg in _DEPENDENCY_VALUE_FLAGS or arg in _LINK_VALUE_OPTIONS:
                skip_next = True
                continue
            if arg in _LINK_OPTIONS or arg.startswith(_LINK_PREFIXES):
                continue
            if arg.startswith(("-o", "-MF", "-MT", "-MQ")) and arg not in VALUE_OPTIONS:
                continue
            if arg in VALUE_OPTIONS:
                flags += [arg, self.args[index + 1]] if index + 1 < len(self.args) else [arg]
                skip_next = True
                continue
            flags.append(arg)
        return _without_language(flags)

    def dependency_flags(self) -> list[str]:
        """`-MD`, `-MMD`, `-MF f`, `-MT t`, `-MQ q`, `-MP`, `-MG`, in order."""
        flags: list[str] = []
        args = self.args
        for index, arg in enumerate(args):
            if arg in _DEPENDENCY_FLAGS:
                flags.append(arg)
            elif arg in _DEPENDENCY_VALUE_FLAGS and index + 1 < len(args):
                flags += [arg, args[index + 1]]
            elif arg.startswith(("-MF", "-MT", "-MQ")) and arg not in _DEPENDENCY_VALUE_FLAGS:
                flags += [arg[:3], arg[3:]]
        return flags

    def language_flags(self) -> list[str]:
        """The subset of `compile_flags` libclang needs to read cc's preprocessed unit as cc
        does: the standard, the signedness of `char`, enum sizes, OpenMP directives."""
        return [f for f in self.compile_flags() if f.startswith(_LANGUAGE_PREFIXES)]


def _without_language(flags: list[str]) -> list[str]:
    """Drop `-x LANG` pairs (each compile step names its own input's language)."""
    out: list[str] = []
    skip = False
    for arg in flags:
        if skip:
            skip = False
            continue
        if arg == "-x":
            skip = True
            continue
        if arg.startswith("-x") and len(arg) > 2:
            continue
        out.append(arg)
    return out


def expand_response_files(args: list[str], depth: int = 0) -> list[str]:
    """Replace `@file` by the arguments in the file (gcc's syntax: shell-like quoting);
    an `@file` that cannot be read stays a literal argument, as in gcc."""
    expanded: list[str] = []
    for arg in args:
        if arg.startswith("@") and len(arg) > 1 and depth < 16:
            try:
                with open(arg[1:], encoding="utf-8", errors="surrogateescape") as handle:
                    text = handle.read()
            except OSError:
                expanded.append(arg)
                continue
            expanded += expand_response_files(shlex.split(text), depth + 1)
        else:
            expanded.append(arg)
    return expanded


def parse_command(argv: list[str]) -> CompilerCommand:
    """Classify `argv` (response files already expanded)."""
    command = CompilerCommand(args=[])
    language: str | None = None
    stages = set()
    args = iter(argv)
    for arg in args:
        if arg == PARALLEL_FLAG:
            command.pycc_options[PARALLEL_OPTION] = "on"
            continue
        if arg.startswith(PYCC_PREFIX):
            key, equals, value = arg[len(PYCC_PREFIX) :].partition("=")
            if equals and key in PYCC_OPTIONS:
                command.pycc_options[key] = value
            else:
                command.unknown_options.append(arg)
            continue
        if arg in ("-Wpycc-fallback", "-Wno-pycc-fallback"):  # cc must not see them
            command.pycc_options["fallback-warnings"] = "off" if "-Wno-" in arg else "on"
            continue
        command.args.append(arg)
        if arg in VALUE_OPTIONS:
            value = next(args, None)
            if value is None:
                command.missing_value = True
                continue
            command.args.append(value)
            if arg == "-o":
                command.output = value
            elif arg == "-x":
                language = None if value == "none" else value
            continue
        if arg.startswith("-o") and len(arg) > 2:
            command.output = arg[2:]
        elif arg.startswith("-x") and len(arg) > 2:
            language = None if arg[2:] == "none" else arg[2:]
        elif arg in ("-c", "-S", "-E", "-fsyntax-only", "-M", "-MM"):
            stages.add(arg)
        elif arg.startswith(_INFORMATION_OPTIONS) or arg.startswith(("-print-", "--print")):
            stages.add("info")
        elif arg in ("-v", "-###") and not any(not a.startswith("-") for a in argv):
            stages.add("info")
        elif arg == "-" or not arg.startswith("-"):
            command.inputs.append(Input(arg, language, len(command.args) - 1))
    command.stage = _stage(stages)
    if command.stage == "link" and wants_threads(command.args, command.pycc_options):
        command.args += LINK_OPENMP  # link-only options: compile steps never see them
    return command


def _stage(stages: set[str]) -> str:
    if "info" in stages:
        return "information"
    if stages & {"-E", "-M", "-MM"}:
        return "preprocess"
    if "-fsyntax-only" in stages:
        return "syntax"
    if "-S" in stages:
        return "assembly"
    if "-c" in stages:
        return "object"
    return "link"


#: which kernels compiler mode compiles: those a pycc-stencil pass transformed (a function no
#: pass improves is compiled better, or as well, by cc), or every kernel it can lower
TAKEOVER_POLICIES = ("improved", "all")
TAKEOVER_VARIABLE = "PYCC_TAKEOVER"


def takeover_policy(options: dict[str, str]) -> str:
    """`-fpycc-takeover=` of a command's `options`, else `$PYCC_TAKEOVER`, else "improved"
    (the values are checked by the entry point)."""
    chosen = options.get("takeover") or os.environ.get(TAKEOVER_VARIABLE, "")
    return chosen.strip() or TAKEOVER_POLICIES[0]


#: why a file is cc's alone when no pass is asked for (a function no pycc-stencil pass
#: transforms is compiled as well or better by cc itself)
NOTHING_TO_IMPROVE = (
    "no pycc-stencil pass at this optimization level (-O3 or -fpycc-passes= choose some): "
    "nothing to improve"
)


def requested_passes(command: CompilerCommand) -> str:
    """`-fpycc-passes=`, else what the optimization level implies: `-O3` and `-Ofast` run the
    locality passes (iterated stencils and pipelines of loop nests whose data exceed the L2
    cache; under threads also single sweeps on the team; under -march=native on a core where
    streaming stores pay also sweeps whose output is not read again, beyond the L3; other
    nests are left alone), lower levels none."""
    chosen = command.pycc_options.get("passes")
    if chosen is not None:
        return chosen
    level = next((f for f in reversed(command.compile_flags()) if f.startswith("-O")), "-O0")
    if level not in ("-O3", "-Ofast"):
        return ""
    return locality_passes(asks_threads(command), streaming_stores(command.compile_flags()))


def transforms_sweeps(command: CompilerCommand) -> bool:
    """Do the -O3 passes of this command transform single sweeps too (on threads, or with
    streaming stores), so the scans must keep nests that only store into an array?"""
    return asks_threads(command) or streaming_stores(command.compile_flags())


def asks_threads(command: CompilerCommand) -> bool:
    """Do the flags ask for threads (`-fopenmp`, `-ftree-parallelize-loops=N`,
    `-fpycc-parallel`)? `-O3` then also runs single sweeps on them."""
    return wants_threads(command.compile_flags(), command.pycc_options)


#: why a file is cc's when only the locality passes run and `dropin_prescan` finds no nest
#: they could transform
NO_LOCALITY_NEST = (
    "no loop nest the -O3 locality passes could tile (they need two nested loops, or two "
    "nests, through which an array's data flow, without conditions, jumps or calls; under "
    "threads or streaming stores a nest that stores into an array): nothing to improve"
)


def only_locality_passes(command: CompilerCommand) -> bool:
    """The -O3 passes only, and only kernels they improve taken over: files without a nest
    they could transform are cc's before parsing."""
    return (
        requested_passes(command)
        == locality_passes(asks_threads(command), streaming_stores(command.compile_flags()))
        and takeover_policy(command.pycc_options) == "improved"
    )


def nothing_to_improve(command: CompilerCommand) -> bool:
    """No pass runs and only improved kernels are taken over: every function is cc's."""
    return not requested_passes(command) and takeover_policy(command.pycc_options) == "improved"


def gcc_quoted(text: str) -> str:
    """`text` quoted as gcc quotes in its diagnostics: ‘text’ where its locale's character
    set is UTF-8 (the first of LC_ALL, LC_CTYPE and LANG that is set names it), else 'text'."""
    name = next((os.environ[v] for v in ("LC_ALL", "LC_CTYPE", "LANG") if os.environ.get(v)), "")
    return f"‘{text}’" if re.search(r"utf-?8", name, re.IGNORECASE) else f"'{text}'"


def unrecognized_option_message(option: str) -> str:
    """gcc's diagnostic for an unknown option, with its "did you mean" for a near miss."""
    from difflib import get_close_matches  # only on this error path: the front door is light

    name, _, value = option[len(PYCC_PREFIX) :].partition("=")
    message = f"unrecognized command-line option {gcc_quoted(option)}"
    near = get_close_matches(name, PYCC_OPTIONS, n=1)
    return message + (
        f"; did you mean {gcc_quoted(PYCC_PREFIX + near[0] + '=' + value)}?" if near else ""
    )


def same_file(output: str, source: str) -> bool:
    """Does writing `output` replace `source`? gcc compares the paths with symbolic links
    resolved (a hard link is a new file once the output is replaced, as pycc-stencil and the
    assembler replace it)."""
    return os.path.realpath(output) == os.path.realpath(source)


def default_output(source: str, stage: str) -> str:
    """gcc's output name for `-c`/`-S` without `-o`: the input's base name in the cwd."""
    stem = os.path.splitext(os.path.basename(source))[0]
    return stem + (".s" if stage == "assembly" else ".o")


_LOOP_KEYWORD = re.compile(rb"\b(for|while|do)\b")


def may_have_kernels(text: bytes) -> bool:
    """A kernel has a loop; a file without `for`/`while`/`do` has nothing for pycc-stencil."""
    return _LOOP_KEYWORD.search(text) is not None

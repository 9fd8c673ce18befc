"""Files the -O3 locality passes cannot touch, told from their text before preprocessing.

`dropin_prescan` reads cc's preprocessed unit, and running `cc -E` for it is a third of what
compiler mode adds to a file it then leaves to cc. This reads instead the file and the user
headers it includes, found as cc finds them (the includer's directory for `"..."`, then the
`-iquote` directories, then the `-I` ones, then `-idirafter`; a header not found there is a
system header, whose functions are never kernels), every `#if` branch kept. Each use of a
macro they (or `-D`) define, or of the standard's function-like macros, may read and store
into any array: a macro may hide an access, a call or nothing at all (but a pure one, every
body of which is arithmetic on its parameters: `dropin_prescan.pure_macros`). Where the text
cannot answer, the answer is "may have" and the unit is preprocessed and scanned as before:
a macro whose body opens a loop for its use to close, an `#include` of a computed name, a file that
cannot be read, braces that do not balance across `#if` branches, a directive spelled in a
way only cc reads right, a preprocessor option or variable not modelled. A call of the C
library's or of a function the text declares and does not define (nor a macro's body may
define) refuses its function, as in cc's unit, unless a macro of that name may replace it or
the call is in a macro's argument (`assert` under -DNDEBUG drops it). A macro whose braces do
not close in order (PolyBench's instruments, `#define BEGIN {`) is read as its name alone
where each body of it only opens or only closes braces and makes such a call (wherever it
expands to one, its function is cc's); otherwise, or when it may be used where the scan
cannot see (a header of declarations, a pasted name), the answer is "may have". Conditional
code inside a function is read as possibly compiled out.
Known misses (each only costs a missed optimization; docs/build_cost.md): a looping macro
used inside a loop of the caller, an object-like macro that is an access, token-pasted loop
keywords, macros of system headers other than the standard's.
"""

from __future__ import annotations

import marshal
import os
import re
import zlib
from collections.abc import Iterable

from . import dropin_prescan
from .dropin_prescan import (
    CONDITIONAL_CODE,
    blank_comments_and_literals,
    loops_end_inside,
    pure_macros,
    unexpanded_may_have_locality_nest,
)
from .runtime.private_cache import compile_cache_dir, private_directory

#: C's function-like macros of <assert.h>, <math.h>, <stddef.h>, <stdint.h>, glibc's <sys/param.h>:
#: they expand to arithmetic, a condition or nothing (`assert` under -DNDEBUG)
STANDARD_MACROS = frozenset(
    b"assert offsetof isnan isinf isfinite isnormal signbit fpclassify isgreater "
    b"isgreaterequal isless islessequal islessgreater isunordered MIN MAX INT8_C INT16_C "
    b"INT32_C INT64_C UINT8_C UINT16_C UINT32_C UINT64_C INTMAX_C UINTMAX_C".split()
)
#: gcc's limit of nested `#include`s
_MAX_DEPTH = 200

# Directives are matched from their `#` (a pattern that starts with a literal is searched
# for fast): a `#define` or `#include` in a comment or a string is one more macro name or
# header read, never one less.
_INCLUDE = re.compile(rb"#[ \t]*(?:include|import)\b([^\n]*)")
_INCLUDE_NAME = re.compile(rb'\s*(?:"([^"\n]+)"|<([^>\n]+)>)')
_DEFINED = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)")
#: a `#define` whose line (comments included) has a loop keyword: what follows `define`
_LOOPING_DEFINITION = re.compile(rb"#[ \t]*define[ \t]+([^\n]*?\b(?:for|while)\b[^\n]*)")
#: `NAME`, `(parameters)` when it is a function-like macro, and the body
_DEFINITION = re.compile(rb"([A-Za-z_]\w*)(?:\(([^)]*)\))?(.*)", re.S)
_LOOPING = re.compile(rb"\b(?:for|while)\b")
_LOOP_KEYWORD = re.compile(rb"\b(?:for|while|do)\b")
#: what a macro's parameter is read as in its body: a macro (it may be any array)
MACRO_ARGUMENT = b"__pycc_macro_argument"
#: backslash-newline, with the blanks gcc allows between them
_SPLICE = re.compile(rb"\\[ \t]*\r?\n")
#: spellings of a directive only cc reads right: digraphs, trigraphs, a comment or a vertical
#: tab after `#` or its name, `#include_next`, a bare CR line end, a definition whose comment
#: runs on to the next line
_ODD_SPELLING = re.compile(
    rb"%:|\?\?[=/]|#[ \t]*(?:define|include|import)?/\*|include_next|#[ \t]*[\v\f]|\r(?!\n)"
    rb"|#[ \t]*define[^\n]*/\*(?:(?!\*/)[^\n])*\n"  # a comment continuing a definition's line
)
#: the name, parameters and body of every macro (those with a brace, `#define BEGIN {`,
#: `#define F(x) {`, `#define END/**/}`, may not nest)
_ANY_DEFINITION = re.compile(rb"#[ \t]*define[ \t]+([A-Za-z_]\w*)(?:\(([^)\n]*)\))?([^\n]*)")
#: a `##` and the tokens it pastes
_PASTE = re.compile(rb"(\w*)\s*##\s*(\w*)")
_WORD = re.compile(rb"[A-Za-z_]\w*")
_WORD_RUN = re.compile(rb"\w+")
#: a function's body after its parameter list (`f(void) {`, not `for (...;...) {`); in a
#: macro's body, the name of the function it may define
_FUNCTION_BODY = re.compile(rb"\)\s*\{")
_DEFINES_FUNCTION = re.compile(rb"([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{")
_CONDITIONAL = re.compile(rb"#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b")
#: in a function's conditional code, what may be in a branch cc drops: a condition, a jump,
#: `&&`, `||`, `?`, `asm` (neutral: gone), a call (read as a macro's: any access or nothing)
_MAYBE_DROPPED = re.compile(
    rb"\b(?:if|switch|goto|break|continue|return|asm|__asm__|__asm)\b|&&|\|\||\?|"
    rb"\b(?!(?:for|while|do|sizeof)\b)[A-Za-z_]\w*(?=\s*\()"
)
_EXTERN_C = re.compile(rb'extern\s*"C"\s*\{')
#: what the preprocessor reads that no option of the command line shows
_ENVIRONMENT = ("CPATH", "C_INCLUDE_PATH")
#: preprocessor options the scan does not model
_UNMODELLED = ("-Wp,", "-Xpreprocessor", "-iprefix", "-iwithprefix", "-I-")


class _Unsure(Exception):
    """The text cannot tell: preprocess the unit."""


#: options naming a directory or file for the preprocessor, and the list each adds to
_PATH_OPTIONS = {
    "-iquote": "quote",
    "-I": "bracket",
    "--include-directory": "bracket",
    "-idirafter": "after",
    "--include-directory-after": "after",
    "-include": "forced",
    "--include": "forced",
    "-imacros": "forced",
    "--imacros": "forced",
}
#: options whose value may be attached (`-Idir`, `-DN=4`, `--include-directory=dir`)
_ATTACHED = ("-iquote", "-idirafter", "-I", "-D", "--")


class _Preprocessor:
    """What a command line tells cc's preprocessor: the directories it searches, in its
    order, the files it reads first, and the macro names it defines (to which the
    `#define`s read are added)."""

    def __init__(self, flags: list[str]):
        self.quote: list[str] = []
        self.bracket: list[str] = []
        self.after: list[str] = []
        self.forced: list[str] = []  # -include, -imacros
        self.macros: set[bytes] = {*STANDARD_MACROS, MACRO_ARGUMENT}
        #: the bodies of each macro whose braces do not close in order (`#define BEGIN {`),
        #: each parameter a macro (`MACRO_ARGUMENT`)
        self.unnested: dict[bytes, list[bytes]] = {}
        #: the words of every macro's body, and the words each `##` of one pastes with a
        #: parameter's (its result holds them; none: any name)
        self.macro_words: set[bytes] = set()
        self.pastes: list[list[bytes]] = []
        #: the text of the headers read for their macros only (`_has_code_to_scan`)
        self.unscanned: list[bytes] = []
        #: every body each macro read may have (each parameter `MACRO_ARGUMENT`), and the
        #: names the command line defines (whose bodies `pure_macros` does not read)
        self.bodies: dict[bytes, list[bytes]] = {}
        self.command_line: set[bytes] = set()
        if any(os.environ.get(v) for v in _ENVIRONMENT) or any(
            f.startswith(_UNMODELLED) for f in flags
        ):
            raise _Unsure
        arguments = iter(flags)
        for flag in arguments:
            option, value = _option(flag)
            if option is None:
                continue
            if value is None:
                value = next(arguments, "")
            if option in ("-D", "--define-macro"):
                name, _, body = value.partition("=")
                if _LOOPING.search(body.encode()):
                    raise _Unsure
                self.macros.add(name.partition("(")[0].encode())
                self.command_line.add(name.partition("(")[0].encode())
            elif value != "-":  # `-I -` (`-I-`, gcc's old split, is unmodelled: unsure)
                getattr(self, _PATH_OPTIONS[option]).append(value)

    def find(self, name: str, quoted: bool, includer: str) -> str | None:
        """The user header `#include` names (None: a system header, or one cc reports)."""
        if os.path.isabs(name):
            return name if os.path.isfile(name) else None
        directories = [os.path.dirname(includer), *self.quote] if quoted else []
        for directory in [*directories, *self.bracket, *self.after]:
            path = os.path.join(directory, name)
            if os.path.isfile(path):
                return path
        return None


def _option(flag: str) -> tuple[str | None, str | None]:
    """The preprocessor option `flag` is, and its value when attached to it."""
    for option in (*_PATH_OPTIONS, "-D", "--define-macro"):
        if flag == option:
            return option, None
        if flag.startswith(option) and option.startswith(_ATTACHED):
            value = flag[len(option) :]
            if option.startswith("--"):
                if value.startswith("="):
                    return option, value[1:]
            else:
                return option, value
    return None, None


def may_have_locality_nest(source: str, flags: list[str], sweeps: bool = False) -> bool:
    """Could the unit cc makes of `source` with `flags` have a nest the -O3 locality passes
    transform (`sweeps`: also single sweeps, under threads)? False only when the text of the
    file and its user headers says no."""
    try:
        path = _Preprocessor(flags)  # (raises _Unsure)
        code: list[bytes] = []
        seen: set[str] = set()
        for forced in path.forced:
            if not os.path.isfile(forced):
                raise _Unsure
            _read(forced, path, code, seen, 0)
        _read(source, path, code, seen, 0)
    except (_Unsure, OSError, RecursionError):  # (includes nested past Python's limit)
        return True
    used = set(path.unnested) & path.macro_words  # through another macro (`#define B OPEN`)
    if path.unnested and (
        any(all(w in n for w in words) for words in path.pastes for n in path.unnested)
        or _mentioned(path.unnested, path.unscanned)
    ):
        return True  # a use the scan cannot see (a pasted name), or in code it does not read
    pure = pure_macros(path.bodies, MACRO_ARGUMENT, frozenset(path.command_line))
    words = {n: frozenset(_WORD.findall(b"\n".join(b))) for n, b in path.bodies.items()}
    return unexpanded_may_have_locality_nest(
        b"\n".join(code),
        frozenset(path.macros),
        sweeps,
        path.unnested,
        frozenset(used),
        pure,
        words,
    )


def _mentioned(names: Iterable[bytes], texts: list[bytes]) -> bool:
    """Does one of `texts` have one of `names` as a word?"""
    word = re.compile(rb"\b(?:" + b"|".join(map(re.escape, names)) + rb")\b")
    return any(word.search(text) for text in texts)


def _read(
    file: str,
    path: _Preprocessor,
    code: list[bytes],
    seen: set[str],
    depth: int,
    in_body: bool = False,
) -> None:
    """Append the code of `file` to `code`, each user header it includes in its place (once,
    as its include guard would have it, unless included inside braces), and gather the names
    its `#define`s give. The main file and a header included inside braces are code even
    without braces or loops of their own."""
    if depth > _MAX_DEPTH:
        raise _Unsure
    identity = _identity(file)
    seen.add(identity)
    facts = _facts(file) if depth == 0 else _stored_facts(file, identity)
    if facts is None:
        raise _Unsure
    unnested, bodies, words, pastes, macros, has_code, text, pieces, looping = facts
    for name, body in unnested:
        path.unnested.setdefault(name, []).append(body)
    for name, body in bodies:
        path.bodies.setdefault(name, []).append(body)
    path.macro_words.update(words)
    path.pastes += pastes
    path.macros.update(macros)
    scanned = depth == 0 or in_body or has_code
    if not scanned:
        path.unscanned.append(text)
    for piece, include, inside in pieces:
        if scanned:
            code.append(piece)
        if include is not None:
            _include(include, file, path, code, seen, depth, inside)
    code += (_macro_code(d, path.unnested) for d in looping)


#: what `_read` takes from one file's text alone: the bodies of its macros whose braces do not
#: nest and of all its macros (name, body with its parameters `MACRO_ARGUMENT`), the words of
#: its macros' bodies, the words each `##` pastes, the macro names it defines, whether it has
#: code to scan, its text when it has none, its code between its `#include`s (the piece
#: before each, the include's rest of line, whether it is inside braces) and its looping
#: definitions; None for a spelling only cc reads right
Facts = tuple | None


def _facts(file: str) -> Facts:
    with open(file, "rb") as handle:
        text = _SPLICE.sub(b"", handle.read())
    if _ODD_SPELLING.search(text):
        return None
    unnested, bodies, pastes = [], [], []
    words: set[bytes] = set()
    macros: set[bytes] = set()
    for name, parameters, body in _ANY_DEFINITION.findall(text):
        expanded = _with_arguments(parameters, body)
        if (b"{" in body or b"}" in body) and not _nested(body):
            unnested.append((name, expanded))
        bodies.append((name, expanded))
        words.update(_WORD.findall(body))
        if b"##" in body:  # (the patterns below are slow on a body without their anchor)
            pastes += _pasted_words(expanded)
        if b"{" in body:
            macros.update(_DEFINES_FUNCTION.findall(body))  # no call of it refuses
    text = _without_dropped_branches(text)
    macros.update(_DEFINED.findall(text))
    pieces, position = [], 0
    for include in _INCLUDE.finditer(text):
        if not _at_line_start(text, include.start()):
            continue  # in a comment or a string
        inside = _in_braces(text, include.start())
        pieces.append((text[position : include.start()], include.group(1), inside))
        name = _INCLUDE_NAME.match(include.group(1))  # what follows it stays (a `*/`)
        position = include.start(1) + name.end() if name is not None else include.end()
    pieces.append((text[position:], None, False))
    has_code = _has_code_to_scan(text)
    looping = _LOOPING_DEFINITION.findall(text)
    return (
        unnested,
        bodies,
        words,
        pastes,
        macros,
        has_code,
        None if has_code else text,
        pieces,
        looping,
    )


#: the facts of this many headers are kept (each in the slot its name hashes to: one whose
#: slot another header took is read again)
_FACT_SLOTS = 1024


def _stored_facts(file: str, identity: str) -> Facts:
    """`_facts(file)`, kept across processes in the user's private cache: every unit of a
    project reads the same headers. An entry is the header's name, size, inode, times of
    change (`st_ctime`, which no user sets: `touch -r`, `cp -p` or `tar x` give a new
    file an old `st_mtime`) and modification, and this scan's own code's, so an edited
    header or an upgraded scan reads again (were its text to change within one tick of the
    clock at the same size, the scan might miss a nest: only an optimization lost, cc
    compiles the file either way). A header
    included inside braces (`in_body`) needs its text, which `_facts` keeps only for
    headers without code: such a header's facts are the same either way."""
    directory = _facts_directory()
    if directory is None:
        return _facts(file)
    info = os.stat(file)
    stamp = [identity, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
    stamp += _scanner_stamp()
    entry = os.path.join(directory, f"{zlib.crc32(identity.encode()) % _FACT_SLOTS:03x}")
    try:
        with open(entry, "rb") as handle:
            stored, facts = marshal.loads(handle.read())
        if stored == stamp:
            return facts
    except (OSError, ValueError, EOFError, TypeError):
        pass  # no entry yet, another header's, or one from an older layout
    facts = _facts(file)
    temporary = f"{entry}.{os.getpid()}"
    try:
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps((stamp, facts)))
        os.replace(temporary, entry)
    except OSError:
        pass  # a cache that cannot be written is not used
    return facts


#: `_facts_directory`'s answer for each value of the variables it reads
_facts_directories: dict[tuple[str | None, ...], str | None] = {}
_CACHE_VARIABLES = ("PYCC_NO_CACHE", "PYCC_CACHE_DIR", "XDG_CACHE_HOME", "HOME")


def _facts_directory() -> str | None:
    """`text-scan/` in the compile cache's private directory (None: no cache)."""
    variables = tuple(os.environ.get(v) for v in _CACHE_VARIABLES)
    if variables not in _facts_directories:
        base = compile_cache_dir()
        directory = None if base is None else private_directory(os.path.join(base, "text-scan"))
        _facts_directories[variables] = directory
    return _facts_directories[variables]


def _scanner_stamp() -> list[int]:
    """The change times and sizes of the code that makes the facts."""
    stamp = []
    for module in (__file__, dropin_prescan.__file__):
        info = os.stat(module)
        stamp += [info.st_mtime_ns, info.st_size]
    return stamp


def _nested(body: bytes) -> bool:
    """Do the braces of a macro's body close in order (`{ ... }`, not `{`, `}` or `} else {`)?
    Then its uses change no block of the code around them; its loops are scanned where it is
    defined (`_macro_code`)."""
    depth = 0
    for brace in re.findall(rb"[{}]", blank_comments_and_literals(body)):
        depth += 1 if brace == b"{" else -1
        if depth < 0:
            return False
    return depth == 0


def _at_line_start(text: bytes, position: int) -> bool:
    """Only blanks before `position` on its line (a directive, not a comment's words)?"""
    return not text[text.rfind(b"\n", 0, position) + 1 : position].strip()


def _without_dropped_branches(text: bytes) -> bytes:
    """`text` with the conditional code inside functions (`#ifndef NDEBUG check(a);
    #endif`) neutralised: what may be compiled out (`_MAYBE_DROPPED`) cannot make a nest
    look outside the model. (Conditionals around whole functions are read as they are.)"""
    spans: list[tuple[int, int]] = []
    opened: list[int | None] = []  # where each open conditional's code starts, if in a body
    for match in _CONDITIONAL.finditer(text):
        if not _at_line_start(text, match.start()):
            continue
        line_end = text.find(b"\n", match.end())
        line_end = len(text) if line_end < 0 else line_end
        keyword = match.group(1)
        if keyword.startswith(b"if"):
            opened.append(line_end if _in_braces(text, match.start()) else None)
            continue
        start = opened.pop() if opened else None
        if start is not None:
            spans.append((start, match.start()))
        if keyword != b"endif":
            opened.append(start if start is None else line_end)
    pieces, position = [], 0
    for start, end in sorted(spans):
        start = max(start, position)
        pieces += [text[position:start], _neutralised(text[start:end])]
        position = max(position, end)
    return b"".join([*pieces, text[position:]])


def _in_braces(text: bytes, position: int) -> bool:
    """Is `position` inside braces other than `extern "C" {`'s (comments counted too)?"""
    opened = text.count(b"{", 0, position) - len(_EXTERN_C.findall(text, 0, position))
    return opened > text.count(b"}", 0, position)


def _neutralised(code: bytes) -> bytes:
    """Conditional code with its maybe-dropped tokens neutral, marked as conditional (what
    it stores may be gone too: `CONDITIONAL_CODE`); its directives unchanged."""
    return b"\n".join(
        line
        if line.lstrip().startswith(b"#")
        else CONDITIONAL_CODE + b" " + _MAYBE_DROPPED.sub(_neutral, line)
        for line in code.split(b"\n")
    )


_JUMPS = frozenset(b"if switch goto break continue return asm __asm__ __asm".split())


def _neutral(match: re.Match[bytes]) -> bytes:
    """A jump, `asm`, `&&`, `||` or `?` gone; a called name a macro's (`_MAYBE_DROPPED`)."""
    token = match.group()
    if token[:1].isalpha() or token[:1] == b"_":
        return b" " if token in _JUMPS else MACRO_ARGUMENT
    return b" "


def _has_code_to_scan(text: bytes) -> bool:
    """A header of declarations has none (it may still include one that has); one that
    defines a function has (what it defines no call of it refuses)."""
    if text.count(b"{") != text.count(b"}"):
        return True
    if not (_LOOP_KEYWORD.search(text) or _FUNCTION_BODY.search(text)):
        return False
    code = blank_comments_and_literals(text)
    return bool(_LOOP_KEYWORD.search(code) or _FUNCTION_BODY.search(code))


def _macro_code(definition: bytes, unnested: dict[bytes, list[bytes]]) -> bytes:
    """The code to scan of a macro whose body loops (as one block, each parameter a macro
    that may be any array: `SMOOTH(x, x)`); nothing when only its comments loop, or when its
    braces do not nest (its uses are judged as `unnested`'s)."""
    parts = _DEFINITION.match(definition)
    if parts is None:
        raise _Unsure  # cc reports it
    name, parameters, body = parts.groups()
    body = blank_comments_and_literals(body).replace(b"#", b" ")  # `#x`, `a##b`: not directives
    if not _LOOPING.search(body):
        return b""
    if not _nested(body):
        if name not in unnested:
            raise _Unsure
        return b""
    if not loops_end_inside(body):
        raise _Unsure
    return b"{" + _with_arguments(parameters, body) + b"}"


def _pasted_words(body: bytes) -> list[list[bytes]]:
    """For each `##` of a macro's `body` (its parameters `MACRO_ARGUMENT`), the words the
    name it makes surely holds: those it pastes but the parameters (none: it may be any)."""
    return [
        [w for w in match.groups() if w and w != MACRO_ARGUMENT] for match in _PASTE.finditer(body)
    ]


def _with_arguments(parameters: bytes | None, body: bytes) -> bytes:
    """A macro's body with each of its `parameters` (None: an object-like macro) replaced by
    `MACRO_ARGUMENT`: what its use passes may be any array, or a macro."""
    names = [p.strip().replace(b"...", b"__VA_ARGS__") for p in (parameters or b"").split(b",")]
    parameter_names = {n for n in names if n}
    if not parameter_names:
        return body
    # a run of word characters that is a parameter (one pattern for all macros: compiling
    # one per macro was a third of the scan of a header of many)
    return _WORD_RUN.sub(
        lambda m: MACRO_ARGUMENT if m.group() in parameter_names else m.group(), body
    )


def _include(
    rest: bytes,
    includer: str,
    path: _Preprocessor,
    code: list[bytes],
    seen: set[str],
    depth: int,
    in_body: bool,
) -> None:
    name = _INCLUDE_NAME.match(rest)
    if name is None:  # `#include HEADER`: only cc knows the name
        raise _Unsure
    quoted, bracketed = name.groups()
    header = path.find(os.fsdecode(quoted or bracketed), quoted is not None, includer)
    if header is not None and (in_body or _identity(header) not in seen):
        _read(header, path, code, seen, depth + 1, in_body)


def _identity(file: str) -> str:
    """One name per file (cheaper than `realpath`, which stats every directory of the path:
    a header reached through a symbolic link is only read twice)."""
    if ".." in file:  # `lnk/../h.h` is not `h.h` when `lnk` is a symbolic link
        return os.path.realpath(file)
    return os.path.normpath(os.path.abspath(file))

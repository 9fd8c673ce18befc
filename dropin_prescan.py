"""Files the `-O3` locality passes cannot touch, told from cc's preprocessed tokens alone.

`time-tile-large` and `fuse-tile-large` transform only SCoPs (`polyhedral/scop.py`): nests of
loops that test their condition first, whose bodies have no condition (`if`, `switch`, `&&`,
`||`, `?:` all branch in the front end's IR), no jump (`goto`, `break`, `continue`, `return`), no
call but arithmetic ones (the math functions LLVM has intrinsics for), no pointer that walks
(`p += stride`: an access base that is not loop-invariant) and no subscript loaded from memory
(`lut[a[i]]`); a SCoP is a run of the function's outermost loops, so nests inside another
loop never count. The passes need a time loop around sweeps (perfect nests, nothing stored
between them) whose arrays carry data from one iteration to the next (not gemm's `for i ...
C[i][j] += ...`, whose outer loop only picks a row), or two nests of one run, a later one
reading an array an earlier one writes (a pipeline), every nest between them pure (no array
updated in place or written twice): an array written and read, under its own name or one
assigned from it (`double *b = a`, a pointer swap). And the front end must lower the
function: no `goto`, no `asm`, no call of `setjmp` and the like (other functions the unit
only declares are called as another object's).

A file of which no function has such a nest is left to cc without loading libclang, LLVM or
isl: most files of a real project are (a codec, a library of utilities). The scan is
deliberately looser than the model (a typedef-named cast or an ill-formed bound pass it),
never stricter: every nest the passes transform passes the scan. Only the user's code is
read; functions of system headers are never kernels.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from .c_library import NONLOCAL_JUMPS

_TOKEN = re.compile(
    rb"[A-Za-z_]\w*|\d[\w.]*"  # the common tokens first: the scan reads whole units
    rb"|&&|\|\||<<=|>>=|->|\+\+|--|[-+*/%&|^<>=!]=|\S"
)
#: what the scan skips: comments (cc -E -C keeps them), strings and character constants
_NOT_CODE = re.compile(rb'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
#: a line of directive: a line marker, `#pragma`, `#define` (-dD, -g3)
_DIRECTIVE = re.compile(rb"^[ \t]*#[^\n]*", re.M)
_TO_LINE_END = re.compile(rb"#[^\n]*")
_LINE_MARKER = re.compile(rb"^#\s*(?:line\s+)?\d+\s*(\"(?:\\.|[^\"\\])*\")?([ \d]*)$")
_LOOPS = frozenset((b"for", b"while", b"do"))
#: tokens that put a nest outside the polyhedral model (`?:` branches too, in its header also)
_NOT_AFFINE = frozenset(
    (b"if", b"switch", b"goto", b"break", b"continue", b"return", b"&&", b"||", b"?")
)
#: words a `(` follows that are not calls
_NOT_CALLS = frozenset(
    b"if for while switch return sizeof _Alignof __alignof__ alignof typeof __typeof__ "
    b"__typeof __attribute__ __asm__ asm __extension__ _Generic __builtin_offsetof _Pragma "
    b"int char short long float double void signed unsigned _Bool const volatile restrict "
    b"__restrict struct union enum _Alignas alignas _Atomic _Static_assert static_assert".split()
)
#: calls the front end lowers to arithmetic (LLVM intrinsics), with their float/long double forms
_ARITHMETIC_CALL = re.compile(
    rb"(?:__builtin_\w+|(?:sqrt|fabs|floor|ceil|trunc|round|rint|nearbyint|fma|fmin|fmax|"
    rb"copysign)[fl]?|abs|labs|llabs)$"
)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*$")
#: operators that store into their left operand (`==`, `<=`, ... compare)
_ASSIGN = frozenset(b"= += -= *= /= %= &= |= ^= <<= >>=".split())
#: a pointer that moves: `p++`, `--p`, `p += n`, `p -= n`
_STEP = frozenset((b"++", b"--", b"+=", b"-="))
_INCREMENT = frozenset((b"++", b"--"))
#: tokens after which a `*` begins a statement (a store through a pointer, not a product)
_STATEMENT_START = frozenset((b";", b"{", b"}", b")"))
#: the first word of a counter's declaration that makes it unsigned: the model needs loop tests
#: to be signed comparisons (C's and <stdint.h>'s names: a header cannot redefine them)
_UNSIGNED = frozenset(
    b"unsigned size_t uint8_t uint16_t uint32_t uint64_t uintptr_t uintmax_t _Bool".split()
)


def has_locality_nest(preprocessed: bytes, sweeps: bool = False) -> bool:
    """Could a function of this preprocessed unit have a nest the locality passes transform?
    With `sweeps` (a build with threads, whose `-O3` runs `parallel-sweep-large` too), any
    nest that stores into an array may be one."""
    tokens = _without_once_loops(_tokens(_user_code(preprocessed)))
    try:
        return next(_lowerable_bodies(tokens, sweeps), None) is not None
    except RecursionError:  # nested deeper than the front end lowers (its recursion limit)
        return False
    except (KeyError, IndexError):  # ill-formed code (cc reports it): may have one
        return True


def unexpanded_may_have_locality_nest(
    code: bytes,
    macros: frozenset[bytes],
    sweeps: bool = False,
    unnested: Mapping[bytes, list[bytes]] | None = None,
    used_by_macros: frozenset[bytes] = frozenset(),
    pure: frozenset[bytes] = frozenset(),
    words: Mapping[bytes, frozenset[bytes]] | None = None,
) -> bool:
    """The same question of code before preprocessing (its directives are skipped), in which
    each use of a name in `macros` may read and store into any array, and is no branch: a
    macro may hide an access or a call, never a loop (`dropin_textscan` makes sure). When
    its braces do not balance (an `#if` with a brace in each branch) the answer is yes.
    `unnested`: the bodies of macros whose braces do not close in order (PolyBench's
    `polybench_start_instruments` opens a loop `polybench_stop_instruments` closes), of
    which those in `used_by_macros` are used by other macros. A use is read as the name
    alone when every such body only opens braces or only closes them (not `} else {`) and
    calls a function that refuses its user (`_calls`): wherever the use expands to one, its
    function is cc's. Otherwise the answer is yes. A use of a macro of `pure` (`pure_macros`)
    reads and stores only what its arguments do. `words`: the words of each macro's bodies,
    by which a use may call a function of the unit (`#define SWEEP sweep`: `SWEEP(n, a)`)."""
    # once comments and literals are blanks, a `#` begins a directive that runs to the line's end
    tokens = _TOKEN.findall(_TO_LINE_END.sub(b"", blank_comments_and_literals(code)))
    if tokens.count(b"{") != tokens.count(b"}"):
        return True
    try:
        tokens = _without_once_loops(tokens)
        if not _unnested_uses_refused(tokens, macros, unnested or {}, used_by_macros):
            return True
        bodies = _lowerable_bodies(tokens, sweeps, macros, pure, words or {})
        return next(bodies, None) is not None
    except RecursionError:  # nested deeper than the front end lowers (its recursion limit)
        return False
    except (KeyError, IndexError):  # ill-formed code (cc reports it): may have one
        return True


def locality_candidates(preprocessed: bytes, sweeps: bool = False) -> set[str] | None:
    """The functions of the unit that may have such a nest (the only ones the front end need
    lower at -O3), or None when the name of one of them cannot be told."""
    tokens = _without_once_loops(_tokens(_user_code(preprocessed)))
    names: set[bytes] = set()
    try:
        for start, _ in _lowerable_bodies(tokens, sweeps):
            name = _function_name(tokens, start)
            if name is None:
                return None
            names.add(name)
        # and the functions they call, which the passes inline
        scope, work = _FileScope(tokens), list(names)
        while work:
            body = scope.functions.get(work.pop())
            called = (scope.calls(*body) if body else set()) - names
            names |= called
            work += called
        return {name.decode() for name in names}
    except RecursionError:  # nested deeper than the front end lowers (its recursion limit)
        return set()
    except (KeyError, IndexError):  # ill-formed code (cc reports it): lower them all
        return None


#: tokens no pure macro's body has: stores, subscripts, members, blocks, pastes, conditions,
#: statements
_IMPURE = frozenset(
    b"= += -= *= /= %= &= |= ^= <<= >>= ++ -- [ ] { } ; -> . # ? : && || "
    b"if else switch for while do return goto break continue asm __asm__ __asm".split()
)
#: tokens after which a `*` or `&` is a product or a bitwise and (else a dereference or an
#: address)
_OPERAND_ENDS = frozenset((b")", b"]"))


def pure_macros(
    bodies: Mapping[bytes, list[bytes]], parameter: bytes, unknown: frozenset[bytes]
) -> frozenset[bytes]:
    """The macros of `bodies` (each with every body it may have, its parameters spelled
    `parameter`) whose use reads and stores memory only as its arguments do: every body is
    arithmetic on parameters, numbers and names (no store, subscript, member, dereference,
    address, block, paste or condition) and calls only arithmetic functions or such macros;
    a name it uses that is a macro is such a macro too. Macros of `unknown` (defined where
    the scan cannot read their bodies: the command line) are not."""
    needs: dict[bytes, set[bytes]] = {}
    for name, texts in bodies.items():
        each = [_macros_needed(_tokens(text), parameter, bodies) for text in texts]
        if name not in unknown and None not in each:
            needs[name] = set().union(*each)
    pure = set(needs)
    while True:
        impure = {name for name in pure if not needs[name] <= pure}
        if not impure:
            return frozenset(pure)
        pure -= impure


def _macros_needed(
    tokens: list[bytes], parameter: bytes, bodies: Mapping[bytes, list[bytes]]
) -> set[bytes] | None:
    """The names a macro's body (`tokens`) is pure only if they are pure macros (the macros
    it uses, the functions it calls), or None if it is not."""
    needed = set()
    for index, token in enumerate(tokens):
        if token in _IMPURE:
            return None
        called = tokens[index + 1 : index + 2] == [b"("] and _IDENTIFIER.match(token)
        if token in (b"*", b"&"):
            before = tokens[index - 1] if index else b""
            if not (before in _OPERAND_ENDS or _IDENTIFIER.match(before) or before[:1].isdigit()):
                return None
        elif token == parameter:
            if called:
                return None  # calls what its use passes
        elif token in bodies or (
            called and not (token in _NOT_CALLS or _ARITHMETIC_CALL.match(token))
        ):
            needed.add(token)  # (a function's call: no pure macro)
    return needed


def loops_end_inside(code: bytes) -> bool:
    """Does every loop of `code` (a macro's body) end inside it, its brackets balanced? A
    macro that opens a loop for its use to close (`FOR(i, n) a[i] = 0;`) hides a nest from
    a scan of unexpanded code."""
    tokens = _tokens(code)
    if any(tokens.count(o) != tokens.count(c) for c, o in _OPENING.items()):
        return False
    for index, token in enumerate(tokens):
        if token not in (b"for", b"while"):
            continue
        if tokens[index + 1 : index + 2] != [b"("]:
            return False  # `#define pfor for`: the loop is its use's
        if token == b"while" and _closes_do(tokens, index - 1):
            continue
        header_end = _closing(tokens, index + 1)
        if header_end + 1 >= len(tokens):
            return False
        if tokens[_statement_end(tokens, header_end + 1)] not in (b";", b"}"):
            return False
    return True


def _closes_do(tokens: list[bytes], index: int) -> bool:
    """Is `tokens[index]` the `}` of a `do { } while (...)`?"""
    if index <= 0 or tokens[index] != b"}":
        return False
    opening = _opening(tokens, index)
    return opening > 0 and tokens[opening - 1] == b"do"


def _candidate_bodies(
    tokens: list[bytes],
    macros: frozenset[bytes] = frozenset(),
    sweeps: bool = False,
    pure: frozenset[bytes] = frozenset(),
    file_scope: _FileScope | None = None,
) -> Iterator[tuple[int, int]]:
    """(first, last) token of each top-level brace block with a candidate nest."""
    end = 0
    file_scope = _FileScope(tokens, macros) if file_scope is None else file_scope
    for start, token in enumerate(tokens):
        if start < end or token != b"{":
            continue
        end = _closing(tokens, start)
        body = _Body(tokens, start, end, macros, sweeps, file_scope, pure)
        if _has_candidate(tokens, start, end, body):
            touched = _literal_bytes(tokens, start, end, body)
            if touched is None or touched > TINY_NEST_BYTES:
                yield start, end


#: statements the front end refuses a function for (`frontend/statements.py`)
_REFUSED_STATEMENTS = frozenset((b"goto", b"asm", b"__asm__", b"__asm"))


def _lowerable_bodies(
    tokens: list[bytes],
    sweeps: bool,
    macros: frozenset[bytes] = frozenset(),
    pure: frozenset[bytes] = frozenset(),
    words: Mapping[bytes, frozenset[bytes]] | None = None,
) -> Iterator[tuple[int, int]]:
    """The candidate bodies but those the front end refuses whole: a `goto` or `asm`
    statement, a call of `setjmp` or the like. Before preprocessing, a name in `macros` may be
    anything, and a definition in a branch cc drops still counts as one."""
    refusing: frozenset[bytes] | None = None
    file_scope = _FileScope(tokens, macros, words or {})
    for start, end in _candidate_bodies(tokens, macros, sweeps, pure, file_scope):
        if refusing is None:
            refusing = _refusing_functions(tokens) - macros
        body = tokens[start + 1 : end]
        if (
            (_REFUSED_STATEMENTS - macros).isdisjoint(body)
            and not _calls(body, refusing, macros)
            and not _calls_through_locals(body, file_scope, macros)
        ):
            yield start, end


#: words before a name assigned to that do not declare it (`return x = 1;`)
_NOT_DECLARING = frozenset(b"return else do case goto sizeof".split())


def _calls_through_locals(
    body: list[bytes], file_scope: _FileScope, macros: frozenset[bytes]
) -> bool:
    """Does `body` call through a pointer it declares with an initializer (`const Fn f =
    pick(kind); f(x);`), in that declaration's block, after it? The front end refuses such
    a call, and the function with it. (A name the file scope or a macro also gives may be a
    function where it is called; so may a system header's, outside the block: `{ double exp
    = 2; } exp(x);`.)"""
    calls = {k for k, name in enumerate(body[:-1]) if body[k + 1] == b"("}
    for k, name in enumerate(body[1:-1], 1):
        if body[k + 1] != b"=" or not _IDENTIFIER.match(name) or name in macros:
            continue
        before = body[k - 1]
        declarator = (
            _IDENTIFIER.match(before) and before not in _NOT_DECLARING
            or before == b"*" and k > 1 and (_IDENTIFIER.match(body[k - 2]) or body[k - 2] == b"*")
        )  # fmt: skip
        if not declarator or name in file_scope:
            continue
        scope_end = _block_end(body, k)
        if any(body[c] == name for c in calls if k < c < scope_end):
            return True
    return False


def _do_test(tokens: list[bytes], do: int) -> list[bytes]:
    """The tokens of the test of the `do` loop at `do` (empty when it has none in sight)."""
    test = _statement_end(tokens, do + 1) + 1
    if tokens[test : test + 2] != [b"while", b"("]:
        return []
    return tokens[test + 2 : _closing(tokens, test + 1)]


def _block_end(tokens: list[bytes], index: int) -> int:
    """The index of the `}` that closes the innermost block around `index` (the length of
    `tokens` when none does)."""
    depth = 0
    for k in range(index - 1, -1, -1):
        if tokens[k] == b"}":
            depth += 1
        elif tokens[k] == b"{":
            if depth == 0:
                return _closing(tokens, k)
            depth -= 1
    return len(tokens)


def _calls(tokens: list[bytes], functions: frozenset[bytes], macros: frozenset[bytes]) -> bool:
    """Do `tokens` call one of `functions` outside the arguments of a use of `macros` (which
    may drop them: `assert(ready())` under -DNDEBUG)?"""
    index = 0
    while index < len(tokens) - 1:
        name, following = tokens[index], tokens[index + 1]
        if following == b"(" and name in functions:
            return True
        index = _closing(tokens, index + 1) if following == b"(" and name in macros else index + 1
    return False


def _unnested_uses_refused(
    tokens: list[bytes],
    macros: frozenset[bytes],
    unnested: Mapping[bytes, list[bytes]],
    used_by_macros: frozenset[bytes],
) -> bool:
    """Does every body of each macro of `unnested` the code or `used_by_macros` uses open or
    close braces only, and call a function that refuses its user?"""
    used = unnested.keys() & (set(tokens) | used_by_macros)
    if not used:
        return True
    refusing = _refusing_functions(tokens) - macros
    for name in used:
        for body in unnested[name]:
            body_tokens = _tokens(blank_comments_and_literals(body))
            unmatched = _unmatched_braces(body_tokens)
            if len(unmatched) != 1 or not _calls(body_tokens, refusing, macros):
                return False
    return True


def _unmatched_braces(tokens: list[bytes]) -> set[bytes]:
    """The kinds of brace (`{`, `}`) left once the pairs of `tokens` are matched."""
    opened, unmatched = 0, set()
    for token in tokens:
        if token == b"{":
            opened += 1
        elif token == b"}":
            if opened:
                opened -= 1
            else:
                unmatched.add(b"}")
    return unmatched | ({b"{"} if opened else set())


def _refusing_functions(tokens: list[bytes]) -> frozenset[bytes]:
    """The functions whose call makes the front end refuse its caller (setjmp and the like)
    that the unit does not define (none when a definition's name cannot be told). Calls of
    other functions the unit only declares are calls into another object."""
    defined: set[bytes] = set()
    depth = 0
    for index, token in enumerate(tokens):
        if token == b"{":
            if depth == 0 and index > 0 and tokens[index - 1] in (b")", b";"):
                name = _function_name(tokens, index)  # (after `;`: a K&R definition)
                if name is None:
                    return frozenset()
                defined.add(name)
            depth += 1
        elif token == b"}":
            depth -= 1
    return _NONLOCAL_JUMPS - defined


_NONLOCAL_JUMPS = frozenset(name.encode() for name in NONLOCAL_JUMPS)


#: words after a declarator's parameter list, before the body
_AFTER_DECLARATOR = frozenset((b"__attribute__", b"__asm__", b"asm", b"__asm"))


def _function_name(tokens: list[bytes], body: int) -> bytes | None:
    """The name declared by the definition whose body starts at `body`: the identifier
    before its parameter list (after K&R parameter declarations, before attributes; inside
    a parenthesized declarator, `double (*f(int n))[8]`)."""
    if body > 0 and tokens[body - 1] == b";":  # K&R: `f(a, b) int a; double (*b)[8]; {`
        return _identifier_list_owner(tokens, body)
    return _declarator_name(tokens, body - 1, -1)


def _declarator_name(tokens: list[bytes], end: int, stop: int) -> bytes | None:
    """The identifier before the last parameter list in `tokens(stop..end]`."""
    index = end
    while index > stop:
        if tokens[index] != b")":
            index -= 1
            continue
        opening = _opening(tokens, index)
        if tokens[opening + 1 : opening + 2] in ([b"*"], [b"("]):  # `(*f(...))`: a declarator
            return _declarator_name(tokens, index - 1, opening)
        name = tokens[opening - 1] if opening > 0 else b""
        if name not in _AFTER_DECLARATOR:
            return name if _IDENTIFIER.match(name) and name not in _NOT_CALLS else None
        index = opening - 2
    return None


def _identifier_list_owner(tokens: list[bytes], body: int) -> bytes | None:
    """The name before the nearest `(a, b, c)` (a K&R identifier list) before `body`."""
    index = body - 1
    while index > 0 and tokens[index] != b"}":
        if tokens[index] == b")":
            opening = _opening(tokens, index)
            inside = tokens[opening + 1 : index]
            if all(_IDENTIFIER.match(t) or t == b"," for t in inside):
                name = tokens[opening - 1] if opening > 0 else b""
                return name if _IDENTIFIER.match(name) and name not in _NOT_CALLS else None
            index = opening
        index -= 1
    return None


_OPENING = {b")": b"(", b"}": b"{", b"]": b"["}


def _opening(tokens: list[bytes], closing: int) -> int:
    """The index of the bracket that the one at `closing` closes."""
    depth, index = 0, closing
    steps = {tokens[closing]: 1, _OPENING[tokens[closing]]: -1}
    while index >= 0:
        depth += steps.get(tokens[index], 0)
        if depth == 0:
            return index
        index -= 1
    return 0


def _user_code(preprocessed: bytes) -> bytes:
    """The unit without system headers' lines and without line markers and directives."""
    kept: list[bytes] = []
    system = False
    position = 0
    for directive in _DIRECTIVE.finditer(preprocessed):
        if not system:
            kept.append(preprocessed[position : directive.start()])
        marker = _LINE_MARKER.match(directive.group().strip())
        if marker is not None and marker.group(1) is not None:
            system = b"3" in marker.group(2).split()
        position = directive.end()
    if not system:
        kept.append(preprocessed[position:])
    return b"\n".join(kept)


def _tokens(code: bytes) -> list[bytes]:
    return _TOKEN.findall(blank_comments_and_literals(code))


#: the condition of a `do ... while (0)`: a literal zero, in parentheses or not
_ZERO = re.compile(rb"^0[uUlL]*$")


def _without_once_loops(tokens: list[bytes]) -> list[bytes]:
    """`tokens` with each `do S while (0);` read as `S;`. The front end lowers it to a loop
    that tests its condition last, which `ir_passes/core/rotation.py` never rewrites (it
    has no counter): a nest holding one is outside the model, and so are the nests inside
    one (not the function's outermost). Once a call is inlined, `fold_constant_branches`
    takes its back edge away and it is no loop at all: the same code as `S;`, the looser
    of the two readings. (A `break` or `continue` of `S` stays a jump either way.)"""
    dropped: set[int] = set()
    for index, token in enumerate(tokens):
        if token != b"do":
            continue
        test = _statement_end(tokens, index + 1) + 1
        if tokens[test : test + 2] != [b"while", b"("]:
            continue
        closing = _closing(tokens, test + 1)
        inside = [t for t in tokens[test + 2 : closing] if t not in (b"(", b")")]
        if len(inside) == 1 and _ZERO.match(inside[0]):
            dropped |= {index, *range(test, closing + 1)}
    kept, position = [], 0
    for index in sorted(dropped):
        kept += tokens[position:index]
        position = index + 1
    return kept + tokens[position:] if dropped else tokens


def blank_comments_and_literals(code: bytes) -> bytes:
    """`code` with each comment, string and character constant one space."""
    return _NOT_CODE.sub(b" ", code)


def _closing(tokens: list[bytes], start: int) -> int:
    """The index of the bracket closing the one at `start` (the last token if unbalanced)."""
    opening = tokens[start]
    closing = {b"{": b"}", b"(": b")", b"[": b"]"}[opening]
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index] == opening:
            depth += 1
        elif tokens[index] == closing:
            depth -= 1
            if depth == 0:
                return index
    return len(tokens) - 1


def _statement_end(tokens: list[bytes], start: int) -> int:
    """The last token of the statement that begins at `start`."""
    if start >= len(tokens):
        return len(tokens) - 1
    token = tokens[start]
    if token == b"{":
        return _closing(tokens, start)
    if token in (b"for", b"while", b"if", b"switch") and tokens[start + 1 : start + 2] == [b"("]:
        end = _statement_end(tokens, _closing(tokens, start + 1) + 1)
        if token == b"if" and tokens[end + 1 : end + 2] == [b"else"]:
            end = _statement_end(tokens, end + 2)
        return end
    if token == b"do":
        body_end = _statement_end(tokens, start + 1)
        if tokens[body_end + 2 : body_end + 3] == [b"("]:  # `while (`
            return _closing(tokens, body_end + 2) + 1
        return body_end
    depth = 0
    for index in range(start, len(tokens)):
        if tokens[index] in (b"(", b"["):
            depth += 1
        elif tokens[index] in (b")", b"]"):
            depth -= 1
        elif tokens[index] == b";" and depth <= 0:
            return index
    return len(tokens) - 1


#: the name of an array a nest reads or writes through a pointer it dereferences (`*p`): any
_ANY_ARRAY = b"*"
#: the token `dropin_textscan` puts where a function's code is conditional (`#ifdef ...`):
#: what is stored there may be compiled out, so its body's shape refutes nothing (not C: it
#: neither calls, nor declares, nor ends a statement)
CONDITIONAL_CODE = b"@"

#: Flow = (arrays written, arrays read) of a nest, by alias class (`_aliases`)
Flow = tuple[set[bytes], set[bytes]]


class _Stage:
    """A nest of the run a SCoP may hold, for the pipeline test: its flow, and whether it
    surely belongs to that run (not in a branch of an `if`). (No `typing.NamedTuple`: the
    front door imports this module, and `typing` costs it 3 ms.)"""

    __slots__ = ("written", "read", "sure")

    def __init__(self, written: set[bytes], read: set[bytes], sure: bool = True):
        self.written, self.read, self.sure = written, read, sure

    def unsure(self) -> _Stage:
        return _Stage(self.written, self.read, False)


def _has_candidate(
    tokens: list[bytes],
    start: int,
    end: int,
    body: _Body,
    earlier: list[_Stage | None] | None = None,
) -> bool:
    """Does `tokens[start..end]` (a function body) have a top-level nest the model may accept
    that time tiling may transform (`_may_be_iterated`), or two nests of one run, a later one
    reading what an earlier one writes, that fusion may take (`_may_feed`)? Only top-level
    nests count: a SCoP is a run of the function's outermost loops (`polyhedral.scop.
    extract_scops`), so the nests inside a loop the model refuses are never transformed.
    Nests in the two branches of an `if` are no pipeline (one of them runs)."""
    earlier = [] if earlier is None else earlier
    index = start
    while index <= end:
        token = tokens[index]
        if token == b"if" and tokens[index + 1 : index + 2] == [b"("]:
            then_start = _closing(tokens, index + 1) + 1
            then_end = _statement_end(tokens, then_start)
            branches = [(then_start, then_end)]
            if tokens[then_end + 1 : then_end + 2] == [b"else"]:
                branches.append((then_end + 2, _statement_end(tokens, then_end + 2)))
            # a branch's nests may or may not share a run with the nests around the `if`
            unsure = [s if s is None else s.unsure() for s in earlier]
            after = list(unsure)
            for first, last in branches:
                stages = list(unsure)
                if _has_candidate(tokens, first, last, body, stages):
                    return True
                after += [s.unsure() for s in stages[len(unsure) :] if s is not None]
            earlier[:] = after
            index = branches[-1][1] + 1
            continue
        if token not in _LOOPS:
            index += 1
            continue
        nest_end = _statement_end(tokens, index)
        if not _affine_nest(tokens, index, nest_end, body):
            earlier.append(None)  # a nest outside the model ends the run a SCoP may hold
            # a loop whose body may leave it on the first pass (`for (;;) { ...; break; }`)
            # is no loop in the IR: its nests may be the function's outermost
            body_end = _statement_end(tokens, index + 1) if tokens[index] == b"do" else nest_end
            if (_leaves_at_its_end(tokens, index, body_end) or body.conditional) and _has_candidate(
                tokens, index + 1, body_end, body
            ):
                return True
            index = nest_end + 1
            continue
        written, read = _flow(tokens, index, nest_end, body)
        if body.sweeps and written:
            return True
        if _may_be_iterated(tokens, index, nest_end, body, (written, read)):
            return True
        if _may_feed(earlier, written, read, body):
            return True
        earlier.append(_Stage(written, read))
        index = nest_end + 1
    return False


#: statements that leave a loop
_EXITS = frozenset((b"break", b"return", b"goto"))


def _leaves_at_its_end(tokens: list[bytes], loop: int, body_end: int) -> bool:
    """Does the body of the loop at `loop` end with a `break`, `return` or `goto` (then it
    may run once: no loop in the IR)?"""
    last = _opening(tokens, body_end) if tokens[body_end] == b"}" else body_end
    statements = list(_statements(tokens, last, body_end)) if tokens[last] == b"{" else []
    return bool(statements) and tokens[statements[-1][0]] in _EXITS


def _may_be_iterated(tokens: list[bytes], start: int, end: int, body: _Body, flow: Flow) -> bool:
    """May `time-tile` take the nest at `tokens[start..end]`? It needs a time loop whose body
    is sweeps (perfect nests: `time_tile.sweeps_of`) and whose iterations carry data
    through an array (`time_tile.iterated_sweeps`). Told apart from gemm's or syrk's nests,
    whose outer loop only picks the row `C[i]` that the rest of the nest updates. (Nests
    that only write an array are left out: an image filter's outer loop carries nothing, a
    loop repeating a sweep, `for r ... c[i] = a[i] + b[i]`, is a benchmark's.)"""
    written, read = flow
    loops = _loops_in(tokens, start, end) + body.unit_loops(start, end)
    if loops < 2 or not _meets(written, read):
        return False
    if body.conditional or tokens[start + 1 : start + 2] != [b"("]:
        return True  # code that may be compiled out, or a header a macro makes
    return _sweeps_may_be_perfect(tokens, start, body) and _outer_may_carry(
        tokens, start, end, body, flow
    )


def _loops_in(tokens: list[bytes], start: int, end: int) -> int:
    """How many loops `tokens[start..end]` holds (the `while` that ends a `do` is no other)."""
    loops = sum(1 for t in tokens[start : end + 1] if t in _LOOPS)
    for index in range(start, end + 1):
        if tokens[index] == b"do" and tokens[_statement_end(tokens, index + 1) + 1] == b"while":
            loops -= 1
    return loops


def _loop_body(tokens: list[bytes], loop: int) -> tuple[int, int]:
    """The first and last token of the body of the `for` or `while` loop at `loop`."""
    first = _closing(tokens, loop + 1) + 1
    return first, _statement_end(tokens, first)


def _statements(tokens: list[bytes], start: int, end: int) -> Iterator[tuple[int, int]]:
    """The statements of `tokens[start..end]` (one statement or a block), blocks opened."""
    if tokens[start] == b"{":
        index = start + 1
        while index < end:
            last = _statement_end(tokens, index)
            yield from _statements(tokens, index, last)
            index = last + 1
    elif tokens[start] != b";":
        yield start, end


def _sweeps_may_be_perfect(tokens: list[bytes], loop: int, body: _Body) -> bool:
    """Is the body of the loop at `loop` sweeps that may be perfect nests: loops, each a
    chain of single loops down to a body of statements, and between them nothing that
    stores (a store makes a statement of the model's; other statements may compile to no
    instruction at all: a pointer swap, a constant assigned)?"""
    sweeps = 0
    for first, last in _statements(tokens, *_loop_body(tokens, loop)):
        if body.calls_unit_function(tokens, first + 1) or body.may_call_loops(tokens, first + 1):
            sweeps += 1  # inlined: its loops may be sweeps, its statements compile to none
        elif tokens[first] in _LOOPS:
            sweeps += 1
            if tokens[first + 1 : first + 2] != [b"("]:
                continue  # a header a macro makes: any shape
            if not _chain_may_be_perfect(tokens, first, body):
                return False
        elif _flow(tokens, first - 1, last, body)[0]:
            return False
    return sweeps > 0


def _chain_may_be_perfect(tokens: list[bytes], loop: int, body: _Body) -> bool:
    """Is the loop at `loop` a chain of single loops down to a body without loops, with no
    store beside an inner loop?"""
    inner = list(_statements(tokens, *_loop_body(tokens, loop)))
    loops = [first for first, _ in inner if tokens[first] in _LOOPS]
    if not loops:
        return True
    stores = any(_flow(tokens, first - 1, last, body)[0] for first, last in inner
                 if first != loops[0])  # fmt: skip
    if len(loops) > 1 or stores:
        return False
    if tokens[loops[0] + 1 : loops[0] + 2] != [b"("]:
        return True  # a header a macro makes: any shape below it
    return _chain_may_be_perfect(tokens, loops[0], body)


def _outer_may_carry(tokens: list[bytes], loop: int, end: int, body: _Body, flow: Flow) -> bool:
    """May the outer loop (at `loop`) of the nest carry data from one iteration to the next?
    Not when it is a `for` whose counter keeps its value through the body and every array
    the nest writes is, in all its accesses, subscripted by the bare counter in one
    dimension (`C[i][j]` for the outer `i`): then its iterations touch disjoint elements.
    Names the scan cannot follow (another name of the same pointer, a member, a macro, an
    access through a pointer, a store into a global) may carry."""
    written, read = flow
    if tokens[loop] != b"for":
        return True
    header_end = _closing(tokens, loop + 1)
    parts = _split(tokens[loop + 2 : header_end], b";")
    if len(parts) != 3 or not parts[1] or not _IDENTIFIER.match(parts[1][0]):
        return True
    counter = parts[1][0]
    if _step(parts[2], counter) is None or _ANY_ARRAY in written | read:
        return True
    if _assigns_other_than_arrays(tokens, header_end + 1, end, body, counter):
        return True
    return not all(
        name in _sure({name}, body) and _indexed_by(tokens, header_end, end, name, counter)
        for name in written
    )


def _assigns_other_than_arrays(
    tokens: list[bytes], start: int, end: int, body: _Body, counter: bytes
) -> bool:
    """Does `tokens[start..end]` store into the counter (or declare another one of its
    name), a member, a global or a macro? (A local scalar is a register in the front end's
    IR: a value carried in it puts the nest outside the model.)"""
    for index in range(start, end + 1):
        token = tokens[index]
        if not _IDENTIFIER.match(token):
            continue
        before, after = tokens[index - 1], tokens[index + 1] if index < end else b""
        if token == counter and _IDENTIFIER.match(before) and before != b"sizeof":
            return True  # a declaration of another variable of the counter's name
        if not (after in _ASSIGN or after in _STEP or before in _INCREMENT):
            continue
        if before in _MEMBER or token in body.macros or token == counter:
            return True
        if body.global_or_address_taken(token):
            return True
    return False


def _indexed_by(tokens: list[bytes], start: int, end: int, name: bytes, counter: bytes) -> bool:
    """Is every use of `name` in `tokens(start..end]` a subscript chain whose subscript in
    one dimension (the same in each) is `[counter]` alone?"""
    dimensions: set[int] | None = None
    for index in range(start + 1, end + 1):
        if tokens[index] != name or tokens[index - 1] in _MEMBER:
            continue
        if tokens[index - 1] in (b"&", b"(") or tokens[index + 1] != b"[":
            return False
        mine, opening, dimension = set(), index + 1, 0
        while opening <= end and tokens[opening] == b"[":
            closing = _closing(tokens, opening)
            if tokens[opening + 1 : closing] == [counter]:
                mine.add(dimension)
            opening, dimension = closing + 1, dimension + 1
        dimensions = mine if dimensions is None else dimensions & mine
        if not dimensions:
            return False
    return bool(dimensions)


def _may_feed(
    earlier: list[_Stage | None], written: set[bytes], read: set[bytes], body: _Body
) -> bool:
    """May `fuse-tile` take a run of nests that ends with this one (`written`, `read`)? It
    needs an earlier nest of the run whose writes this one reads, and every nest from that
    one to this one pure (`fuse_tile._impure`): no array written by two of them, none
    updated in place, none read before a later one writes it. Only conflicts between names
    the scan can follow refute it; None in `earlier` ends a run (a nest outside the model)."""
    if body.conditional:  # stores that may be compiled out refute nothing
        return any(s is not None and _meets(s.written, read) for s in earlier)
    later_written = _sure(written, body)
    if later_written & _sure(read, body):
        return False  # updated in place: no run with this nest is pure
    for position in range(len(earlier) - 1, -1, -1):
        stage = earlier[position]
        if stage is None:
            return False
        if not stage.sure:  # from here on the run is not known: any producer may be fused
            return any(s is not None and _meets(s.written, read) for s in earlier[: position + 1])
        mine_written, mine_read = _sure(stage.written, body), _sure(stage.read, body)
        if mine_written & (mine_read | later_written) or mine_read & later_written:
            return False
        if _meets(stage.written, read):
            return True
        later_written |= mine_written
    return False


def _sure(names: set[bytes], body: _Body) -> set[bytes]:
    """The names of `names` that are one array each: not any array, no member, no alias,
    none of a cast or an expression before a subscript (`((float *)p)[i]`, `(a + k)[i]`)."""
    return {
        n
        for n in names
        if n != _ANY_ARRAY and b"->" not in n and body.unaliased(n) and n not in body.in_parens
    }


#: a body whose loops all have literal bounds and touch at most this many bytes (each access
#: 16 bytes per run) is no candidate: the -large passes refuse a SCoP that touches no more
#: than `ir_passes.tiling.IN_CACHE_MIN_BYTES` (`polyhedral.codegen.constant_touched`)
TINY_NEST_BYTES = 4096
#: a literal bound: integer literals and the operators C folds them with
_LITERAL = re.compile(rb"^(?:\d+[uUlL]*|[-+*/()])$")


def _literal_bytes(
    tokens: list[bytes], start: int, end: int, body: _Body, in_loop: bool = False
) -> int | None:
    """At most the bytes the accesses (subscripts, dereferences) of `tokens[start..end]` touch,
    16 per access and run of its loops, when every loop there has literal bounds and no
    access inside one may hide in a macro (but a pure one) or in a function the passes
    inline; else None."""
    total, index = 0, start
    while index <= end:
        token = tokens[index]
        if token in (b"while", b"do"):
            return None
        if token == b"for" and tokens[index + 1 : index + 2] == [b"("]:
            header_end = _closing(tokens, index + 1)
            trips = _literal_trips(tokens[index + 2 : header_end])
            body_end = _statement_end(tokens, header_end + 1)
            inner = _literal_bytes(tokens, header_end + 1, body_end, body, True)
            if trips is None or inner is None:
                return None
            total += trips * inner
            index = body_end + 1
            continue
        if in_loop and (
            token in body.macros
            and token not in body.pure_macros
            or body.calls_unit_function(tokens, index)
            or body.macro_calls_unit(tokens, index)
        ):
            return None
        if token == b"[" and tokens[index - 1] != b"]" or _unary_star(tokens, index):
            total += 16
        index += 1
    return total


def _literal_trips(header: list[bytes]) -> int | None:
    """The trip count of `for (header)` when it is `[T] i = A; i < B; ++i` (or `<=`, `>`,
    `>=`, a step of `i += k`, `i--`, ...) with literal A, B and k; else None."""
    parts = _split(header, b";")
    if len(parts) != 3 or len(parts[1]) < 3:
        return None
    counter, test, *bound = parts[1]
    first = None
    for part in _split(parts[0], b","):
        if b"=" in part and part[part.index(b"=") - 1] == counter:
            first = _value(part[part.index(b"=") + 1 :])
    last, step = _value(bound), _step(parts[2], counter)
    if first is None or last is None or not step:
        return None
    spans = {b"<": last - first, b"<=": last - first + 1, b">": first - last,
             b">=": first - last + 1}  # fmt: skip
    if test not in spans or (step > 0) != (test in (b"<", b"<=")):
        return None
    return max(0, -(-spans[test] // abs(step)))


def _split(tokens: list[bytes], separator: bytes) -> list[list[bytes]]:
    """`tokens` split at `separator` outside brackets."""
    parts: list[list[bytes]] = [[]]
    depth = 0
    for token in tokens:
        depth += {b"(": 1, b"[": 1, b")": -1, b"]": -1}.get(token, 0)
        if token == separator and depth == 0:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def _step(tokens: list[bytes], counter: bytes) -> int | None:
    """+k or -k for `++i`, `i++`, `i += k`, `--i`, `i--`, `i -= k` (literal k)."""
    if tokens in ([b"++", counter], [counter, b"++"]):
        return 1
    if tokens in ([b"--", counter], [counter, b"--"]):
        return -1
    if len(tokens) == 3 and tokens[0] == counter and tokens[1] in (b"+=", b"-="):
        k = _value(tokens[2:])
        return None if k is None else (k if tokens[1] == b"+=" else -k)
    return None


def _value(tokens: list[bytes]) -> int | None:
    """The value of a literal integer expression (`16`, `16 + 4`, `2 * 8u`), else None."""
    if not tokens or not all(_LITERAL.match(t) for t in tokens):
        return None
    text = " ".join(t.rstrip(b"uUlL").decode() for t in tokens).replace("/", "//")
    try:
        return int(eval(text, {"__builtins__": {}}))  # noqa: S307 - digits and operators only
    except (SyntaxError, ZeroDivisionError):
        return None


def _meets(written: set[bytes], read: set[bytes]) -> bool:
    if _ANY_ARRAY in written:
        return bool(read)
    return _ANY_ARRAY in read and bool(written) or bool(written & read)


def _affine_nest(tokens: list[bytes], start: int, end: int, body: _Body) -> bool:
    """No token of the nest puts it outside the model (a `do` loop inside it tests its
    condition last: only the outermost is rewritten to test first, ir_passes/core/rotation.py;
    a `for` that declares an unsigned counter compares without sign; a pointer that walks is
    no invariant base; a subscript loaded from memory is no affine one; a macro may be an
    access, and its arguments may vanish: `assert(i > 0 && i < n)` under -DNDEBUG). A
    counter declared an integer is no pointer, even in `(a + i*n)[j]`."""
    previous = b""
    pointers: set[bytes] = set()
    stepped: set[bytes] = set()
    varying = _varying_names(tokens, start, end)
    skip_to = start
    for index, token in enumerate(tokens[start : end + 1], start):
        if index < skip_to:
            continue
        if _macro_call(tokens, index, body):
            skip_to = _closing(tokens, index) + 1
            previous = b")"
            continue
        if token in _NOT_AFFINE or token == b"do" and index != start:
            return False
        if token == b"do" and not _may_rotate(tokens, index, body.macros):
            return False
        if token == b"for" and tokens[index + 1 : index + 2] == [b"("]:
            if _counter_outside_model(tokens, index, body.macros):
                return False
        if token == b"(" and _IDENTIFIER.match(previous):
            if previous not in _NOT_CALLS and not _ARITHMETIC_CALL.match(previous):
                if not body.calls_unit_function(tokens, index):
                    return False
                if not body.inlines_affine(previous):
                    return False
                # inlined, the callee's accesses are based on what the call passes
                arguments = tokens[index + 1 : _closing(tokens, index)]
                pointers.update(t for t in arguments if _IDENTIFIER.match(t))
        elif token == b"[":
            if previous != b"]":
                pointers.update(_base(tokens, index)[0])
            if _loaded_subscript(tokens, index) or _member_of(tokens, index, varying):
                return False
        elif token in _STEP:
            stepped.add(previous)
            if token in _INCREMENT and index < end:
                stepped.add(tokens[index + 1])
        elif _IDENTIFIER.match(token) and _unary_star(tokens, index - 1):
            pointers.add(token)
        previous = token
    return not (pointers & stepped) - body.integers


def _may_rotate(tokens: list[bytes], do: int, macros: frozenset[bytes]) -> bool:
    """May `ir_passes/core/rotation.py` make the `do` loop at `do` test before its body? It
    rewrites only a counter stepped by +1 and tested `<` after its update (`do { ... } while
    (++t < T)`); a test a macro makes may be one. (`while (overflow > 0)` with `overflow -=
    2` is no such loop: outside the model.)"""
    test = _do_test(tokens, do)
    if not test or not macros.isdisjoint(test):
        return True
    end = _statement_end(tokens, do)
    for k in range(do + 1, end):
        name = tokens[k]
        if name not in test or not _IDENTIFIER.match(name):
            continue
        after, before = tokens[k + 1 : k + 3], tokens[k - 1]
        if after[:1] == [b"++"] or before == b"++" or after == [b"+=", b"1"]:
            return True
    return False


def _counter_outside_model(tokens: list[bytes], loop: int, macros: frozenset[bytes]) -> bool:
    """Is the counter of the `for` at `loop` one the model refuses: declared unsigned, or
    stepping by other than +1 (`i--`, `i += 2`, `i += stride`; a step a macro of `macros`
    writes may be +1), and read in the loop's body? (A counter that only counts is rewritten
    to count up by one: `ir_passes/core/counters.py`.)"""
    parts = _split(tokens[loop + 2 : _closing(tokens, loop + 1)], b";")
    if len(parts) != 3:
        return False
    unsigned = bool(parts[0]) and parts[0][0] in _UNSIGNED
    names = [t for t in parts[0] if _IDENTIFIER.match(t) and t not in _INTEGER_TYPES]
    if not names:
        return unsigned
    step = _step(parts[2], names[0])
    if step is None and parts[2][:2] in ([names[0], b"+="], [names[0], b"-="]):
        step = 0  # a step the code computes: the model wants a constant
    if (not unsigned and step in (None, 1)) or not macros.isdisjoint(parts[2]):
        return False
    first, last = _loop_body(tokens, loop)
    return names[0] in tokens[first : last + 1]


def _varying_names(tokens: list[bytes], start: int, end: int) -> set[bytes]:
    """The names the nest at `tokens[start..end]` assigns a value computed from one of its
    `for` counters (`mb = &info[n]`), or from such a name."""
    counters = set()
    for index in range(start, end):
        if tokens[index] == b"for" and tokens[index + 1] == b"(":
            test = _split(tokens[index + 2 : _closing(tokens, index + 1)], b";")[1:2]
            if test and test[0] and _IDENTIFIER.match(test[0][0]):
                counters.add(test[0][0])
    varying: set[bytes] = set()
    for index in range(start + 1, end):
        if tokens[index] == b"=" and _IDENTIFIER.match(tokens[index - 1]):
            value, depth = index + 1, 0
            while value <= end and not (depth == 0 and tokens[value] in (b";", b",")):
                depth += {b"(": 1, b"[": 1, b")": -1, b"]": -1}.get(tokens[value], 0)
                value += 1
            if not (counters | varying).isdisjoint(tokens[index + 1 : value]):
                varying.add(tokens[index - 1])
    return varying


def _member_of(tokens: list[bytes], opening: int, names: set[bytes]) -> bool:
    """Does the subscript opened at `opening` read a member through one of `names`
    (`p[mb->segment]`: a load at an address that changes from one iteration to the next)?"""
    closing = _closing(tokens, opening)
    return any(
        tokens[k] in names and tokens[k + 1] == b"->" for k in range(opening + 1, closing - 1)
    )


def _loaded_subscript(tokens: list[bytes], opening: int) -> bool:
    """Is the subscript opened at `opening` read from memory (`lut[a[i]]`, `a[*p]`)?"""
    closing = _closing(tokens, opening)
    inner = tokens[opening + 1 : closing]
    if b"sizeof" in inner:  # `a[sizeof b[0]]` is a constant
        return False
    return b"[" in inner or any(_unary_star(tokens, k) for k in range(opening + 1, closing))


def _unary_star(tokens: list[bytes], index: int) -> bool:
    """Is `tokens[index]` a `*` that dereferences (not a product, not a pointer declarator)?"""
    if index <= 0 or tokens[index] != b"*":
        return False
    before = tokens[index - 1]
    if before == b")":  # a product `(a) * b`, unless the `)` closes a loop's header
        opening = _opening(tokens, index - 1)
        return opening > 0 and tokens[opening - 1] in (b"for", b"while")
    if before in (b"]", b"*") or _IDENTIFIER.match(before) or before[:1].isdigit():
        return False  # a product, or a declarator (`double *p`, `int **q`)
    return True


def _flow(tokens: list[bytes], start: int, end: int, body: _Body) -> Flow:
    """The arrays (alias classes) the nest stores into (`a[i] = `, `a[i][j] += `, `++a[i]`,
    `(a)[i].x = `) and those it reads; `_ANY_ARRAY` for a dereferenced pointer, a macro
    subscripted, a macro called (but a pure one: `pure_macros`)."""
    written: set[bytes] = set()
    read: set[bytes] = set()
    for index in range(start + 1, end + 1):
        if tokens[index] == b"[" and tokens[index - 1] != b"]":
            names, first = _base(tokens, index)
            if b"sizeof" in tokens[first - 2 : first]:  # `sizeof b[0]`, `sizeof(b[0])`
                continue
            after = _chain_end(tokens, index, end) + 1
            operator = tokens[after] if after <= end else b""
            stored = operator in _ASSIGN or operator in _STEP or tokens[first - 1] in _INCREMENT
            arrays = {_ANY_ARRAY if name in body.macros else body.alias(name) for name in names}
            if stored:
                written |= arrays
            if not stored or operator != b"=":
                read |= arrays
        elif (
            _unary_star(tokens, index)
            and not _dereferenced_chain(tokens, index - 1)
            or (_macro_call(tokens, index, body) and tokens[index - 1] not in body.pure_macros)
            or body.calls_unit_function(tokens, index)
            or body.macro_calls_unit(tokens, index)
        ):
            written.add(_ANY_ARRAY)
            read.add(_ANY_ARRAY)
    return written, read


def _macro_call(tokens: list[bytes], index: int, body: _Body) -> bool:
    """Does the `(` at `index` call a macro?"""
    return tokens[index] == b"(" and tokens[index - 1] in body.macros


def _base(tokens: list[bytes], opening: int) -> tuple[list[bytes], int]:
    """The names of the pointer the subscript opened at `opening` indexes (`a[`, `(a)[`,
    `((double *)a)[`: every name in the parentheses) and the index of its first token."""
    before = opening - 1
    if tokens[before] != b")":
        if before >= 2 and tokens[before - 1] in _MEMBER:  # `s->m[`: the member of `s`
            return [_member(tokens, before)], before - 2
        return ([tokens[before]] if _IDENTIFIER.match(tokens[before]) else []), before
    first = _opening(tokens, before)
    if _dereferenced_chain(tokens, first):  # `(*p)[i]`, `(*s->m)[i]`: `p[0][i]`, `s->m[0][i]`
        return [_member(tokens, before - 1)], first
    return [t for t in tokens[first:before] if _IDENTIFIER.match(t)], first


def _dereferenced_chain(tokens: list[bytes], opening: int) -> bool:
    """Is the `(` at `opening` that of `(*name)[` or `(*s->m)[` (a pointer to an array
    subscripted: its `*` is part of the subscript's address, as `[0]` would be)?"""
    if tokens[opening : opening + 2] != [b"(", b"*"]:
        return False
    closing = _closing(tokens, opening)
    chain = tokens[opening + 2 : closing]
    return (
        tokens[closing + 1 : closing + 2] == [b"["]
        and len(chain) % 2 == 1
        and all(_IDENTIFIER.match(t) for t in chain[::2])
        and all(t in _MEMBER for t in chain[1::2])
    )


def _chain_end(tokens: list[bytes], index: int, end: int) -> int:
    """The last token of the postfix chain (`[..]`, `.m`, `->m`) that starts at `index`."""
    last = index - 1
    while index <= end:
        if tokens[index] == b"[":
            last = _closing(tokens, index)
        elif tokens[index] in (b".", b"->") and index < end:
            last = index + 1
        else:
            break
        index = last + 1
    return last


_MEMBER = frozenset((b"->", b"."))


def _member(tokens: list[bytes], index: int) -> bytes:
    """The name at `index`, as `s->m` when it is a member of the struct `s` (`s.m` alike):
    `a->buf` and `b->buf` are different arrays."""
    if index >= 2 and tokens[index - 1] in _MEMBER and _IDENTIFIER.match(tokens[index - 2]):
        return tokens[index - 2] + b"->" + tokens[index]
    return tokens[index]


class _FileScope:
    """The names a unit declares outside its functions' bodies (its globals, and more:
    types, functions, parameters) and the functions it defines, found when a nest first
    asks."""

    def __init__(
        self,
        tokens: list[bytes],
        macros: frozenset[bytes] = frozenset(),
        words: Mapping[bytes, frozenset[bytes]] | None = None,
    ):
        self._tokens, self._macros, self._words = tokens, macros, words or {}
        self._reached: dict[bytes, frozenset[bytes]] = {}
        self._names: frozenset[bytes] | None = None
        self._functions: dict[bytes, tuple[int, int]] | None = None
        self._affine: dict[bytes, bool] = {}
        self._static: frozenset[bytes] | None = None

    @property
    def functions(self) -> dict[bytes, tuple[int, int]]:
        """The first and last token of the body of each function the unit defines."""
        if self._functions is None:
            tokens, found, index = self._tokens, {}, 0
            while index < len(tokens):
                if tokens[index] != b"{":
                    index += 1
                    continue
                end = _closing(tokens, index)
                if index > 0 and tokens[index - 1] in (b")", b";", b"]"):
                    name = _function_name(tokens, index)  # (`]`: `double (*f(...))[8] {`)
                    if name is not None:
                        found[name] = (index, end)
                index = end + 1
            self._functions = found
        return self._functions

    @property
    def static(self) -> frozenset[bytes]:
        """The names a file-scope declaration with `static` declares as functions."""
        if self._static is None:
            tokens, names, depth, start = self._tokens, set(), 0, 0
            for index, token in enumerate(tokens):
                if token in (b"{", b"}"):
                    depth += 1 if token == b"{" else -1
                    start = index + 1
                elif depth == 0 and token == b";":
                    start = index + 1
                elif depth == 0 and token == b"(" and b"static" in tokens[start:index]:
                    names.add(tokens[index - 1])
            self._static = frozenset(names)
        return self._static

    def calls(self, start: int, end: int) -> set[bytes]:
        """The functions of the unit that `tokens[start..end]` calls."""
        tokens, functions = self._tokens, self.functions
        return {
            tokens[k] for k in range(start, end) if tokens[k + 1] == b"(" and tokens[k] in functions
        }

    def inlined_affine(self, name: bytes) -> bool:
        """May the body of the unit's function `name`, inlined, be in the model: no branch,
        no jump, one `return` at most and last, and calls only of arithmetic functions or of
        such functions (a recursive one stays a call)?"""
        if name not in self._affine:
            self._affine[name] = False  # until known: a call back to it is recursion
            self._affine[name] = self._body_affine(name)
        return self._affine[name]

    def _body_affine(self, name: bytes) -> bool:
        """(A macro's use in it is read as elsewhere: no branch; a `do` whose test a macro
        makes may be `do ... while (0)`, no loop.)"""
        start, end = self.functions[name]
        body = self._tokens[start + 1 : end]
        if not (_NOT_AFFINE - {b"return"}).isdisjoint(body) or any(
            token == b"do" and (test := _do_test(body, k)) and self._macros.isdisjoint(test)
            for k, token in enumerate(body)
        ):
            return False
        returns = [k for k, token in enumerate(body) if token == b"return"]
        if returns and (len(returns) > 1 or _statement_end(body, returns[0]) != len(body) - 1):
            return False
        for k, token in enumerate(body[:-1]):
            if body[k + 1] != b"(" or not _IDENTIFIER.match(token) or token in _NOT_CALLS:
                continue
            if token in self._macros:
                continue
            if _ARITHMETIC_CALL.match(token):
                continue
            if token not in self.functions or token not in self.static:
                return False  # stays a call
            if not self.inlined_affine(token):
                return False
        return True

    def reached(self, macro: bytes) -> frozenset[bytes]:
        """The `static` functions of the unit a use of `macro` may call: those its bodies
        name, or the bodies of the macros they name, and so on."""
        if macro not in self._reached:
            self._reached[macro] = frozenset()  # (a macro that names itself)
            words = self._words.get(macro, frozenset())
            found = set(words & self.functions.keys() & self.static)
            for word in words & self._words.keys():
                found |= self.reached(word)
            self._reached[macro] = frozenset(found)
        return self._reached[macro]

    def loops_in(self, name: bytes) -> bool:
        """Does the body of the unit's function `name` hold a loop?"""
        start, end = self.functions[name]
        return not _LOOPS.isdisjoint(self._tokens[start:end])

    def __contains__(self, name: bytes) -> bool:
        if self._names is None:
            depth, names = 0, set()
            for token in self._tokens:
                if token == b"{":
                    depth += 1
                elif token == b"}":
                    depth -= 1
                elif depth == 0:
                    names.add(token)
            self._names = frozenset(names)
        return name in self._names


class _Body:
    """What the scan knows of a function body: the names that are macros (unexpanded code
    only), whether a nest on its own that stores into an array counts (`sweeps`), its
    pointers' alias classes (`_aliases`), found when a nest first asks (most bodies of a unit
    have no nest the model may accept), and the unit's file-scope names."""

    def __init__(
        self,
        tokens: list[bytes],
        start: int,
        end: int,
        macros: frozenset[bytes],
        sweeps: bool = False,
        file_scope: _FileScope | None = None,
        pure_macros: frozenset[bytes] = frozenset(),
    ):
        self.macros, self.sweeps = macros, sweeps
        #: the macros of `macros` whose uses read and store only what their arguments do
        #: (`dropin_textscan.pure_macros`)
        self.pure_macros = pure_macros
        self._span = (tokens, start, end)
        self._classes: dict[bytes, bytes] | None = None
        self._file_scope = file_scope if file_scope is not None else _FileScope(tokens, macros)
        self._in_parens: frozenset[bytes] | None = None
        self._integers: frozenset[bytes] | None = None
        #: does the body hold conditional code (`CONDITIONAL_CODE`)?
        self.conditional = CONDITIONAL_CODE in tokens[start:end]

    def calls_unit_function(self, tokens: list[bytes], index: int) -> bool:
        """Does the `(` at `index` call a `static` function the unit defines (not a macro)?
        The passes inline it (`ir_passes/core/inlining.py`): it may read and store any
        array."""
        name = tokens[index - 1] if index > 0 else b""
        if tokens[index] != b"(" or name in self.macros or name not in self.functions:
            return False
        return name in self._file_scope.static

    @property
    def functions(self) -> dict[bytes, tuple[int, int]]:
        return self._file_scope.functions

    def inlines_affine(self, name: bytes) -> bool:
        """May the unit's function `name`, inlined, be in the model?"""
        return self._file_scope.inlined_affine(name)

    def unit_loops(self, start: int, end: int) -> int:
        """How many calls in `tokens[start..end]` are of the unit's functions with loops (a
        macro's, but a pure one's, may be one when a static function has loops)."""
        tokens = self._span[0]
        return sum(
            1
            for k in range(start, end)
            if self.calls_unit_function(tokens, k + 1)
            and self._file_scope.loops_in(tokens[k])
            or self.may_call_loops(tokens, k + 1)
        )

    def macro_calls_unit(self, tokens: list[bytes], index: int) -> frozenset[bytes]:
        """The static functions of the unit the macro whose use the `(` at `index` opens may
        call (`#define SWEEP sweep`): inlined, they may read and store any array."""
        if not _macro_call(tokens, index, self):
            return frozenset()
        return self._file_scope.reached(tokens[index - 1])

    def may_call_loops(self, tokens: list[bytes], index: int) -> bool:
        """Is the `(` at `index` a use of a macro that may call a static function of the
        unit with loops?"""
        return any(map(self._file_scope.loops_in, self.macro_calls_unit(tokens, index)))

    @property
    def integers(self) -> frozenset[bytes]:
        """The names the body declares of an integer type (`int i, j = 0, *p` declares `i`
        and `j`), found when a nest first asks."""
        if self._integers is None:
            self._integers = _integers(*self._span)
        return self._integers

    @property
    def in_parens(self) -> frozenset[bytes]:
        """The names of parenthesized expressions before a subscript (`((float *)p)[i]`)."""
        if self._in_parens is None:
            tokens, start, end = self._span
            names: set[bytes] = set()
            for index in range(start + 1, end):
                if tokens[index] == b"[" and tokens[index - 1] == b")":
                    names.update(_base(tokens, index)[0])
            self._in_parens = frozenset(names)
        return self._in_parens

    def alias(self, name: bytes) -> bytes:
        """The one name of `name`'s alias class."""
        if self._classes is None:
            self._classes = _aliases(*self._span)
        return self._classes.get(name, name)

    def unaliased(self, name: bytes) -> bool:
        """Is `name` the only name of its pointer (no assignment gives it another)?"""
        self.alias(name)
        return name not in self._classes  # type: ignore[operator]

    def global_or_address_taken(self, name: bytes) -> bool:
        """May a store into the plain name `name` be a store into memory: a global (a file-
        scope name, or any name once the body declares an `extern`), or a local whose address
        the body takes?"""
        tokens, start, end = self._span
        body = tokens[start : end + 1]
        if name in self._file_scope or b"extern" in body:
            return True
        return any(a == b"&" and b == name for a, b in zip(body, body[1:]))


#: type words that begin a declaration of integers (C's, and <stddef.h>'s and <stdint.h>'s
#: names: a header cannot redefine them)
_INTEGER_TYPES = frozenset(
    b"int long short char signed unsigned _Bool size_t ptrdiff_t int8_t int16_t int32_t "
    b"int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t".split()
)


def _integers(tokens: list[bytes], start: int, end: int) -> frozenset[bytes]:
    """The names declared in `tokens[start..end]` by declarations whose type is an integer
    type word, but those a `*` makes pointers: the declarators after the type words and
    after each top-level `,` up to the `;`."""
    names: set[bytes] = set()
    index = start
    while index < end:
        if tokens[index] not in _INTEGER_TYPES or tokens[index - 1] not in (b";", b"{", b"}", b"("):
            index += 1
            continue
        while index < end and tokens[index] in _INTEGER_TYPES:
            index += 1
        depth, declarator = 0, True
        while index < end and not (depth == 0 and tokens[index] in (b";", b")")):
            token = tokens[index]
            depth += {b"(": 1, b"[": 1, b"{": 1, b")": -1, b"]": -1, b"}": -1}.get(token, 0)
            if declarator and _IDENTIFIER.match(token):
                names.add(token)
            declarator = depth == 0 and token == b","
            index += 1
    return frozenset(names)


def _aliases(tokens: list[bytes], start: int, end: int) -> dict[bytes, bytes]:
    """Each name the body assigns a pointer to (`b = a`, `double *b = a + n`, `p = &a[k]`,
    `q = s->p`, a swap `t = a; a = b; b = t`) mapped to one name of its class: the same
    array under another name. An assignment that subscripts (`x = a[i]`) copies a value."""
    parent: dict[bytes, bytes] = {}

    def root(name: bytes) -> bytes:
        path = []
        while parent.get(name, name) != name:
            path.append(name)
            name = parent[name]
        for step in path:  # path compression: chains of assignments stay linear
            parent[step] = name
        return name

    for index in range(start + 1, end):
        if tokens[index] != b"=" or not _IDENTIFIER.match(tokens[index - 1]):
            continue
        value_end = index + 1
        depth = 0
        while value_end < end:
            token = tokens[value_end]
            depth += {b"(": 1, b")": -1}.get(token, 0)
            # the value of `a` in `a = b = c` is `b` (each `=` reads one: linear in a chain)
            if depth < 0 or (depth == 0 and token in (b";", b",", b"=")):
                break
            value_end += 1
        value = tokens[index + 1 : value_end]
        if b"[" in value and value[:1] != [b"&"]:
            continue
        target = root(_member(tokens, index - 1))
        for offset, name in enumerate(value, index + 1):
            if not _IDENTIFIER.match(name) or tokens[offset + 1] in _MEMBER:
                continue  # `s->p`, `s.p`: the pointer is `p` of `s`, not the struct `s`
            if root(_member(tokens, offset)) != target:
                parent[root(_member(tokens, offset))] = target
    return {name: root(name) for name in parent} | {root(n): root(n) for n in parent}

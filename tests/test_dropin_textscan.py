"""The scan of a file's text before preprocessing (`dropin_textscan`): at -O3 a file whose
text and user headers have no nest the locality passes could transform is handed to cc with
no `cc -E`; the answer must never be "no" where the preprocessed unit's scan says "yes"."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from pycc_stencil.dropin_prescan import has_locality_nest
from pycc_stencil.dropin_textscan import may_have_locality_nest
from test_compiler_mode import CC, PYCC, clean_env
from test_dropin_prescan import CORPUS, ITERATED
from test_dropin_speculative import logging_cc

#: one sweep: no array carries data, no candidate
SWEEP = "void sweep(int n, float *a, float *b) { for (int i = 0; i < n; i++) b[i] = a[i]; }\n"
TWO_LOOPS = "for (int i = 1; i < n; i++) for (int j = 1; j < n; j++)"
#: a branch whose `else` a macro (`{}`) spells
SELECT = "void pick(int n, float *a) {{ if (n) {{ a[0] = 1; {} a[0] = 2; }} }}\n"
#: a time loop a macro opens and another closes
STEPS = "#define BEGIN for (int t = 0; t < T; t++) {\n#define END }\n"
#: PolyBench's PAPI instruments: a loop over counters that one macro opens and another
#: closes, each calling functions declared and not defined (in another object)
COUNTER_MACROS = (
    "#define START start_counters(); for (int e = 0; next_counter(e); e++) {\n"
    "#define STOP stop_counter(e); }\n"
)
COUNTERS = (
    "extern void start_counters(void);\nextern int next_counter(int);\n"
    "extern void stop_counter(int);\n" + COUNTER_MACROS
)
#: ... the same functions defined in the file
DEFINED_COUNTERS = (
    "void start_counters(void) { }\nint next_counter(int e) { return e < 1; }\n"
    "void stop_counter(int e) { (void)e; }\n" + COUNTER_MACROS
)
#: a 1-D sweep, in a function whose time loop macros `{}` open and `{}` close
SMOOTH = "for (int i = 1; i < n - 1; i++) a[i] = (a[i-1] + a[i] + a[i+1]) / 3.0;"
LOOPED = "void k(int T, int n, double *a) {{\n {}\n " + SMOOTH + "\n {}\n}}\n"
#: instruments whose calls make the front end refuse their user (setjmp's)
JUMPS = (
    "int _setjmp(void *);\n#define START _setjmp(0); for (int e = 0; e < 4; e++) {\n"
    "#define STOP _setjmp(0); }\n"
)
#: a time loop opened and closed by macros that call a function declared, not defined
TICKING = "#define BEGIN tick(); for (int t = 0; t < T; t++) {\n#define END } tick();\n"
MAIN = "int main(void) { float a[8] = { 0 }, b[8]; START sweep(8, a, b); STOP return 0; }\n"
#: rows computed from another array's: no data carried, no candidate (`{}`: the value)
ROWS = "void f(int n, double a[n][n], double b[n][n]) {{" + TWO_LOOPS + " a[i][j] = {}; }}\n"


#: a static Jacobi sweep (`{}`: a statement between its loops), called by name `{}` in a
#: time loop
STATIC_SWEEP = (
    "static void sweep(int n, double *a, double *b) {{\n"
    " for (int i = 1; i < n - 1; i++) b[i] = (a[i-1] + a[i] + a[i+1]) / 3.0;\n {}\n"
    " for (int i = 1; i < n - 1; i++) a[i] = b[i]; }}\n"
    "void jacobi(int T, int n, double *a, double *b) {{\n"
    " for (int t = 0; t < T; t++) {}(n, a, b); }}\n"
)
#: a time loop of literal bounds over 14 points, a macro that calls out before it (`{}`: a
#: term of the sweep's)
TINY = (
    "void log_value(double);\n#define LOG(x) log_value(x)\n#define BIAS(b) ((b) << 3)\n"
    "#define SCALED(p, k) (p)[(k) * 100]\n"
    "void m(double *a) {{ LOG(a[0]); for (int t = 0; t < 2; t++)\n"
    " for (int i = 1; i < 15; i++) a[i] = a[i-1] + {}; }}\n"
)


def _scan(tmp_path: Path, files: dict[str, str], flags: tuple[str, ...] = ()) -> bool:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return may_have_locality_nest(str(tmp_path / "k.c"), [f.format(tmp_path) for f in flags])


@pytest.mark.parametrize(
    "files, flags, candidate",
    [
        ({"k.c": ITERATED}, (), True),
        ({"k.c": SWEEP}, (), False),
        # words in comments (also ending a directive's line) and strings are not code
        ({"k.c": "#define W 4 // for {\n/* for (;;) { */\n" + SWEEP}, (), False),
        # a user header's functions are the unit's: found beside the file, by -iquote, by -I
        ({"k.c": '#include "h.h"\n' + SWEEP, "h.h": ITERATED}, (), True),
        ({"k.c": '#include "h.h"\n' + SWEEP, "q/h.h": ITERATED}, ("-iquote{}/q",), True),
        ({"k.c": "#include <h.h>\n" + SWEEP, "i/h.h": ITERATED}, ("-I", "{}/i"), True),
        ({"k.c": '#include "i/g.h"\n', "i/g.h": '#include "h.h"\n', "i/h.h": ITERATED}, (),
         True),
        ({"k.c": SWEEP, "h.h": ITERATED}, ("-include", "{}/h.h"), True),
        # ... a system header's are not; one not found is cc's to report
        ({"k.c": "#include <h.h>\n" + SWEEP, "s/h.h": ITERATED}, ("-isystem", "{}/s"), False),
        ({"k.c": '#include "none.h"\n' + SWEEP}, (), False),
        # a macro may be an access: the nest's data may flow through it
        ({"k.c": "#define B a\nvoid f(int n, double a[n][n]) {" + TWO_LOOPS
          + " a[i][j] = B[i-1][j]; }"}, (), True),
        ({"k.c": "#define B(i, j) b[i][j]\nvoid f(int n, double a[n][n]) {" + TWO_LOOPS
          + " a[i][j] = B(i-1, j); }"}, (), True),
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS + " a[i][j] = B[i-1][j]; }"},
         ("-DB=a",), True),
        # ... but not a pure one: arithmetic on its parameters, calling only arithmetic
        # functions or pure macros, whatever #if branch defines it
        ({"k.c": "#define SQ(x) ((x) * (x))\n" + ROWS.format("SQ(b[i][j])")}, (), False),
        ({"k.c": "#define ONE(x) (x)\n#define TWO(x) (ONE(x) + sqrt(x) * N)\n#define N 2\n"
          + ROWS.format("TWO(b[i][j])")}, (), False),
        ({"k.c": "#ifdef F\n#define SQ(x) ((x) * (x))\n#else\n#define SQ(x) (x)\n#endif\n"
          + ROWS.format("SQ(b[i][j])")}, (), False),
        # ... an impure one may store: a subscript, a store, a dereference, a call, an
        # impure macro, a body of another #if branch, a body on the command line
        ({"k.c": "#define AT(x) x[0]\n" + ROWS.format("AT(b[i])")}, (), True),
        ({"k.c": "#define SET(x) (x = 0)\n" + ROWS.format("SET(b[i][j])")}, (), True),
        ({"k.c": "#define GET(x) (*x)\n" + ROWS.format("GET(b[i])")}, (), True),
        ({"k.c": "#define G(x) g(x)\n" + ROWS.format("G(b[i][j])")}, (), True),
        ({"k.c": "#define P(f, x) f(x)\n" + ROWS.format("P(sqrt, b[i][j])")}, (), True),
        ({"k.c": "#define AT(x) x[0]\n#define H(x) (AT(x) + 1)\n" + ROWS.format("H(b[i])")},
         (), True),
        ({"k.c": "#define AT x[0]\n#define H(x) (AT + 1)\n" + ROWS.format("H(b[i])")}, (),
         True),
        ({"k.c": "#ifdef F\n#define SQ(x) ((x) * (x))\n#else\n#define SQ(x) (x)[0]\n#endif\n"
          + ROWS.format("SQ(b[i])")}, (), True),
        ({"k.c": ROWS.format("SQ(b[i][j])")}, ("-DSQ(x)=x",), True),
        ({"k.c": "#ifndef SQ\n#define SQ(x) (x)\n#endif\n" + ROWS.format("SQ(b[i][j])")},
         ("-DSQ(x)=x[0]",), True),
        # assert() vanishes under -DNDEBUG
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS
          + " { assert(n > 0); a[i][j] = a[i-1][j]; } }"}, (), True),
        # a call of a function is no macro: outside the model
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS + " a[i][j] = g(a[i-1][j]); }"},
         (), False),
        # a macro's loops: its body is scanned, its parameters may be any array
        ({"k.c": "#define SMOOTH(x, y) \\\n void s(int n, double x[n][n]) {" + TWO_LOOPS
          + " \\\n x[i][j] = y[i-1][j]; }\nSMOOTH(a, a)\n"}, (), True),
        ({"k.c": "#define CLEAR(x, n) do { for (int i = 0; i < n; i++) x[i] = 0; } while (0)\n"
          + SWEEP}, (), False),
        ({"k.c": "#define GEN(n) void n##_f(int k, float *a) /* # */ \\\n"
          " { for (int i = 0; i < k; i++) a[i] = #n[0]; }\nGEN(x)\n"}, (), False),
        # conditional code inside a function may be compiled out; `assert`'s argument too
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS
          + " {\n#ifdef DEBUG\n if (g(a)) return;\n#endif\n a[i][j] = a[i-1][j]; } }"}, (),
         True),
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS
          + " { assert(i > 0 && j > 0); a[i][j] = a[i-1][j]; } }"}, (), True),
        ({"k.c": "void f(int n, double a[n][n]) {" + TWO_LOOPS
          + " {\n#ifdef CLAMP\n a[i][j] = a[i][j] > 0 ? a[i][j] : 0;\n#endif\n"
          " a[i][j] = a[i-1][j]; } }"}, (), True),
        # an `#include` in a comment includes nothing, and its comment still ends
        ({"k.c": '/* see\n #include "x.h" */\n' + ITERATED}, (), True),
        # a macro whose braces close in order changes no block around its uses
        ({"k.c": "#define ZERO { 0, 0 }\n" + SWEEP}, (), False),
        ({"k.c": "#define RESET { for (int e = 0; e < 4; e++) { x[e] = 0; } }\n" + SWEEP}, (),
         False),
        # one whose braces do not: unused it changes nothing; used, it may open a loop
        # around what follows (unless every body of it calls what refuses its user)
        ({"k.c": "#define OPEN {\n" + SWEEP}, (), False),
        ({"k.c": "#define ELSE } else {\n" + SWEEP + SELECT.format("ELSE")}, (), True),
        ({"k.c": STEPS + ITERATED.replace("for (int t = 0; t < T; t++) {", "BEGIN")
          .replace("}\n}", "END }")}, (), True),
        ({"k.c": COUNTERS + SWEEP + MAIN}, (), True),  # calls into another object
        ({"k.c": JUMPS + SWEEP + MAIN}, (), False),
        ({"k.c": JUMPS.replace("_setjmp(0); }", "}") + SWEEP + MAIN}, (), True),
        ({"k.c": COUNTERS.replace("stop_counter(e); }", "}") + SWEEP + MAIN}, (), True),
        ({"k.c": COUNTERS + ITERATED + MAIN}, (), True),
        ({"k.c": DEFINED_COUNTERS + SWEEP + MAIN}, (), True),
        # ... and a use the scan cannot see, through another macro, a pasted name or a
        # header it does not read, or an unnested body spelled without a blank
        ({"k.c": STEPS + "#define OPEN BEGIN\n#define CLOSE END\n"
          + LOOPED.format("OPEN", "CLOSE")}, (), True),
        ({"k.c": STEPS + "#define CAT(a, b) a##b\n" + LOOPED.format("CAT(BEG, IN)", "END")}, (),
         True),
        ({"k.c": '#include "s.h"\n#include "f.h"\n', "s.h": STEPS,
          "f.h": "void k(int T, int n, double *a) { BEGIN " + SMOOTH + " END }\n"}, (), True),
        ({"k.c": STEPS.replace("BEGIN ", "BEGIN/**/").replace("END ", "END")
          + LOOPED.format("BEGIN", "END")}, (), True),
        # ... or whose refusing call is not its user's: a parameter's, in a macro's argument
        # (`assert` under -DNDEBUG), of a function a macro or a header defines, or in
        # another function (a body that closes one block and opens the next)
        ({"k.c": "#define BEGIN(f) f(0); for (int t = 0; t < T; t++) {\n#define END(f) } f(0);\n"
          "static void nop(int x) { (void)x; }\n"
          + LOOPED.format("BEGIN(nop)", "END(nop)")}, (), True),
        ({"k.c": "#include <assert.h>\nint ready(void);\n#define BEGIN assert(ready()); "
          "for (int t = 0; t < T; t++) {\n#define END }\n" + LOOPED.format("BEGIN", "END")},
         ("-DNDEBUG",), True),
        ({"k.c": "void tick(void);\n#define DEFINE_TICK void tick(void) { }\nDEFINE_TICK\n"
          + TICKING + LOOPED.format("BEGIN", "END")}, (), True),
        ({"k.c": '#include "t.h"\n#include "d.h"\n' + LOOPED.format("BEGIN", "END"),
          "t.h": "void tick(void);\n" + TICKING, "d.h": "void tick(void) { }\n"}, (), True),
        ({"k.c": "#include <stdlib.h>\nvoid tick(void);\n"
          "#define NEXT tick(); } void k2(int T, int n, double *a) {\n"
          "void k1(int T, int n, double *a) {\n free(0);\n NEXT\n"
          " for (int t = 0; t < T; t++) { " + SMOOTH + " }\n}\n"}, (), True),
        # ... the same refusing calls written in the function
        ({"k.c": "#include <assert.h>\nint ready(void);\n"
          + ITERATED.replace("{\n", "{\n assert(ready());\n", 1)}, ("-DNDEBUG",), True),
        ({"k.c": "#define QUIET(x)\nvoid tick(void);\n"
          + ITERATED.replace("{\n", "{\n QUIET(tick());\n", 1)}, (), True),
        # the front end refuses a function that calls setjmp (not a macro of the code); the
        # rest of the C library is another object's code
        ({"k.c": ITERATED.replace("{\n", "{\n free(a);\n", 1)}, (), True),
        ({"k.c": "int _setjmp(void *);\n" + ITERATED.replace("{\n", "{\n _setjmp(a);\n", 1)},
         (), False),
        ({"k.c": "#define free(p) (void)(p)\n" + ITERATED.replace("{\n", "{\n free(a);\n", 1)},
         (), True),
        ({"k.c": ITERATED.replace("{\n", "{\n free(a);\n", 1)}, ("-Dfree(p)=",), True),
        # what conditional code inside a function stores may be compiled out: it refutes no
        # shape (a store between sweeps, an alternative body of a braceless loop, an `asm`)
        ({"k.c": ITERATED.replace("        for (int i = 1; i < n - 1; i++) a[i]",
                                  "#ifdef TRACE\n b[0] = a[0];\n#endif\n"
                                  "        for (int i = 1; i < n - 1; i++) a[i]")}, (), True),
        ({"k.c": ITERATED.replace("b[i] = (a[i-1] + a[i] + a[i+1]) / 3.0;",
                                  "\n#ifdef WIDE\n b[i] = a[i-1] + a[i+1];\n#else\n"
                                  " b[i] = a[i];\n#endif\n")}, (), True),
        ({"k.c": ITERATED.replace("{\n", '{\n#ifdef B\n __asm__ __volatile__("" ::: "memory");'
                                          "\n#endif\n", 1)}, (), True),
        # a function-like macro that opens a body, a loop keyword or a header a macro makes
        ({"k.c": "#define BEGIN(f) void f(int T, int n, double *a, double *b) {\n#define END }\n"
          "BEGIN(k)" + ITERATED.split("{\n", 1)[1].rsplit("}", 1)[0] + "END\n"}, (), True),
        ({"k.c": "#define pfor for\n" + ITERATED.replace("for (", "pfor (")}, (), True),
        ({"k.c": "#define RANGE(i, lo, hi) (int i = (lo); i < (hi); i++)\n"
          + ITERATED.replace("for (int t = 0; t < T; t++)", "for RANGE(t, 0, T)")}, (), True),
        # where the text cannot tell: a macro opening a loop, a computed include, braces
        # that do not balance across #if branches, a loop in -D, a forced include not found
        ({"k.c": "#define FOR(i, n) for (int i = 0; i < n; i++)\n" + SWEEP}, (), True),
        ({"k.c": "#define H <h.h>\n#include H\n" + SWEEP}, (), True),
        ({"k.c": "#if A\nvoid f(int n) {\n#else\nvoid f(int n, int m) {\n#endif\n}\n"}, (), True),
        ({"k.c": SWEEP}, ("-DLOOP=for(;;)",), True),
        ({"k.c": SWEEP}, ("-include", "{}/none.h"), True),
        # ... a directive spelled so that only cc reads it right, an unmodelled option
        ({"k.c": "#define/**/LOOP for (;;)\n" + SWEEP}, (), True),
        ({"k.c": "%:define LOOP for (;;)\n" + SWEEP}, (), True),
        ({"k.c": SWEEP}, ("-Wp,-DLOOP=for(;;)",), True),
        # a macro whose body is `do { ... } while (0)`: no loop
        ({"k.c": "#define SET(p, v) do { (p)[0] = (v); (p)[1] = (p)[0]; } while (0)\n" + SWEEP},
         (), False),
        # a static sweep the passes inline: called through a macro (that names it, or wraps
        # its call), or holding a macro's use (arithmetic, a `do ... while (0)` swap, a
        # `do` whose test a macro makes: `while (FALSE)`)
        ({"k.c": "#define SWEEP sweep\n" + STATIC_SWEEP.format("", "SWEEP")}, (), True),
        ({"k.c": "#define SWEEP(n, x, y) sweep(n, x, y)\n" + STATIC_SWEEP.format("", "SWEEP")},
         (), True),
        ({"k.c": "#define AVG3(x, y, z) (((x) + (y) + (z)) / 3.0)\n"
          + STATIC_SWEEP.format("", "sweep").replace("(a[i-1] + a[i] + a[i+1]) / 3.0",
                                                      "AVG3(a[i-1], a[i], a[i+1])")}, (), True),
        ({"k.c": "#define SWAP(x, y) do { double *s = x; x = y; y = s; } while (0)\n"
          + STATIC_SWEEP.format("SWAP(a, b);", "sweep")}, (), True),
        ({"k.c": "#define FALSE 0\n" + STATIC_SWEEP.format("", "sweep")
          .replace("for (int i = 1; i < n - 1; i++) a[i] = b[i];",
                   "do { for (int i = 1; i < n - 1; i++) a[i] = b[i]; } while (FALSE);")},
         (), True),
        # a nest of literal bounds that touches a few hundred bytes: only a macro inside its
        # loops (but a pure one) may hide more
        ({"k.c": TINY.format("BIAS(1)")}, (), False),
        ({"k.c": TINY.format("SCALED(a, i)")}, (), True),
    ],
)  # fmt: skip
def test_text_scan(tmp_path, files, flags, candidate):
    assert _scan(tmp_path, files, flags) is candidate


def test_the_text_scan_finds_whatever_the_preprocessed_scan_finds():
    """Over the corpus: each file whose preprocessed unit has a candidate nest is one the
    text scan sends to be preprocessed."""
    looked_at = refused = 0
    for path in sorted(CORPUS.rglob("*.c")):
        done = subprocess.run([CC, "-E", str(path)], capture_output=True)
        if done.returncode != 0:
            continue
        looked_at += 1
        from_text = may_have_locality_nest(str(path), [])
        assert from_text or not has_locality_nest(done.stdout), path
        refused += not from_text
    assert looked_at >= 50 and refused >= 20, (looked_at, refused)


@pytest.mark.parametrize("kernel, candidate", [(SWEEP, False), (ITERATED, True)])
def test_instruments_that_open_a_loop_are_read_as_polybench_builds_them(
    tmp_path, kernel, candidate
):
    """PolyBench's header defines its instruments empty, or (`-DPOLYBENCH_PAPI`) as a loop
    over counters that one macro opens and the other closes: the preprocessed scan answers
    whichever definition cc takes; the text scan never says no where it says yes."""
    header = "#define START\n#define STOP\n#ifdef PAPI\n#undef START\n#undef STOP\n"
    files = {"k.c": '#include "p.h"\n' + kernel + MAIN, "p.h": header + COUNTERS + "#endif\n"}
    assert _scan(tmp_path, files) or not candidate
    for defines in ([], ["-DPAPI"]):
        done = subprocess.run([CC, *defines, "-E", str(tmp_path / "k.c")], capture_output=True)
        assert done.returncode == 0, done.stderr
        assert has_locality_nest(done.stdout) is candidate


def _compile(tmp_path: Path, report: bool) -> tuple[list[str], dict | None, str]:
    """k.c compiled at -O3 through a cc that logs its commands: (the logged commands, the
    report when asked for, the modules imported)."""
    wrapper, log = logging_cc(tmp_path)
    log.unlink(missing_ok=True)
    (tmp_path / "k.c").write_text(SWEEP)
    extra = {"PYCC_REPORT": str(tmp_path / "r.jsonl")} if report else {}
    env = clean_env(
        tmp_path / "cache", PYCC_TAKEOVER="", PYCC_CC=str(wrapper), PYTHONPROFILEIMPORTTIME="1",
        PYCC_SERVER="0",  # this process's imports, not those of a server another test started
        **extra,
    )  # fmt: skip
    done = subprocess.run(
        [PYCC, "-O3", "-c", "k.c", "-o", "k.o"], cwd=tmp_path, env=env, capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reference = subprocess.run([CC, "-O3", "-c", "k.c", "-o", "ref.o"], cwd=tmp_path)
    assert reference.returncode == 0
    assert (tmp_path / "k.o").read_bytes() == (tmp_path / "ref.o").read_bytes()
    unit = json.loads((tmp_path / "r.jsonl").read_text()) if report else None
    return log.read_text().splitlines(), unit, done.stderr


@pytest.mark.skipif(PYCC is None, reason="pycc-stencil is not installed")
@pytest.mark.parametrize("report", [False, True], ids=["exec", "report"])
def test_a_file_whose_text_has_no_candidate_is_not_preprocessed(tmp_path, report):
    """Handed to cc as the command came, by the front door (not even the driver is loaded)
    or, when a report is written, by the driver, which says why."""
    commands, unit, imports = _compile(tmp_path, report)
    assert commands == ["-O3 -c k.c -o k.o"], commands
    assert ("pycc_stencil.dropin_driver" in imports) is report
    if unit is not None:
        assert unit["status"] == "passthrough" and "no loop nest" in unit["reason"], unit


def test_pathological_code_is_answered_quickly_and_without_a_crash(tmp_path):
    """Statements nested two thousand deep (past Python's recursion limit: no kernel the
    front end could lower) and a chain of 20000 assignments (quadratic once) beside a
    candidate: answered in well under two seconds each, the same by both scans."""
    nested = "void f(int n, double *a) { for (int i = 0; i < n; i++) " + "if (n) " * 2000
    chain = "void g(int n, double *a) { double " + " = ".join(f"x{k}" for k in range(20000))
    for code, candidate in (
        (nested + "a[i] = 0; }\n", False),
        (chain + " = 0; }\n" + ITERATED, True),
    ):
        (tmp_path / "k.c").write_text(code)
        started = time.perf_counter()
        assert may_have_locality_nest(str(tmp_path / "k.c"), []) is candidate
        assert has_locality_nest(code.encode()) is candidate
        assert time.perf_counter() - started < 2.0
    # a declarator nested past the recursion limit, beside the uses of a macro whose braces
    # do not nest: answered (no kernel: the front end does not lower it), not raised
    declarator = "int " + "(*" * 1200 + "f(void)" + ")" * 1200 + " { return 0; }\n"
    (tmp_path / "k.c").write_text(TICKING + declarator + LOOPED.format("BEGIN", "END"))
    assert may_have_locality_nest(str(tmp_path / "k.c"), []) is False


def test_a_step_scans_its_text_once(tmp_path, monkeypatch):
    """The front door's text scan is not run again past it: not by the driver, nor by the
    server's worker, which is told what the step's scan kept."""
    from pycc_stencil import dropin, dropin_driver, dropin_textscan

    source = tmp_path / "dropped.c"  # the text has an iterated nest; cc's unit has none
    nest = f"void f(int n, float *a) {{ {TWO_LOOPS} a[i] += a[i - 1]; }}"
    source.write_text(f"#if 0\n{nest}\n#endif\n")
    scans = []

    def counting(path, flags, sweeps=False):
        scans.append(path)
        return may_have_locality_nest(path, flags, sweeps)

    monkeypatch.setattr(dropin_textscan, "may_have_locality_nest", counting)
    monkeypatch.setattr(dropin_driver, "may_have_locality_nest", counting)
    monkeypatch.delenv("PYCC_REPORT", raising=False)
    monkeypatch.delenv("PYCC_TAKEOVER", raising=False)  # (the tests' `all` scans no text)
    monkeypatch.setenv("PYCC_CACHE_DIR", str(tmp_path / "cache"))
    asked = []
    argv = ["-O3", "-c", str(source), "-o", str(tmp_path / "dropped.o")]
    assert dropin.run_compiler(argv, lambda a, scanned: asked.append(scanned)) == 0
    assert scans == [str(source)] and asked == [[str(source)]]
    assert dropin.run_compiler(argv, scanned=[str(source)]) == 0  # as the server's worker
    assert scans == [str(source)]
    assert (tmp_path / "dropped.o").exists()


def test_a_header_is_read_once_for_every_unit_until_it_changes(tmp_path, monkeypatch):
    """Each header's facts (its macros, its code between includes) are kept in the private
    cache for the next unit; a header edited is read again, even when it keeps its size,
    inode and modification time (`touch -r`, `cp -p`, `tar x`), and a damaged entry is a
    miss."""
    from pycc_stencil import dropin_textscan

    monkeypatch.setenv("PYCC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PYCC_NO_CACHE", raising=False)
    read = []
    facts = dropin_textscan._facts
    monkeypatch.setattr(dropin_textscan, "_facts", lambda f: read.append(f) or facts(f))
    header, nest = tmp_path / "h.h", "static " + ITERATED
    header.write_text("/*" + nest + "*/")  # no code
    (tmp_path / "k.c").write_text('#include "h.h"\n' + SWEEP)
    assert _scan(tmp_path, {}) is False
    assert _scan(tmp_path, {}) is False
    assert [Path(f).name for f in read] == ["k.c", "h.h", "k.c"]  # the header once
    (entry,) = (tmp_path / "cache" / "text-scan").iterdir()
    before = os.stat(header)
    time.sleep(0.05)  # (past a tick of the clock the file system stamps changes with)
    header.write_text("  " + nest + "  ")  # the nest now, in as many bytes
    os.utime(header, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(header)
    assert (after.st_size, after.st_ino, after.st_mtime_ns) == (
        before.st_size, before.st_ino, before.st_mtime_ns
    )  # fmt: skip
    assert _scan(tmp_path, {}) is True
    entry.write_bytes(b"\0damaged")
    assert _scan(tmp_path, {}) is True
    assert [Path(f).name for f in read][3:] == ["k.c", "h.h", "k.c", "h.h"]

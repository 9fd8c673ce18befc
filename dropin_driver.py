"""`pycc-stencil [cc arguments]`: a faithful `cc` whose stencil kernels pycc-stencil compiles.

Per C translation unit: `cc -E` with the user's flags makes the one preprocessed unit both
halves compile; the front end lowers it, and the kernels it accepts are compiled by LLVM
for the target the flags name; the same unit, with those kernels turned into declarations
(`split_source`), is compiled by `cc` with the user's flags as preprocessed C; `ld -r`
joins the two objects into the one output. Anything that goes wrong for pycc-stencil's part
only makes the file fall back to plain `cc` (with one warning per kernel); invalid C is
diagnosed by `cc` itself.
Heavy modules (libclang, LLVM) are imported only when a file has loops to look at, so files
without kernels cost little more than `cc`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from . import dropin_cache as cache
from .dropin_command import (
    NO_LOCALITY_NEST,
    NOTHING_TO_IMPROVE,
    CompilerCommand,
    Input,
    default_output,
    may_have_kernels,
    nothing_to_improve,
    only_locality_passes,
    requested_passes,
    transforms_sweeps,
)
from .dropin_prescan import has_locality_nest
from .dropin_replay import record, replay, replay_key
from .dropin_report import (
    FunctionRecord,
    UnitRecord,
    UnitResult,
    append_report,
    internal_error_reason,
    nothing_improved,
    remark,
    verbose,
    warn_fallback,
)
from .dropin_symbols import foreign_symbols, localize_own_symbols
from .dropin_textscan import may_have_locality_nest
from .emit.cc_options import refusal_of_flags
from .emit.output_files import signals_held, write_output


class Driver:
    """One `cc` command line with C inputs to compile (`-c`, `-S` or a full build)."""

    def __init__(
        self,
        cc: str,
        command: CompilerCommand,
        on_miss: Callable[[], None] | None = None,
        scanned: frozenset[str] = frozenset(),
    ):
        self.cc = cc
        self.command = command
        #: run when a file's outputs are not given back from the cache (it is compiled)
        self.on_miss = on_miss
        #: inputs the front door's text scan already found may have a locality nest
        self.scanned = scanned
        self.flags = command.compile_flags()
        self.report_path = command.pycc_options.get("report") or os.environ.get("PYCC_REPORT")
        self.passes = requested_passes(command)
        #: -fpycc-row-align=N (validated by the entry point)
        self.row_align = command.pycc_options.get("row-align")
        self.cc_seconds = 0.0  # time spent in cc, for the report
        #: -w silences them as it silences cc's warnings; -Wno-pycc-fallback only them
        self.fallback_warnings = command.pycc_options.get("fallback-warnings") != "off" and (
            "-w" not in self.flags
        )

    def run(self) -> int:
        command = self.command
        with signals_held():  # (between mkdir and the registration of its removal)
            directory = tempfile.TemporaryDirectory(prefix="pycc-stencil-")
        with directory as scratch:
            refusal = refusal_of_flags(self.flags)
            if command.stage == "link" and refusal is not None:
                return self._left_to_cc(refusal)
            if command.stage == "link":
                return self._build(scratch)
            status = 0
            for item in command.c_inputs:
                output = command.output or default_output(item.path, command.stage)
                status = self.compile_unit(item, output, command.stage, scratch) or status
            others = [i for i in command.inputs if not i.is_c]
            if others:
                status = self._cc([a for a in self._args_without(command.c_inputs)]) or status
            return status

    def _left_to_cc(self, refusal: str) -> int:
        """The whole command run by cc, when the flags leave every file to it: the names of
        the temporaries it keeps and of its dependency files are its own (`-save-temps`)."""
        started = time.perf_counter()
        self.cc_seconds = 0.0
        status = self._cc(self.command.args)
        for item in self.command.c_inputs:
            unit = UnitRecord(source=item.path, output=None, status="cc", reason=refusal)
            self._finish(unit, status, started, refusal)
        return status

    def _build(self, scratch: str) -> int:
        """Compile each C input to an object, then link everything as `cc` would."""
        objects = {}
        naming = self._auxiliary_names()
        for index, item in enumerate(self.command.c_inputs):
            obj = os.path.join(scratch, f"{index}-{os.path.basename(item.path)}.o")
            status = self.compile_unit(
                item, obj, "object", scratch, link_stage=True, naming=naming.get(item.position, [])
            )
            if status != 0:
                return status
            objects[item.position] = obj
        args: list[str] = []
        skip_next = language_reset = False
        for index, arg in enumerate(self.command.args):
            if skip_next:
                skip_next = False
                continue
            item = next((i for i in self.command.inputs if i.position == index), None)
            if index in objects:
                args += ["-x", "none", objects[index]]
                language_reset = True
            elif item is not None and item.language and language_reset:
                args += ["-x", item.language, arg]  # the -x in force before the objects
                language_reset = False
            elif arg in ("-MD", "-MMD", "-MP", "-MG"):
                continue
            elif arg in ("-MF", "-MT", "-MQ"):
                skip_next = True
            else:
                args.append(arg)
        return self._cc(args)

    def _auxiliary_names(self) -> dict[int, list[str]]:
        """Per C input (by position), the `-dumpdir/-dumpbase/-dumpbase-ext` options cc gives
        its compile when it compiles and links in one command, as `cc -###` shows them: the
        separate compile to a temporary object then names its `.su`, `.dwo` and other
        auxiliary outputs as cc would (`app-k.su` next to `app`), not after the temporary."""
        shown = self._cc(["-###", *self.command.args], capture=True)
        if isinstance(shown, int) or shown.returncode != 0:
            return {}
        steps = []
        for line in shown.stderr.decode(errors="replace").splitlines():
            try:
                words = shlex.split(line)
            except ValueError:
                continue
            options: list[str] = []
            for option, value in zip(words, words[1:]):
                if option in ("-dumpdir", "-dumpbase", "-dumpbase-ext"):
                    options += [option, value]
            if "-dumpbase" in options:
                steps.append(options)
        naming = {}
        for item in self.command.c_inputs:
            base = os.path.basename(item.path)
            step = next((o for o in steps if o[o.index("-dumpbase") + 1] == base), None)
            if step is not None:
                steps.remove(step)
                naming[item.position] = step
        return naming

    def _args_without(self, inputs: list[Input]) -> list[str]:
        positions = {i.position for i in inputs}
        return [a for index, a in enumerate(self.command.args) if index not in positions]

    def _cc(self, args: list[str], capture: bool = False) -> int | subprocess.CompletedProcess:
        started = time.perf_counter()
        try:
            done = subprocess.run([self.cc, *args], capture_output=capture)
        except OSError as exc:
            print(f"pycc-stencil: error: cannot run '{self.cc}': {exc.strerror}", file=sys.stderr)
            return 127
        finally:
            self.cc_seconds += time.perf_counter() - started
        return done if capture else done.returncode

    # ------------------------------------------------------------------ one translation unit
    def compile_unit(
        self,
        item: Input,
        output: str,
        stage: str,
        scratch: str,
        link_stage: bool = False,
        naming: list[str] | tuple[str, ...] = (),
    ) -> int:
        started = time.perf_counter()
        self.cc_seconds = 0.0
        source = item.path
        stage_flag = "-S" if stage == "assembly" else "-c"
        deps = self._dependency_flags(source, output, link_stage)
        language = ["-x", item.language] if item.language else []
        original = [*self.flags, *naming, *deps, stage_flag, *language, source, "-o", output]
        unit = UnitRecord(source=source, output=None if link_stage else output, status="cc")
        try:
            with open(source, "rb") as handle:
                text = handle.read()
        except OSError:
            return self._cc(original)  # cc reports the missing/unreadable file
        if not os.path.isdir(os.path.dirname(output) or "."):
            return self._cc(original)  # cc reports that it cannot create the output
        if not may_have_kernels(text):
            unit.status, unit.reason = "passthrough", "no loops in the file"
            status = self._cc(original)
            return self._finish(unit, status, started)
        if nothing_to_improve(self.command):
            unit.status, unit.reason = "passthrough", NOTHING_TO_IMPROVE
            status = self._cc(original)
            return self._finish(unit, status, started)
        sweeps = transforms_sweeps(self.command)
        if (
            only_locality_passes(self.command)
            and source not in self.scanned
            and not may_have_locality_nest(source, self.flags, sweeps)
        ):
            unit.status, unit.reason = "passthrough", NO_LOCALITY_NEST  # not even preprocessed
            status = self._cc(original)
            return self._finish(unit, status, started)
        refusal = refusal_of_flags(self.flags)
        if refusal is not None:  # every kernel is cc's: the file is not even parsed
            unit.reason = refusal
            status = self._cc(original)
            return self._finish(unit, status, started, refusal)
        whole = _scratch_file(scratch, "cc-whole" + (".s" if stage == "assembly" else ".o"))
        # with -v, cc's commands must name the user's output: no compile runs ahead then
        speculative = _Speculative(
            self.cc, [*original[:-1], whole], scratch, ahead="-v" not in self.flags
        )
        try:
            return self._take_over(item, original, stage, scratch, text, unit, speculative, started)
        finally:
            speculative.stop()

    def _take_over(
        self,
        item: Input,
        original: list[str],
        stage: str,
        scratch: str,
        text: bytes,
        unit: UnitRecord,
        speculative: _Speculative,
        started: float,
    ) -> int:
        """pycc-stencil's part of one file joined with cc's, or cc's compile of the whole file
        (`original`), which `speculative` runs meanwhile (its diagnostics are the user's in
        either case)."""
        output = original[-1]
        preprocessed = self._preprocess(item.path)
        key = None if preprocessed is None else self._key(item.path, text, stage, preprocessed)
        outputs = None
        if key is not None and preprocessed is not None:
            # an object's bytes hold neither its name (a build into another directory) nor a
            # link's temporary object's (new every run); a dependency file names its target
            named = original[:-1]
            if self._dependency_file(original) and not output.startswith(scratch):
                named = original
            outputs = replay_key(key, named, self.flags, preprocessed)
        replayed = None if outputs is None else self._replay(key, outputs, unit)
        if replayed is not None:
            data, failure = replayed
            return self._finish(unit, _write_output(data, output, stage), started, failure)
        speculative.begin()
        result, cache_state = self._analyse(item.path, preprocessed, key, stage, unit, scratch)
        unit.cache = cache_state
        if cache_state is None:  # left to cc before the front end saw it
            unit.status = "passthrough"
        unit.functions = result.functions
        unit.reason = result.failure or result.reason
        if result.split_source is None or result.pycc_output is None:
            if speculative.ahead:
                status = speculative.finish() or _publish(speculative.output, output, stage)
            else:
                status = self._cc(original)
            self.cc_seconds += speculative.seconds
            self._record(outputs, status, speculative, original)
            return self._finish(unit, status, started, result.failure)
        status = self._compile_split(result, item, output, stage, scratch, unit, speculative)
        if status is None:  # the rewritten file did not compile: cc's whole file it is
            for function in unit.functions:
                if function.compiled_by == "pycc-stencil":
                    function.compiled_by = "cc"
                    function.reason = unit.reason
            unit.status = "cc"
            status = _publish(speculative.output, output, stage)
        else:
            unit.status = "pycc" if status == 0 else "cc"
        self.cc_seconds += speculative.seconds
        self._record(outputs, status, speculative, original)
        return self._finish(unit, status, started)

    def _replay(
        self, key: str | None, outputs: str, unit: UnitRecord
    ) -> tuple[bytes, str | None] | None:
        """The output of an identical earlier compile (its diagnostics printed, its dependency
        file written, `unit` filled from its result) and that result's failure; None if
        there is none."""
        hit = None if key is None else cache.load(key)
        if hit is None:
            return None
        try:
            result = _result_from_cache(*hit)
        except (KeyError, TypeError, ValueError):
            return None
        data = replay(outputs)
        if data is None:
            return None
        unit.cache, unit.functions = "hit", result.functions
        unit.reason = result.failure or result.reason
        taken = any(f.compiled_by == "pycc-stencil" for f in result.functions)
        unit.status = "pycc" if taken else "cc" if result.functions else "passthrough"
        return data, result.failure

    def _record(
        self, outputs: str | None, status: int, whole: _Speculative, original: list[str]
    ) -> None:
        """Keep a successful compile's outputs for `replay` (when replayable)."""
        if outputs is None or status != 0 or whole.printed is None or original[-1] == "-":
            return
        record(outputs, original[-1], whole.printed, self._dependency_file(original))

    def _dependency_file(self, original: list[str]) -> str | None:
        """The dependency file the compile writes (`-MF`, made explicit), if any."""
        return next((b for a, b in zip(original, original[1:]) if a == "-MF"), None)

    def _finish(
        self, unit: UnitRecord, status: int, started: float, failure: str | None = None
    ) -> int:
        """Warnings (only when cc succeeded: its errors say it all), remarks, the report."""
        unit.time_ms["cc"] = round(self.cc_seconds * 1000, 1)
        if failure and status == 0 and self.fallback_warnings:
            print(
                f"{unit.source}: warning: {failure}; the file is compiled by cc [-Wpycc-fallback]",
                file=sys.stderr,
            )
        unit.time_ms["total"] = round((time.perf_counter() - started) * 1000, 1)
        for function in unit.functions:
            if function.kernel and function.compiled_by == "cc" and not nothing_improved(function):
                if status == 0 and self.fallback_warnings:
                    warn_fallback(unit.source, function)
            elif verbose():
                remark(unit.source, function, self._describe())
                for text in function.remarks:
                    print(text, file=sys.stderr)
        if self.report_path:
            append_report(self.report_path, unit)
        return status

    def _describe(self) -> str:
        level = next((f for f in reversed(self.flags) if f.startswith("-O")), "-O0")
        return f"{level}, passes: {self.passes or 'none'}"

    def _preprocess(self, source: str) -> bytes | None:
        """`cc -E` of the original file with the user's flags (cc's compile of the whole file
        writes the dependency file), None if it fails: the unit the front end lowers, cc
        compiles the rest of, and the cache key includes."""
        flags = [f for f in self.without_dependency_file() if f != "-P"]  # -P drops line markers
        done = self._cc([*flags, "-E", "-x", "c", source, "-o", "-"], True)
        return None if isinstance(done, int) or done.returncode != 0 else done.stdout

    def _key(self, source: str, text: bytes, stage: str, preprocessed: bytes) -> str:
        return cache.cache_key(
            cache.environment(self.cc, self.command),
            stage,
            json.dumps(self.flags),
            self.passes,
            self.row_align or "",
            os.path.abspath(source),
            text,
            preprocessed,
        )

    def _analyse(
        self,
        source: str,
        preprocessed: bytes | None,
        key: str | None,
        stage: str,
        unit: UnitRecord,
        scratch: str,
    ) -> tuple[UnitResult, str | None]:
        """pycc-stencil's part of the unit, from the cache (`key`) or computed (then cached)."""
        if preprocessed is None or key is None:
            return UnitResult(reason="the file does not preprocess; cc reports why"), None
        sweeps = transforms_sweeps(self.command)
        if only_locality_passes(self.command) and not has_locality_nest(preprocessed, sweeps):
            result = UnitResult(reason=NO_LOCALITY_NEST)  # not even parsed
            cache.store(key, *_result_to_cache(result))  # (for `dropin_replay`)
            return result, None
        hit = cache.load(key)
        if hit is not None:
            try:
                return _result_from_cache(*hit), "hit"
            except (KeyError, TypeError, ValueError):
                pass  # an entry from another layout: recompute
        if self.on_miss is not None:
            self.on_miss()  # (neither a warm build, all given back, nor a unit the scan clears)
        unit_path = _scratch_file(scratch, "unit.i")
        with open(unit_path, "wb") as handle:
            handle.write(preprocessed)
        result = self._compute(source, unit_path, stage)
        unit.time_ms.update(result.time_ms)
        if not result.internal_error:
            cache.store(key, *_result_to_cache(result))
        return result, "miss"

    def _compute(self, source: str, unit_path: str, stage: str) -> UnitResult:
        """Run pycc-stencil's part in a child process: a crash or a hang in libclang or LLVM
        (past `$PYCC_TIMEOUT` seconds, default 120) makes the file fall back to cc."""
        from .dropin_unit import compile_kernels
        from .runtime.isolate import ChildFailure, run_isolated
        from .runtime.limits import limit_memory, memory_limit, memory_message

        limit = memory_limit()

        def work() -> UnitResult:
            limit_memory(limit)  # in the child: only pycc-stencil's part is bounded
            try:
                return compile_kernels(
                    self.cc,
                    self.command,
                    self.without_dependency_file(),  # its queries of cc must not write one
                    source,
                    unit_path,
                    stage,
                    self.passes,
                    int(self.row_align) if self.row_align else None,
                )
            except MemoryError:
                return UnitResult(failure=memory_message(limit), internal_error=True)

        try:
            return run_isolated(work, _timeout())
        except (ChildFailure, Exception) as exc:  # noqa: BLE001 - never break the build
            return UnitResult(
                failure=f"pycc-stencil {exc}"
                if isinstance(exc, ChildFailure)
                else internal_error_reason("pycc-stencil's part", exc),
                internal_error=True,
            )

    def _compile_split(
        self,
        result: UnitResult,
        item: Input,
        output: str,
        stage: str,
        scratch: str,
        unit: UnitRecord,
        whole: _Speculative,
    ) -> int | None:
        """cc on the rewritten unit (preprocessed C: the user's preprocessor options, `-D`,
        `-include`, `-MD`..., do not apply twice), joined with pycc-stencil's code into
        `output`. None when the rewritten unit does not compile (the caller falls back on cc's
        compile of the `whole` file)."""
        split_path = _scratch_file(scratch, "split.i")
        with open(split_path, "wb") as handle:
            handle.write(result.split_source)
        suffix = ".s" if stage == "assembly" else ".o"
        cc_part = _scratch_file(scratch, "cc-part" + suffix)
        args = [*self.without_dependency_file(), "-S" if stage == "assembly" else "-c"]
        done = self._cc([*args, "-w", "-x", "cpp-output", split_path, "-o", cc_part], True)
        status = whole.finish()
        if status != 0:
            return status  # errors in the user's code, as cc reports them
        if isinstance(done, int) or done.returncode != 0:
            errors = b"" if isinstance(done, int) else done.stderr
            first = next((x for x in errors.splitlines() if b"error" in x), b"").decode(
                errors="replace"
            )
            unit.reason = f"the file with the kernels taken out did not compile: {first.strip()}"
            return None
        joined = _scratch_file(scratch, "joined" + suffix)
        if stage == "assembly":
            with open(cc_part, "rb") as handle:
                cc_text = handle.read()
            with open(joined, "wb") as handle:
                handle.write(cc_text + b"\n" + _SOURCE_FILE_DIRECTIVE.sub(b"", result.pycc_output))
        else:
            pycc_part = _scratch_file(scratch, "pycc-part.o")
            with open(pycc_part, "wb") as handle:
                handle.write(result.pycc_output)
            linked = self._cc(["-r", "-nostdlib", "-o", joined, cc_part, pycc_part], True)
            if isinstance(linked, int) or linked.returncode != 0:
                unit.reason = "ld -r failed: " + (
                    "" if isinstance(linked, int) else linked.stderr.decode(errors="replace")
                )
                return None
            localize_own_symbols(joined)
        foreign = foreign_symbols(
            joined,
            cc_part,
            lambda: (
                whole.output
                if stage != "assembly"
                else self._cc_object(item, _scratch_file(scratch, "cc-unit.o"))
            ),
            self.cc,
            self.flags,
        )
        if foreign:
            unit.reason = f"its code needs '{foreign[0]}', which cc's object does not"
            return None
        return _publish(joined, output, stage)

    def _cc_object(self, item: Input, path: str) -> str | None:
        """cc's own object for the original file (what the user's build would link), at
        `path`."""
        language = ["-x", item.language] if item.language else []
        done = self._cc([*self.flags, "-w", "-c", *language, item.path, "-o", path], True)
        return path if not isinstance(done, int) and done.returncode == 0 else None

    def without_dependency_file(self) -> list[str]:
        """The flags without kbuild's `-Wp,-MD,f.d`: only cc's compile of the whole file
        writes the dependency file (the preprocessed unit's compile would name `-`)."""
        return [f for f in self.flags if not f.startswith(("-Wp,-MD,", "-Wp,-MMD,"))]

    def _dependency_flags(self, source: str, output: str, link_stage: bool) -> list[str]:
        """The user's -MD/-MMD options, made explicit (file and target named after the real
        output, not the temporary one pycc-stencil compiles to). With `-Wp,-MD,f.d` (kbuild)
        cc names the file and target itself; `-MT`, `-MQ`, `-MP` still shape it. A command
        that also links names them as gcc 12 does: after its `-o` (`prog.d`, target `prog`:
        each input rewrites it), else `a-<input>.d` with the target `<input>.o`."""
        flags = self.command.dependency_flags()
        if not {"-MD", "-MMD"} & set(flags):
            through_wp = any(f.startswith("-Wp,") and "-MD" in f for f in self.flags)
            return flags if through_wp else []
        file = os.path.splitext(output)[0] + ".d"
        if link_stage:
            output = self.command.output or default_output(source, "object")
            file = os.path.splitext(output)[0] + ".d"
            if self.command.output is None:
                file = "a-" + file
        if "-MF" not in flags:
            flags += ["-MF", file]
        if "-MT" not in flags and "-MQ" not in flags:
            flags += ["-MQ", output]
        return flags


def _scratch_file(scratch: str, name: str) -> str:
    """A new file name in `scratch` (one command may compile several units there)."""
    return os.path.join(scratch, f"{len(os.listdir(scratch))}-{name}")


def _publish(path: str, output: str, stage: str) -> int:
    """Move a finished output into place: atomically for a regular file, so a failed or
    interrupted build never leaves a partial one; `-` is stdout; devices such as /dev/null
    and other special files are written, never replaced."""
    with open(path, "rb") as handle:
        return _write_output(handle.read(), output, stage)


#: the `.file "k.c"` line of pycc-stencil's assembly: cc's part names the file already, and
#: with a second one the assembler makes a second FILE symbol, after which linkers name no
#: source file in their messages about global functions (`k.c:(.text+0x14)`)
_SOURCE_FILE_DIRECTIVE = re.compile(rb'^\t\.file\t"(?:[^"\\]|\\.)*"\n', re.M)


def _write_output(data: bytes, output: str, stage: str) -> int:
    """`_publish` of `data`, the output of `stage` (`object` or `assembly`), as cc's would be
    written: through a symbolic link (a dangling one makes its target), and into the existing
    file (its inode, mode and hard links) where cc writes into it: `-S` always, an object only
    into an empty file (`as` replaces a full one); elsewhere a new file, whole or not at all."""
    if output == "-":
        return _write_stdout(data)
    path = os.path.realpath(output) if os.path.islink(output) else output
    try:
        empty = os.path.isfile(path) and os.path.getsize(path) == 0
        write_output(path, data, into_existing=stage == "assembly" or empty)
    except OSError as exc:
        print(f"pycc-stencil: error: cannot write '{output}': {exc.strerror}", file=sys.stderr)
        return 1
    return 0


def _write_stdout(data: bytes) -> int:
    """Write `data` to stdout: 0, or 1 after gcc's diagnostic (a full disk, a closed pipe)."""
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    except OSError as exc:
        from .diagnostics import stdout_write_error  # (dataclasses: only on this path)

        print(f"pycc-stencil: error: {stdout_write_error(exc)}", file=sys.stderr)
        return 1
    return 0


def _timeout() -> float:
    """`$PYCC_TIMEOUT`: the seconds pycc-stencil's part of one file may take (then it is cc's)."""
    try:
        return float(os.environ.get("PYCC_TIMEOUT", "120"))
    except ValueError:
        return 120.0


def _result_to_cache(result: UnitResult) -> tuple[dict, dict[str, bytes]]:
    meta = {
        "functions": [vars(f) for f in result.functions],
        "reason": result.reason,
        "failure": result.failure,
    }
    blobs = {}
    if result.split_source is not None and result.pycc_output is not None:
        blobs = {"split": result.split_source, "pycc": result.pycc_output}
    return meta, blobs


def _result_from_cache(meta: dict, blobs: dict[str, bytes]) -> UnitResult:
    return UnitResult(
        functions=[FunctionRecord(**f) for f in meta["functions"]],
        split_source=blobs.get("split"),
        pycc_output=blobs.get("pycc"),
        reason=meta.get("reason"),
        failure=meta.get("failure"),
    )


class _Speculative:
    """cc compiling the whole original file to `output` while pycc-stencil looks at it: the
    object when nothing is taken over (or the rewritten file fails), else only its
    diagnostics, which are then exactly cc's (warnings, -Werror, flow-sensitive ones inside
    the kernels), and the dependency file, written with the user's options."""

    def __init__(self, cc: str, args: list[str], scratch: str, ahead: bool):
        color = sys.stderr.isatty() and not any("diagnostics-color" in a for a in args)
        self.command = [cc, *(["-fdiagnostics-color=always"] if color else []), *args]
        #: its temporary files in pycc-stencil's scratch directory, removed with it
        self.environment = dict(os.environ, TMPDIR=scratch)
        self.output = args[-1]
        #: started now, to run alongside pycc-stencil's work (else when its result is needed)
        self.ahead = ahead
        self.seconds = 0.0
        self.process: subprocess.Popen | None = None
        self.error = ""
        #: what cc printed (its stderr) once finished, None if it printed to stdout too
        self.printed: bytes | None = None

    def begin(self) -> None:
        """Start cc now if it is to run ahead of pycc-stencil's work."""
        if self.ahead and self.process is None:
            self._start()

    def _start(self) -> None:
        self.started = time.perf_counter()
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment,
                start_new_session=True,  # its own process group: `stop` ends cc1 and as too
            )
        except OSError as exc:
            self.error = f"pycc-stencil: error: cannot run '{self.command[0]}': {exc.strerror}\n"

    def finish(self) -> int:
        """Wait for cc, pass on what it printed; its exit status."""
        if self.process is None and not self.error:
            self._start()
        if self.process is None:
            sys.stderr.write(self.error)
            return 127
        out, err = self.process.communicate()
        self.seconds = time.perf_counter() - self.started
        self.printed = None if out else err
        sys.stderr.buffer.write(err)
        sys.stderr.flush()
        if out and _write_stdout(out) != 0:
            return 1
        return self.process.returncode

    def stop(self) -> None:
        """End cc and its cc1 and as if they still run (the command failed or was
        interrupted)."""
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
            _wait_for_group(self.process.pid)


def _wait_for_group(group: int, seconds: float = 2.0) -> None:
    """Until every process of `group` is gone: a killed cc1 may finish the system call that
    creates its temporary file after the driver is reaped, and the scratch directory is
    removed next."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.002)

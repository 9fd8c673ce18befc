"""The C files of a batch and the flags each is built with: from a `compile_commands.json`
(CMake's CMAKE_EXPORT_COMPILE_COMMANDS, bear) where the tree has one, else every `.c` file
under the directories given, with the `-I`/`-D` of the command line.

From a compilation database only the flags that shape what the front end sees are kept
(`-I`, `-D`, `-U`, `-std=`, `-include`), include directories made absolute against the
entry's directory; the command line's flags come after them."""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass

#: flags of a compile command the front end needs (with their argument when separate)
_KEPT = ("-I", "-D", "-U", "-include", "-isystem", "-iquote")
DATABASE = "compile_commands.json"


@dataclass(frozen=True)
class SourceFile:
    path: str  # absolute
    flags: tuple[str, ...]


def find_sources(paths: list[str], flags: list[str]) -> list[SourceFile]:
    """Every C file of `paths` (files, directories, compilation databases) with its flags,
    each file once, in a stable order."""
    found: dict[str, SourceFile] = {}
    for path in paths:
        database = path if path.endswith(DATABASE) else _database_in(path)
        if database:
            entries = _from_database(database, flags)
        elif os.path.isdir(path):
            entries = [SourceFile(p, tuple(flags)) for p in _walk(path)]
        elif os.path.isfile(path):
            entries = [SourceFile(os.path.abspath(path), tuple(flags))]
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
        for entry in entries:
            found.setdefault(entry.path, entry)
    return list(found.values())


def _database_in(directory: str) -> str | None:
    """The directory's compilation database, or its build/ folder's."""
    if not os.path.isdir(directory):
        return None
    for candidate in (DATABASE, os.path.join("build", DATABASE)):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path):
            return path
    return None


def _walk(directory: str) -> list[str]:
    found = []
    for root, folders, files in os.walk(directory):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        found += [os.path.abspath(os.path.join(root, f)) for f in sorted(files) if f.endswith(".c")]
    return found


def _from_database(database: str, extra: list[str]) -> list[SourceFile]:
    with open(database) as handle:
        entries = json.load(handle)
    found = []
    for entry in entries:
        directory = entry.get("directory", os.path.dirname(os.path.abspath(database)))
        source = os.path.normpath(os.path.join(directory, entry["file"]))
        if not source.endswith(".c"):
            continue
        words = entry.get("arguments") or shlex.split(entry.get("command", ""))
        found.append(SourceFile(source, (*_front_end_flags(words[1:], directory), *extra)))
    return found


def _front_end_flags(words: list[str], directory: str) -> list[str]:
    """The flags among a compile command's words the front end needs."""
    kept, pending = [], None
    for word in words:
        if pending:
            kept += [pending, _absolute(pending, word, directory)]
            pending = None
        elif word in _KEPT:
            pending = word
        elif word.startswith("-std="):
            kept.append(word)
        else:
            flag = next((f for f in _KEPT if word.startswith(f) and len(word) > len(f)), None)
            if flag:
                kept.append(flag + _absolute(flag, word[len(flag) :], directory))
    return kept


def _absolute(flag: str, value: str, directory: str) -> str:
    if flag in ("-I", "-isystem", "-iquote", "-include"):
        return os.path.normpath(os.path.join(directory, value))
    return value

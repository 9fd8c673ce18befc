"""A warm process for compiler mode: libclang, LLVM and isl loaded once, each compile forked
from it.

Every step of a build starts `pycc-stencil` afresh, and a file the front door cannot leave to
cc pays about 0.3-0.5 s of imports and library loading before any work, several times what
gcc spends on a small file. The first such step starts this server in the background (and
compiles on its own); the next ones send their command line, working directory, environment,
umask, resource limits, nice value, ignored and blocked signals and standard streams (and
make's jobserver pipes) over a Unix socket. A process forked from the server takes all of
them on and, once the step says `go`, runs exactly what the step would have run
(`dropin.run_compiler`), writing to the step's own streams; the step then exits as that
process did, with its status or by its signal, and passes it the signals it receives. What a
fork cannot take on (the mount namespace and root, user and group ids, supplementary groups,
control group) is part of the server's key, so a sandboxed step has a server of its own; the
working directory must be the same directory. A worker that fails before the step runs says
so, and the step runs alone; so does a step whose server does not answer within 10 s.

One server per user, per world and per installed code: the socket's name also hashes the
interpreter and its `PYTHON*` variables, the package's files (paths, sizes, times) and the
libraries' locations, so new code gets a new server. It starts in `/` without a working
directory on `sys.path`, exits after `$PYCC_SERVER_IDLE` seconds (default 300) without a
request, or when its socket is removed (`pycc-stencil server stop`); `PYCC_SERVER=0` turns it
off (each step then does all of its work). Nothing the server loads is ever run before the
fork: every compile starts from the state a fresh process would have after its imports. Not
taken on: the step's session and process group (the worker is in the server's; signals reach
it through the step).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

#: where a step's status comes from (the first line the server sends is the worker's pid)
_EXIT, _SIGNAL, _LOCAL = "exit", "signal", "local"
#: limits a step may have lowered (`ulimit`), taken on by the worker
_LIMITS = ("RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE",
           "RLIMIT_STACK", "RLIMIT_CORE")  # fmt: skip
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
#: the signals whose disposition a step may have set to "ignore" for what it runs
_SIGNALS = sorted(signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})
#: how long a step waits for the server to start its worker before working alone
_ANSWER_SECONDS = 10.0
#: the package's folders whose files make up the code the server runs
_DEPENDENCIES = ("llvmlite", "clang", "islpy")
_HEADER = struct.Struct("!I")
#: the longest path a Unix socket can have on Linux (`sun_path`), with its terminating 0
_SOCKET_PATH_MAX = 108


def enabled() -> bool:
    return os.environ.get("PYCC_SERVER", "1") != "0"


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("PYCC_SERVER_IDLE", "300")))
    except ValueError:
        return 300.0


# ---------------------------------------------------------------------------------- client
#: the socket no server answered on in this step, for `start_absent_server`
_absent: str | None = None


def compile_through_server(argv: list[str], scanned: list[str]) -> int | None:
    """The exit status of `pycc-stencil argv` run by the server (after a signal it forwarded
    ended the worker, this process's own handlers see the same signal); None when no server
    answered (`start_absent_server` then starts one): the caller does the work itself.
    `scanned`: the inputs the text scan kept (`dropin.run_compiler`)."""
    global _absent
    path = socket_path()
    if path is None:
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError:
        connection.close()
        _absent = path
        return None
    with connection:
        try:
            return _ask(connection, argv, scanned)
        except (OSError, ValueError):
            return None  # the server went away before the worker started


def start_absent_server() -> None:
    """Start the server for the next steps if none answered this one: called when the step
    has to analyse a unit (the cache does not hold it, its tokens may hold a nest the passes
    transform), not before; a warm build, which only gives back what the cache holds, or a
    project whose units the scans all clear (libwebp but one file), starts no server and
    loads none of what it preloads."""
    global _absent
    if _absent is not None:
        _start_server(_absent)
        _absent = None


def _ask(connection: socket.socket, argv: list[str], scanned: list[str]) -> int | None:
    mine = connection.fileno()  # (it may sit on a closed stream's or jobserver's number)
    streams = [fd for fd in (0, 1, 2, *_jobserver()) if fd != mine and _is_open(fd)]
    request = json.dumps(
        {
            "argv": argv,
            "scanned": scanned,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "umask": _current_umask(),
            "limits": _limits(),
            "ignored": [int(s) for s in _SIGNALS if signal.getsignal(s) is signal.SIG_IGN],
            "blocked": [int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])],
            "world": world(),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "streams": streams,
        }
    ).encode()
    socket.send_fds(connection, [_HEADER.pack(len(request)) + request], streams)
    replies = connection.makefile("r", encoding="ascii")
    connection.settimeout(_ANSWER_SECONDS)  # a stopped or stuck server: the step works alone
    first = replies.readline().split()
    if first[:1] != ["pid"]:
        return None  # the server could not take this step's state on: do it here
    worker = int(first[1])
    previous = {}

    def forward(number: int, frame: object) -> None:
        try:
            os.kill(worker, number)
        except ProcessLookupError:
            pass

    for number in _FORWARDED:
        if signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, forward)
    try:
        connection.settimeout(None)
        connection.sendall(b"go\n")  # the worker starts only now, its signals forwarded
        kind, value = replies.readline().split()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    if kind == _LOCAL:
        return None  # the worker could not start the step (nothing ran): do it here
    if kind == _SIGNAL:
        sys.stdout.flush()
        os.kill(os.getpid(), int(value))  # the step's own handler unwinds and dies by it
        return 128 + int(value)
    return int(value)


def world() -> dict[str, object]:
    """What a process forked from the server cannot take on from the step, only match: the
    files it sees (mount namespace, root and working directory), its groups, its control
    group."""

    def identity(path: str) -> list[int]:
        try:
            info = os.stat(path)
        except OSError:
            return []  # (a working directory removed under the step: it works alone)
        return [info.st_dev, info.st_ino]

    try:
        namespace = os.readlink("/proc/self/ns/mnt")
    except OSError:
        namespace = ""
    try:
        with open("/proc/self/cgroup") as handle:
            group = handle.read()
    except OSError:
        group = ""
    return {
        "namespace": namespace,
        "root": identity("/"),
        "cwd": identity("."),
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getegid()],
        "groups": sorted(os.getgroups()),
        "cgroup": group,
    }


def _jobserver() -> list[int]:
    """The pipes of make's jobserver that `$MAKEFLAGS` names (cc's `-flto=auto` uses them)."""
    import re

    found = re.search(r"--jobserver-(?:auth|fds)=(\d+),(\d+)", os.environ.get("MAKEFLAGS", ""))
    return [int(n) for n in found.groups() if int(n) > 2] if found else []


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _current_umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _limits() -> dict[str, list[int]]:
    import resource

    return {name: list(resource.getrlimit(getattr(resource, name))) for name in _LIMITS}


def socket_path() -> str | None:
    """The socket of the server for this user and this code; None if there is no private
    directory to put it in, or its path would be too long for a socket."""
    base = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    directory = os.path.join(base, f"pycc-stencil-server-{os.getuid()}")
    try:
        os.mkdir(directory)
        os.chmod(directory, 0o700)  # whatever the step's umask
    except FileExistsError:
        pass
    except OSError:
        return None
    info = os.lstat(directory)
    if info.st_uid != os.getuid() or info.st_mode & 0o777 != 0o700 or not os.path.isdir(directory):
        return None  # someone else's, open to others, or not usable by us: no server
    path = os.path.join(directory, f"{code_key()}.sock")
    return path if len(os.fsencode(path)) < _SOCKET_PATH_MAX else None


def code_key() -> str:
    """A digest of the interpreter and its `PYTHON*` settings, the package's files, the
    libraries' locations and the step's world (`world`: a sandbox, another control group or
    other groups get a server of their own)."""
    import hashlib
    import importlib.util

    from .code_stamp import code_stamp

    root = os.path.dirname(os.path.abspath(__file__))
    interpreter = os.path.realpath(sys.executable)  # (a venv's python and python3 alike)
    digest = hashlib.sha256(f"{interpreter}\0{root}\0{code_stamp()}".encode())
    mine = world()
    del mine["cwd"]  # (checked per step)
    digest.update(json.dumps(mine, sort_keys=True).encode())  # a server per world
    for name, value in sorted(os.environ.items()):  # the interpreter's own settings
        if name.startswith("PYTHON"):
            digest.update(f"{name}={value}\0".encode())
    for name in _DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec and spec.origin else ""
        stamp = os.stat(origin).st_mtime_ns if origin else 0
        digest.update(f"{name}\0{origin}\0{stamp}\0".encode())
    return digest.hexdigest()[:20]


def _start_server(path: str) -> None:
    """Start the server in the background, detached from this step (its own session, no
    stream of the build's), without waiting for it."""
    import subprocess

    try:
        # from /, and (-P) without the directory on sys.path: no file of the step's project
        # is imported in place of a module (a lone step's sys.path starts at its script's)
        safe_path = ["-P"] if sys.version_info >= (3, 11) else []
        subprocess.Popen(
            [sys.executable, *safe_path, "-m", f"{__package__}.dropin_server", path],
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass


# ---------------------------------------------------------------------------------- server
def serve(path: str) -> None:
    """Accept steps on `path` until idle; a second server for the same path exits at once."""
    import fcntl
    import select
    import time

    lock = open(path + ".lock", "w")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server has it
    try:
        os.unlink(path)  # a dead server's socket
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    own = os.stat(path).st_ino
    listener.listen(64)
    _preload()
    idle = idle_seconds()
    last, handlers, served = time.monotonic(), set(), 0
    while True:
        ready = select.select([listener], [], [], min(idle, 1.0))[0]
        handlers -= _reaped(handlers)
        if ready:
            connection, _ = listener.accept()
            last, served = time.monotonic(), served + 1
            pid = os.fork()
            if pid == 0:
                listener.close()
                lock.close()  # the server's alone: a new one may start when it is gone
                _handle(connection, served)  # never returns
            connection.close()
            handlers.add(pid)
        elif not handlers and time.monotonic() - last > idle or not _still_ours(path, own):
            break
    if _still_ours(path, own):
        os.unlink(path)
    if _still_ours(lock.name, os.fstat(lock.fileno()).st_ino):
        os.unlink(lock.name)  # (a server that opened it just before runs on alone)


def _reaped(handlers: set[int]) -> set[int]:
    done = set()
    for pid in handlers:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            finished = pid
        if finished:
            done.add(pid)
    return done


def _still_ours(path: str, inode: int) -> bool:
    try:
        return os.stat(path).st_ino == inode
    except OSError:
        return False


def _preload() -> None:
    """Import what a compile imports, and load libclang's and LLVM's libraries: code only,
    nothing run (no cache of the compiler's machine, no isl context)."""
    from . import dropin, dropin_driver, dropin_unit, exit_signals  # noqa: F401
    from .emit import host_jit
    from .emit.targets import target_names
    from .ir_passes.pipeline import load_passes
    from .runtime import isolate, limits  # noqa: F401

    load_passes()  # the pass and target registries: imports only
    target_names()
    host_jit.initialize()


def _handle(connection: socket.socket, served: int) -> None:
    """In a child of the server: take one step's state on, fork the worker, send its pid,
    start it once the step says `go` (the step then forwards its signals; a step gone before
    that never has its worker run), then send the worker's status, or `local` when it failed
    before running the step (nothing ran: the step does it alone)."""
    worker = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        request, fds = _receive(connection)
        if "status" in request:
            connection.sendall(f"served {served} pid {os.getppid()}\n".encode())
            os._exit(0)
        if len(fds) != len(request["streams"]) or not _take_on(request):
            connection.sendall(f"{_LOCAL}\n".encode())
            os._exit(0)
        go_read, go_write = os.pipe()
        ran_read, ran_write = os.pipe()
        worker = os.fork()
        if worker == 0:
            connection.close()
            os.close(go_write)
            os.close(ran_read)
            _work(request, fds, go_read, ran_write)  # never returns
        for fd in (*fds, go_read, ran_write):
            os.close(fd)
        connection.sendall(f"pid {worker}\n".encode())
        if connection.recv(16) != b"go\n":
            raise ConnectionError("the step went away before its worker started")
        os.write(go_write, b"g")
        status = _wait(worker, connection)
        worker = 0
        if os.read(ran_read, 1) != b"r":
            reply = _LOCAL
        elif os.WIFSIGNALED(status):
            reply = f"{_SIGNAL} {os.WTERMSIG(status)}"
        else:
            reply = f"{_EXIT} {os.waitstatus_to_exitcode(status)}"
        connection.sendall(f"{reply}\n".encode())
    except BaseException:  # noqa: BLE001 - the step sees a closed socket and works alone
        if worker:
            os.kill(worker, signal.SIGKILL)  # not started: it waits for `go`
    os._exit(0)


def _receive(connection: socket.socket) -> tuple[dict, list[int]]:
    """The step's request and descriptors; ConnectionError if it goes away before the end."""
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 8)
    chunk = data
    while chunk and len(data) < _HEADER.size:
        chunk = connection.recv(1 << 16)
        data += chunk
    length = _HEADER.unpack_from(data)[0] if len(data) >= _HEADER.size else 0
    data = data[_HEADER.size :]
    while chunk and len(data) < length:
        chunk = connection.recv(1 << 20)
        data += chunk
    if not chunk or len(data) < length:
        raise ConnectionError("the step went away")
    return json.loads(data), fds


def _take_on(request: dict) -> bool:
    """Become the step: its directory, environment, umask, limits, nice value, ignored and
    blocked signals. False if one of them cannot be had here, or the step's world (files,
    groups, control group) is not the server's."""
    import resource
    import tempfile

    try:
        os.chdir(request["cwd"])
        if world() != request["world"]:
            return False  # another mount namespace, root, directory, group or cgroup
        for name, (soft, hard) in request["limits"].items():
            kind = getattr(resource, name)
            if resource.getrlimit(kind) != (soft, hard):
                resource.setrlimit(kind, (soft, hard))
        nicer = request["nice"] - os.getpriority(os.PRIO_PROCESS, 0)
        if nicer < 0:
            return False  # a step less nice than the server (privileged): alone
        os.nice(nicer)
    except (OSError, ValueError):
        return False
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # found again from the step's TMPDIR
    os.umask(request["umask"])
    ignored = set(request["ignored"])
    for number in _SIGNALS:
        if int(number) in ignored:
            signal.signal(number, signal.SIG_IGN)
        elif signal.getsignal(number) is signal.SIG_IGN and number in _FORWARDED:
            signal.signal(number, signal.SIG_DFL)  # ignored where the server was started
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])
    return True


def _place(targets: list[int], fds: list[int]) -> None:
    """Put the step's streams (and make's jobserver pipes) at the descriptors they had
    there: copied out of the way first, since a received one may sit on another's place."""
    import fcntl

    from .closed_streams import stand_in_for_closed_streams

    clear = max([2, *targets]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, clear) for fd in fds]
    for fd in fds:
        os.close(fd)
    for target in {0, 1, 2} - set(targets):
        os.close(target)
    for target, fd in zip(targets, moved):
        os.dup2(fd, target)  # inheritable: cc gets them too
        os.close(fd)
    stand_in_for_closed_streams({0, 1, 2} - set(targets))
    if 1 in targets:
        sys.stdout.reconfigure(line_buffering=os.isatty(1))


def _wait(worker: int, connection: socket.socket) -> int:
    """The worker's wait status; if the step goes away first (killed), the worker is told
    to stop (SIGTERM: it cleans up as the step would have)."""
    import select

    try:
        process = os.pidfd_open(worker)
    except (AttributeError, OSError):
        return os.waitpid(worker, 0)[1]
    watched = [process, connection]
    try:
        while process not in select.select(watched, [], [])[0]:
            if not connection.recv(4096):  # the step closed its end (it sends nothing else)
                os.kill(worker, signal.SIGTERM)
                watched = [process]
    finally:
        os.close(process)
    return os.waitpid(worker, 0)[1]


def _work(request: dict, fds: list[int], go: int, ran: int) -> None:
    """In the worker: wait for `go`, take the step's streams on, say it runs (on `ran`),
    run the step as `pycc-stencil argv` would, then exit with its status. A failure before
    the step runs exits without a word on `ran`: the step then works alone."""
    status = 1
    try:
        if os.read(go, 1) != b"g":
            os._exit(0)
        _place(request["streams"], fds)
        from .dropin import run_compiler
        from .exit_signals import run_until_signal

        os.write(ran, b"r")
        os.close(ran)
        status = run_until_signal(lambda: run_compiler(request["argv"], scanned=request["scanned"]))
    except BaseException:  # noqa: BLE001 - before `ran`: the step runs alone; after, cc's 1
        pass
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)


# ------------------------------------------------------------------------- command line
def main(argv: list[str]) -> int:
    """`pycc-stencil server status|stop`: whether this code's server runs (and how many
    requests it took), or make it go (it exits within a second; the next step starts anew)."""
    if argv not in (["status"], ["stop"]):
        print("usage: pycc-stencil server status|stop", file=sys.stderr)
        return 2
    path = socket_path()
    if path is None:
        print("not running (no private directory for its socket)")
        return 1
    if argv == ["stop"]:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return 0
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.connect(path)
        request = json.dumps({"status": True}).encode()
        connection.sendall(_HEADER.pack(len(request)) + request)
        reply = connection.makefile("r", encoding="ascii").readline().strip()
    except OSError:
        reply = ""
    finally:
        connection.close()
    print(f"running, {reply}" if reply else "not running")
    return 0 if reply else 1


if __name__ == "__main__":
    serve(sys.argv[1])

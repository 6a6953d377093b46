"""Nothing a command starts outlives it or its deadline: a program whose descendants leave its session, ignore
SIGTERM, hold its output open or kill their keeper is ended by the time the runner returns, and the deadline
bounds the reading of its output too (the runner, contain.run, and a command smoke's program under qemu-user)."""

from __future__ import annotations

import ast
import io
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import crosslane
from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.smokes import command, target
from crosslane_helpers import REPO

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("2 processes that outlive their row")]

# argv: a marker, a mode, HOLD and (optional) a file the grandchild writes once it runs. The program ignores SIGTERM
# and forks; the child leaves the session, forks again and exits; the grandchild ignores SIGTERM too and keeps the
# output open for HOLD seconds. Mode "close": the program exits at once and the grandchild closes its output first;
# "kill": the program kills its keeper (only a keeper: without one its parent is the test itself).
HOSTILE = """
import os, signal, sys, time
marker, mode, hold = sys.argv[1], sys.argv[2], float(sys.argv[3])
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        if len(sys.argv) > 4:
            with open(sys.argv[4], "w") as told:
                told.write("the grandchild runs")
        if mode == "close":
            for fd in (0, 1, 2):
                os.close(fd)
        else:
            print("grandchild holds the output", flush=True)
        time.sleep(hold)
    os._exit(0)
print("started", flush=True)
if mode == "kill":
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as parent:
        if b"keeper.py" in parent.read():
            time.sleep(0.3)
            os.kill(os.getppid(), signal.SIGKILL)
if mode != "close":
    time.sleep(hold)
"""
HOLD = 25.0  # longer than any bound below: a run that waits for the grandchild fails on its time
SLACK = 7.0  # past a deadline: the keeper's SIGTERM grace, the hard stop after it, a loaded machine


@pytest.fixture
def marker() -> Iterator[str]:
    """A word only this test's processes carry on their command line; whatever still carries it is killed after
    the test (a failing run must not leave sleepers behind)."""
    word = f"crosslane-contained-{uuid.uuid4().hex}"
    yield word
    for pid in carrying(word):
        os.kill(pid, signal.SIGKILL)


def carrying(word: str) -> list[int]:
    """The living processes whose command line holds *word*."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            line = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and word.encode() in line:
            found.append(int(entry.name))
    return found


def program(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.py"
    path.write_text(HOSTILE)
    return path


def test_a_program_that_leaves_its_session_and_ignores_sigterm_ends_at_the_deadline(tmp_path: Path,
                                                                                     marker: str) -> None:
    runner = Runner(Log(io.StringIO()))
    started = time.monotonic()
    result = runner.run([sys.executable, program(tmp_path), marker, "hold", str(HOLD)], timeout=2, check=False)
    took = time.monotonic() - started
    assert result.timed_out and "started" in result.output, result
    assert took < 2 + SLACK, f"the runner returned {took:.1f}s after a 2s deadline"
    assert carrying(marker) == []


def test_what_a_program_leaves_running_ends_with_it(tmp_path: Path, marker: str) -> None:
    runner = Runner(Log(io.StringIO()))
    result = runner.run([sys.executable, program(tmp_path), marker, "close", str(HOLD)], timeout=20)
    assert result.ok and not result.timed_out and result.output == "started", result
    assert carrying(marker) == []


def test_a_program_that_kills_its_keeper_leaves_nothing_behind(tmp_path: Path, marker: str) -> None:
    runner = Runner(Log(io.StringIO()))
    started = time.monotonic()
    result = runner.run([sys.executable, program(tmp_path), marker, "kill", str(HOLD)], timeout=12, check=False)
    took = time.monotonic() - started
    assert took < 8, f"the runner returned after {took:.1f}s: it waited for what its keeper's killer left"
    assert "started" in result.output and result.returncode == -signal.SIGKILL, result
    assert carrying(marker) == []


def test_the_unlogged_commands_are_contained_and_bounded_too(tmp_path: Path, marker: str) -> None:
    """contain.run, subprocess.run's stand-in for gitexport's cat-file and nox -l."""
    from crosslane.process import contain

    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        contain.run([sys.executable, str(program(tmp_path)), marker, "hold", str(HOLD)], timeout=2)
    took = time.monotonic() - started
    assert raised.value.stdout and b"started" in raised.value.stdout
    assert took < 2 + SLACK and carrying(marker) == []
    done = contain.run([sys.executable, str(program(tmp_path)), marker, "close", str(HOLD)], timeout=20)
    assert done.returncode == 0 and done.stdout == b"started\n" and carrying(marker) == []
    fed = contain.run(["wc", "-c"], feed=b"x" * (1 << 20), timeout=20)  # more than a pipe holds: fed as read
    assert fed.stdout.split() == [b"1048576"]


def test_a_programs_own_exit_status_and_signal_pass_through_its_keeper() -> None:
    runner = Runner(Log(io.StringIO()))
    assert runner.run([sys.executable, "-c", "raise SystemExit(7)"], check=False).returncode == 7
    killed = runner.run([sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"],
                        check=False)
    assert killed.returncode == -signal.SIGILL and not killed.timed_out


PACKAGE = Path(crosslane.__file__).parent  # the package under test
STARTS = {"subprocess": {"run", "Popen", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
          "os": {"fork", "forkpty", "system", "popen", "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl",
                 "spawnle", "spawnlp", "spawnlpe", "posix_spawn", "posix_spawnp", "execv", "execve", "execvp",
                 "execvpe", "execl", "execle", "execlp", "execlpe"},
          "pty": {"spawn", "fork"}, "asyncio": {"create_subprocess_exec", "create_subprocess_shell"}}
# Where a process may start other than through contain.start: the keeper itself, and programs that only ever run
# inside a contained tree (the runner starts them), never in crosslane's own process.
STARTERS = {"process/contain.py": "the one place a keeper starts",
            "process/keeper.py": "forks and execs the program it keeps",
            "host/enter_root.py": "a program the runner runs (under unshare): it mounts, then execs the command",
            "models/gguf_to_genai.py": "a program the runner runs with the converter venv's python"}


def process_starts(path: Path) -> list[str]:
    """Each call in *path* that starts a process: `module.function` as written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.attr in STARTS.get(node.func.value.id, ()):
            found.append(f"{node.func.value.id}.{node.func.attr} (line {node.lineno})")
    return found


def test_every_process_start_goes_through_a_keeper() -> None:
    """The rule, not the instances: a module that starts a process another way is named here."""
    starts = {path.relative_to(PACKAGE).as_posix(): process_starts(path) for path in sorted(PACKAGE.rglob("*.py"))}
    outside = {name: found for name, found in starts.items() if found and name not in STARTERS}
    assert outside == {}, "start processes through the runner or contain.run (a keeper ends what they leave)"
    assert all(starts.get(name) for name in STARTERS), "an allowance nothing uses any more: remove it"


SMOKE = """
[components.hostile]
source = {{ kind = "tree", path = "components/canary" }}
arches = ["riscv64"]
[components.hostile.smoke]
kind = "command"
argv = ["{python}", "{{install}}/bin/hostile.py", "{marker}", "hold", "{hold}", "{told}"]
sentinel = "never printed"
timeout = {timeout}
"""


@pytest.mark.qemu
def test_a_command_smoke_under_qemu_ends_at_its_timeout(tmp_path: Path, sysroots: object, marker: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The smoke path real smokes take: command.run → target.run → qemu-user, whose guest forks are host forks."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    plain = Context(config_mod.parse((REPO / "versions.toml").read_text(encoding="utf-8"), REPO / "versions.toml"),
                    Runner(Log(io.StringIO())))
    python = target.python(plain, Arch.RISCV64)
    timeout = 8  # the guest's CPython starts in ~3 s under qemu: it has forked well before
    text = (REPO / "versions.toml").read_text(encoding="utf-8") + SMOKE.format(
        python=python, marker=marker, hold=HOLD, timeout=timeout, told=tmp_path / "told")
    ctx = Context(config_mod.parse(text, REPO / "versions.toml"), Runner(Log(io.StringIO())))
    install = tmp_path / "build" / "riscv64" / "hostile" / "install" / "bin"
    install.mkdir(parents=True)
    (install / "hostile.py").write_text(HOSTILE)
    profile = ctx.config.arches[Arch.RISCV64].profile("novector")
    started = time.monotonic()
    [row] = command.smoke(ctx, Arch.RISCV64, "hostile", [profile])
    took = time.monotonic() - started
    assert row.verdict is Verdict.FAIL and row.reason == "timed out", row
    assert (tmp_path / "told").read_text() == "the grandchild runs"  # the guest had forked before the deadline
    assert took < timeout + SLACK, f"the smoke returned {took:.1f}s after its {timeout}s timeout"
    assert carrying(marker) == []

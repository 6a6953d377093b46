"""A bare-metal program under qemu-system, and its verdict: every way it can end has a name.

There is no OS to deliver a signal: a trap goes wherever mtvec points, and a program that never asks qemu to
exit runs until it is killed. So each run gets (a) crosslane_start.c's trap reporter, which prints
`CROSSLANE-TRAP mcause=… mepc=… mtval=…` and exits 128 + mcause, and (b) a watchdog: at the deadline it asks
qemu's monitor (a unix socket) for the program counter, names the function it is in (the ELF's symbols), and
quits qemu. The verdict is PASS only on the program's sentinel line and exit status 0 (fail closed).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

from crosslane.gates import elf
from crosslane.report import Verdict

TRAP_RE = re.compile(r"^CROSSLANE-TRAP nonce=(\S*) mcause=(\d+) mepc=(0x[0-9a-f]+) mtval=(0x[0-9a-f]+)\s*$", re.M)
PC_RE = re.compile(r"\bpc\s+([0-9a-fA-F]{8,16})\b")
# The RISC-V privileged spec's synchronous exception codes (mcause with the interrupt bit clear).
MCAUSES = {0: "instruction address misaligned", 1: "instruction access fault", 2: "illegal instruction",
           3: "breakpoint", 4: "load address misaligned", 5: "load access fault",
           6: "store/AMO address misaligned", 7: "store/AMO access fault", 8: "environment call from U-mode",
           9: "environment call from S-mode", 11: "environment call from M-mode", 12: "instruction page fault",
           13: "load page fault", 15: "store/AMO page fault"}
TRAP_EXIT_BASE = 128
ILLEGAL_INSTRUCTION = 2
# qemu virt's RAM: components/baremetal/CMakeLists.txt lays the image out for exactly this (code and the program
# in the first 32 MiB, data and arenas in the next 208 MiB, the DTB in the top 2 MiB).
MEMORY = "256M"


@dataclass(frozen=True, kw_only=True)
class Run:
    output: str
    returncode: int | None
    seconds: float
    hang_pc: int | None = None  # set when the watchdog stopped the run
    hung: bool = False
    nonce: str = ""  # what this run's semihosting command line held: the trap reporter prints it back


def new_nonce() -> str:
    return f"crosslane-{secrets.token_hex(12)}"


def qemu_command(qemu: str, cpu: str, elf: Path, monitor: Path, memory: str = MEMORY, nonce: str = "") -> list[str]:
    """qemu-system for one bare-metal program: M-mode from reset (-bios none), semihosting on stdout (its command
    line the run's *nonce*), the monitor on *monitor* for the watchdog, nothing else on the console, an explicit
    -cpu."""
    semihosting = "enable=on,target=native,chardev=semihost" + (f",arg={nonce}" if nonce else "")
    return [qemu, "-machine", "virt", "-m", memory, "-bios", "none", "-display", "none", "-serial", "none",
            "-monitor", f"unix:{monitor},server,nowait", "-chardev", "stdio,id=semihost",
            "-semihosting-config", semihosting, "-cpu", cpu, "-kernel", str(elf)]


def ask_monitor(path: Path, command: str, *, timeout: float = 5.0) -> str:
    """One command to qemu's human monitor; its reply up to the next prompt ("" when qemu is not there)."""
    reply = b""
    with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        _read_to_prompt(sock)
        sock.sendall(command.encode() + b"\n")
        reply = _read_to_prompt(sock)
    return reply.decode(errors="replace")


def _read_to_prompt(sock: socket.socket) -> bytes:
    data = b""
    while not data.rstrip().endswith(b"(qemu)"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


class Watchdog:
    """At *deadline* seconds, read the program counter through the monitor and quit qemu."""

    def __init__(self, monitor: Path, deadline: float) -> None:
        self.monitor, self.deadline = monitor, deadline
        self.fired = False
        self.pc: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _watch(self) -> None:
        if self._stop.wait(self.deadline):
            return
        self.fired = True
        found = PC_RE.search(ask_monitor(self.monitor, "info registers"))
        self.pc = int(found.group(1), 16) if found else None
        ask_monitor(self.monitor, "quit")


def symbolize(program: Path, pc: int) -> str:
    """"function+0xoff" for *pc* from the ELF's symbol table ("" when no function contains it)."""
    found = elf.read(program)
    if isinstance(found, elf.ElfDefect):
        return ""
    best = max(((start, name) for start, size, name in found.functions if start <= pc < start + max(size, 1)),
               default=None)
    return f"{best[1]}+{pc - best[0]:#x}" if best else ""


def describe_pc(elf: Path, pc: int) -> str:
    where = symbolize(elf, pc)
    return f"pc {pc:#x} ({where})" if where else f"pc {pc:#x}"


def reported_trap(run: Run) -> re.Match[str] | None:
    """The trap line the reporter itself wrote: it carries this run's nonce and the run ended with the reporter's
    exit status, 128 + mcause. None otherwise (no trap, or a line a program printed: a verdict is never decided by
    what a program can print)."""
    for trap in TRAP_RE.finditer(run.output):
        if not (run.nonce and trap.group(1) == run.nonce) or len(trap.group(2)) > 20:
            continue  # not this run's reporter (an mcause is 64 bits: 20 digits at most)
        if run.returncode == 128 + (int(trap.group(2)) & 0x3F):
            return trap
    return None


def trap_cause(run: Run) -> int | None:
    """The mcause of the reporter's own trap (reported_trap), or None."""
    trap = reported_trap(run)
    return int(trap.group(2)) if trap else None


def verdict(run: Run, elf: Path, sentinel: str, *, timeout: float) -> tuple[Verdict, str]:
    """PASS only when the program printed *sentinel* and exited 0; every other end is a FAIL that names it."""
    trap = reported_trap(run)
    if trap:
        cause, pc, tval = int(trap.group(2)), int(trap.group(3), 16), trap.group(4)
        name = MCAUSES.get(cause, "exception")
        return Verdict.FAIL, f"trap: {name} (mcause {cause}) at {describe_pc(elf, pc)}, mtval {tval}"
    if run.hung:
        where = describe_pc(elf, run.hang_pc) if run.hang_pc is not None else "pc unknown (the monitor did not answer)"
        return Verdict.FAIL, f"hang: no exit within {timeout:.0f}s; stopped at {where}"
    if run.returncode is None:
        return Verdict.FAIL, "qemu was killed before the program ended"
    printed = TRAP_RE.search(run.output)
    if printed:  # a trap line the reporter did not write (no nonce of this run, or not its exit status)
        why = f"a trap line without this run's nonce and exit status (exit {run.returncode})"
        return Verdict.FAIL, f"{why}: {printed.group(0)[:160]}"
    if run.returncode != 0:
        last = next((line for line in reversed(run.output.splitlines()) if line.strip()), "no output")
        return Verdict.FAIL, f"exit status {run.returncode}: {last[-160:]}"
    lines = [line.strip() for line in run.output.splitlines() if line.strip()]
    carrying = [line for line in lines if sentinel in line]
    if not carrying:
        return Verdict.FAIL, f"exit status 0 without '{sentinel}' (no evidence the program checked its result)"
    # the program's last word, once: a line printed before a later FAIL, or quoting it, is no evidence
    if len(carrying) > 1 or not lines[-1].endswith(sentinel):
        return Verdict.FAIL, (f"exit status 0, but '{sentinel}' is not the end of its output, once "
                              f"({len(carrying)} lines carry it; the last line: {lines[-1][-160:]})")
    return Verdict.PASS, carrying[0]

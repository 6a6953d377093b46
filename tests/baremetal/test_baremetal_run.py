"""Every way a bare-metal run can end has a name: the verdict reads the sentinel, the trap reporter's line, the
watchdog and the exit status (fail closed), and a hang names the function it stopped in."""

from __future__ import annotations

import socket
import subprocess
import threading
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from crosslane.baremetal import run as bm_run
from crosslane.report import Scope, Verdict

pytestmark = [pytest.mark.hostile("7 bare-metal verdicts")]

PROGRAM = "int spin(int n) { while (n) { n += 1; } return n; }\nint main(void) { return spin(0); }\n"


@pytest.fixture(scope="module")
def elf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real ELF with a symbol table (the host compiler's; symbolizing reads any ELF the same way)."""
    folder = tmp_path_factory.mktemp("elf")
    (folder / "p.c").write_text(PROGRAM)
    subprocess.run(["cc", "-O0", "-o", str(folder / "p"), str(folder / "p.c")], check=True)
    return folder / "p"


def address_of(elf: Path, name: str) -> int:
    with elf.open("rb") as handle:
        table = ELFFile(handle).get_section_by_name(".symtab")
        assert isinstance(table, SymbolTableSection)
        return int(next(s["st_value"] for s in table.iter_symbols() if s.name == name))


@pytest.mark.spawns
def test_a_pc_is_named_by_the_function_that_holds_it(elf: Path) -> None:
    spin = address_of(elf, "spin")
    assert bm_run.symbolize(elf, spin + 4) == "spin+0x4"
    assert bm_run.describe_pc(elf, spin + 4) == f"pc {spin + 4:#x} (spin+0x4)"
    assert bm_run.describe_pc(elf, 0x10) == "pc 0x10"
    assert bm_run.symbolize(elf.parent / "p.c", 0x10) == ""  # not an ELF: no name, no crash


@pytest.mark.spawns
@pytest.mark.parametrize(("run", "verdict", "reason"), [
    pytest.param(bm_run.Run(output="loaded\nTEST: BundleIO index[0] Test_result: PASS\n", returncode=0, seconds=1.0),
                 Verdict.PASS,
                 "TEST: BundleIO index[0] Test_result: PASS", id="pass"),
    pytest.param(bm_run.Run(output="Test_result: PASS\n", returncode=1, seconds=1.0), Verdict.FAIL,
                 "exit status 1: Test_result: PASS",
                 id="sentinel-but-exit-1"),
    pytest.param(bm_run.Run(output="all fine\n", returncode=0, seconds=1.0), Verdict.FAIL,
                 "exit status 0 without 'Test_result: PASS'",
                 id="exit-0-without-sentinel"),
    pytest.param(bm_run.Run(output="x\nCROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x{spin} mtval=0xd0075d7\n",
                            returncode=130, seconds=1.0,
                            nonce="n1"), Verdict.FAIL,
                 "trap: illegal instruction (mcause 2) at pc 0x{spin} (spin+0x0), mtval 0xd0075d7", id="trap"),
    pytest.param(bm_run.Run(output="", returncode=None, seconds=300.0, hang_pc=-1, hung=True), Verdict.FAIL,
                 "hang: no exit within 300s; stopped at pc 0x{spin} (spin+0x0)", id="hang"),
    pytest.param(bm_run.Run(output="", returncode=0, seconds=300.0, hang_pc=None, hung=True), Verdict.FAIL,
                 "hang: no exit within 300s; stopped at pc unknown", id="hang-monitor-silent"),
    pytest.param(bm_run.Run(output="", returncode=None, seconds=300.0), Verdict.FAIL, "qemu was killed", id="killed"),
    # A line the program printed decides nothing: the reporter's own line (nonce, exit status) is the one named …
    pytest.param(bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=5 mepc=0x0 mtval=0x0\n"
                                   "CROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x{spin} mtval=0x1\n",
                            returncode=130, seconds=1.0, nonce="n1"),
                 Verdict.FAIL, "trap: illegal instruction (mcause 2) at pc 0x{spin}", id="forged-line-then-trap"),
    # … a printed line then a hang is a hang …
    pytest.param(bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x0 mtval=0x0\n", returncode=None,
                            seconds=300.0, hang_pc=-1,
                            hung=True, nonce="n1"), Verdict.FAIL, "hang: no exit within 300s",
                 id="forged-line-then-hang"),
    # … and a printed line with the sentinel and exit 0 is no PASS.
    pytest.param(bm_run.Run(output="CROSSLANE-TRAP nonce=n0 mcause=2 mepc=0x0 mtval=0x0\nTest_result: PASS\n",
                            returncode=0, seconds=1.0,
                            nonce="n1"), Verdict.FAIL, "a trap line without this run's nonce", id="forged-line-exit-0"),
    # The sentinel is the program's last word, once: a PASS before a later FAIL, or one quoted, is no evidence …
    pytest.param(bm_run.Run(output="Test_result: PASS\nTest_result: FAIL\n", returncode=0, seconds=1.0), Verdict.FAIL,
                 "exit status 0, but 'Test_result: PASS' is not the end of its output, once", id="pass-then-fail"),
    pytest.param(bm_run.Run(output="method 'Test_result: PASSED?' loaded\ndone\n", returncode=0, seconds=1.0),
                 Verdict.FAIL,
                 "exit status 0, but 'Test_result: PASS' is not the end of its output, once", id="quoted"),
    # … and an mcause no register holds is no trap of the reporter's (it was a traceback)
    pytest.param(bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=" + "9" * 5000 + " mepc=0x0 mtval=0x0\n",
                            returncode=130, seconds=1.0,
                            nonce="n1"), Verdict.FAIL, "a trap line without this run's nonce", id="huge-mcause"),
])
def test_the_verdict_names_how_the_run_ended(elf: Path, run: bm_run.Run, verdict: Verdict, reason: str) -> None:
    spin = address_of(elf, "spin")
    if run.hang_pc == -1:
        run = bm_run.Run(output=run.output, returncode=run.returncode, seconds=run.seconds, hang_pc=spin, hung=True,
                         nonce=run.nonce)
    run = bm_run.Run(output=run.output.replace("{spin}", f"{spin:x}"), returncode=run.returncode, seconds=run.seconds,
                     hang_pc=run.hang_pc, hung=run.hung,
                     nonce=run.nonce)
    found, why = bm_run.verdict(run, elf, "Test_result: PASS", timeout=300)
    assert found is verdict and why.startswith(reason.replace("{spin}", f"{spin:x}")), why


class FakeMonitor:
    """qemu's human monitor as the watchdog meets it: a prompt, `info registers`, `quit`."""

    def __init__(self, path: Path, pc: int) -> None:
        self.path, self.pc = path, pc
        self.commands: list[str] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(4)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            with client:
                client.sendall(b"QEMU 11.1.2 monitor - type 'help' for more information\n(qemu) ")
                command = client.recv(1024).decode().strip()
                self.commands.append(command)
                if command == "info registers":
                    client.sendall(f" pc       {self.pc:016x}\n mhartid  0000000000000000\n(qemu) ".encode())
                else:
                    return


@pytest.mark.spawns
def test_the_watchdog_reads_the_pc_then_quits_qemu(tmp_path: Path) -> None:
    monitor = FakeMonitor(tmp_path / "m.sock", 0x8000006C)
    with bm_run.Watchdog(tmp_path / "m.sock", 0.2) as dog:
        monitor.thread.join(timeout=5)
    monitor.server.close()
    assert dog.fired and dog.pc == 0x8000006C
    assert monitor.commands == ["info registers", "quit"]


def test_a_run_that_ends_first_is_not_watched(tmp_path: Path) -> None:
    with bm_run.Watchdog(tmp_path / "absent.sock", 30) as dog:
        pass
    assert not dog.fired and dog.pc is None


def test_the_qemu_line_has_an_explicit_cpu_and_semihosting_on_stdout(tmp_path: Path) -> None:
    argv = bm_run.qemu_command("qemu-system-riscv64", "rv64,v=false", tmp_path / "x.elf", tmp_path / "m")
    assert argv[argv.index("-cpu") + 1] == "rv64,v=false" and "-bios" in argv and "none" in argv
    assert "enable=on,target=native,chardev=semihost" in argv and "stdio,id=semihost" in argv
    with_nonce = bm_run.qemu_command("qemu-system-riscv64", "rv64", tmp_path / "x.elf", tmp_path / "m", nonce="n1")
    assert "enable=on,target=native,chardev=semihost,arg=n1" in with_nonce


def test_a_v_build_on_a_cpu_without_v_must_trap_by_name() -> None:
    from crosslane.baremetal.lane import expected_trap
    from crosslane.report import Check, Row

    row = Row(component="executorch-rvv", arch=Scope("rv64-elf"), check=Check.SMOKE, verdict=Verdict.FAIL,
              reason="trap: illegal instruction (mcause 2) [0.2s]", subject="add-portable", profile="novector")
    trapped = bm_run.Run(output="x\nCROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x80001000 mtval=0xd0077d7\n", returncode=130,
                         seconds=0.2,
                         nonce="n1")
    assert expected_trap(row, trapped).verdict is Verdict.PASS
    assert expected_trap(row, trapped).reason.startswith("expected trap: illegal instruction")
    # Decided by the reporter's line, not the row's text: a row that only says so does not pass.
    for other in (bm_run.Run(output="", returncode=None, seconds=300.0, hang_pc=0, hung=True),
                  bm_run.Run(output="Test_result: PASS\n", returncode=0, seconds=0.1),
                  bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=5 mepc=0x0 mtval=0x0\n", returncode=133,
                             seconds=0.1, nonce="n1"),
                  # printed, not reported: another run's nonce, no nonce, or the line and then a hang or exit 0
                  bm_run.Run(output="CROSSLANE-TRAP nonce=n0 mcause=2 mepc=0x0 mtval=0x0\n", returncode=130,
                             seconds=0.1, nonce="n1"),
                  bm_run.Run(output="CROSSLANE-TRAP nonce= mcause=2 mepc=0x0 mtval=0x0\n", returncode=130, seconds=0.1,
                             nonce="n1"),
                  bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x0 mtval=0x0\n", returncode=None,
                             seconds=90.0, hang_pc=0,
                             hung=True, nonce="n1"),
                  bm_run.Run(output="CROSSLANE-TRAP nonce=n1 mcause=2 mepc=0x0 mtval=0x0\n", returncode=0, seconds=0.1,
                             nonce="n1")):
        failed = expected_trap(row, other)
        assert failed.verdict is Verdict.FAIL and failed.reason.startswith("expected an illegal-instruction trap")

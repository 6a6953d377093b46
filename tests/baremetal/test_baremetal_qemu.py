"""The bare-metal exit path and the named failures, for real: small programs built with the tool root's GCC 15 +
picolibc and crosslane_start.c, run by its qemu-system 11 through the lane's own runner (slow tier: the first
use makes the ~8 GB forky tool root)."""

from __future__ import annotations

import io
import tempfile
import time
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.baremetal import run as bm_run
from crosslane.host import hostsetup, toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane_helpers import REPO

pytestmark = [pytest.mark.slow, pytest.mark.network, pytest.mark.spawns]
START = REPO / "components" / "baremetal" / "crosslane_start.c"
SOURCES = {
    "pass.c": '#include <stdio.h>\nint main(void) { puts("Test_result: PASS"); return 0; }\n',
    "three.c": '#include <stdio.h>\nint main(void) { puts("returning 3"); return 3; }\n',
    "vec.c": ("#include <stdio.h>\nint a[1000], b[1000], c[1000];\n"
              "__attribute__((noinline)) void vadd(int *restrict d, const int *restrict x, const int *restrict y,"
              " int n) { for (int i = 0; i < n; i++) d[i] = x[i] + y[i]; }\n"
              "int main(void) { for (int i = 0; i < 1000; i++) { a[i] = i; b[i] = 2 * i; } vadd(c, a, b, 1000);\n"
              "  long s = 0; for (int i = 0; i < 1000; i++) s += c[i];\n"
              '  if (s == 1498500) puts("Test_result: PASS"); return s == 1498500 ? 0 : 1; }\n'),
    "fault.c": "int main(void) { return *(volatile int *)0x4; }\n",
    # The reporter's line printed by the program itself, then a hang: no verdict may be printed.
    "forged.c": ('#include <stdio.h>\nint main(void) { puts("CROSSLANE-TRAP nonce=crosslane-0 mcause=2 mepc=0x0 '
                 'mtval=0x0"); fflush(stdout); for (;;); }\n'),
}
COMMON = ["-mcmodel=medany", "--specs=picolibc.specs", "--oslib=semihost", "-O3"]


@pytest.fixture(scope="module")
def root() -> toolroot.ToolRoot:
    runner = Runner(Log(io.StringIO()))
    if toolroot.entry_mode(runner) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    cfg = config_mod.load(REPO / "versions.toml")
    hostsetup.install(runner, ("mmdebstrap",))
    return toolroot.ensure(runner, cfg.toolroots[cfg.baremetal["rv64-elf"].toolroot])


@pytest.fixture(scope="module")
def programs(root: toolroot.ToolRoot, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bm")
    runner = Runner(Log(io.StringIO()))
    builds = {"pass": ("pass.c", "rv64imafdc", True), "three": ("three.c", "rv64imafdc", True),
              "vec": ("vec.c", "rv64imafdcv", True), "fault": ("fault.c", "rv64imafdc", True),
              "forged": ("forged.c", "rv64imafdc", True),
              "default-crt0": ("pass.c", "rv64imafdc", False)}
    made = {}
    for name, (source, march, hosted) in builds.items():
        (folder / source).write_text(SOURCES[source])
        argv = ["riscv64-unknown-elf-gcc", f"-march={march}", "-mabi=lp64d", *COMMON,
                *(["--crt0=hosted", str(START)] if hosted else []), "-o", f"{name}.elf", source]
        runner.run(toolroot.command(root, argv, binds=[folder, REPO], cwd=folder), timeout=120)
        made[name] = folder / f"{name}.elf"
    return made


OUTCOMES: dict[Path, bm_run.Run] = {}  # each program's last run, for the trap tests


def run(root: toolroot.ToolRoot, elf: Path, cpu: str, timeout: float = 20.0) -> tuple[Verdict, str, float]:
    runner = Runner(Log(io.StringIO()))
    with tempfile.TemporaryDirectory(prefix="cl-bm-") as tmp:
        monitor = Path(tmp) / "monitor.sock"
        nonce = bm_run.new_nonce()
        argv = toolroot.command(root, bm_run.qemu_command("qemu-system-riscv64", cpu, elf, monitor, nonce=nonce),
                                binds=[Path(tmp)], read_only=[elf.parent], cwd=elf.parent, network=False,
                                sealed=True)  # as the lane runs it (baremetal/lane.py)
        started = time.monotonic()
        with bm_run.Watchdog(monitor, timeout) as dog:
            result = runner.run(argv, check=False, quiet=True, timeout=timeout + 30)
        seconds = time.monotonic() - started
    outcome = bm_run.Run(output=result.output, returncode=None if result.timed_out else result.returncode,
                         seconds=seconds, hang_pc=dog.pc, hung=dog.fired,
                         nonce=nonce)
    OUTCOMES[elf] = outcome
    verdict, reason = bm_run.verdict(outcome, elf, "Test_result: PASS", timeout=timeout)
    return verdict, reason, seconds


def test_main_returning_ends_qemu_with_its_status(root: toolroot.ToolRoot, programs: dict[str, Path]) -> None:
    assert run(root, programs["pass"], "rv64,v=false")[:2] == (Verdict.PASS, "Test_result: PASS")
    verdict, reason, _ = run(root, programs["three"], "rv64,v=false")
    assert verdict is Verdict.FAIL and reason == "exit status 3: returning 3"


def test_the_default_crt0_hang_is_named_where_it_spins(root: toolroot.ToolRoot, programs: dict[str, Path]) -> None:
    """picolibc's plain crt0.o ends __start in `for(;;);` after main returns: qemu never exits. The watchdog
    names the loop instead of waiting for a job timeout."""
    verdict, reason, seconds = run(root, programs["default-crt0"], "rv64,v=false", timeout=5)
    assert verdict is Verdict.FAIL and reason.startswith("hang: no exit within 5s; stopped at pc 0x")
    assert "(_cstart+0x" in reason and seconds < 30


def test_a_vector_build_on_a_cpu_without_v_is_an_illegal_instruction(root: toolroot.ToolRoot,
                                                                      programs: dict[str, Path]) -> None:
    verdict, reason, seconds = run(root, programs["vec"], "rv64,v=false")
    assert verdict is Verdict.FAIL and reason.startswith("trap: illegal instruction (mcause 2) at pc 0x"), reason
    assert "mtval 0x" in reason and seconds < 15  # a named failure at once, never a timeout
    assert bm_run.trap_cause(OUTCOMES[programs["vec"]]) == bm_run.ILLEGAL_INSTRUCTION  # with this run's nonce
    assert run(root, programs["vec"], "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0")[0] is Verdict.PASS


def test_a_deliberate_fault_is_named(root: toolroot.ToolRoot, programs: dict[str, Path]) -> None:
    verdict, reason, _ = run(root, programs["fault"], "rv64,v=false")
    assert verdict is Verdict.FAIL and reason.startswith("trap: load access fault (mcause 5) at pc 0x"), reason
    assert "(main+0x" in reason and reason.endswith("mtval 0x4")


def test_a_trap_line_the_program_prints_is_no_trap(root: toolroot.ToolRoot, programs: dict[str, Path]) -> None:
    verdict, reason, _ = run(root, programs["forged"], "rv64,v=false", timeout=5)
    assert verdict is Verdict.FAIL and reason.startswith("hang: no exit within 5s"), reason  # printed, then hung
    assert bm_run.trap_cause(OUTCOMES[programs["forged"]]) is None

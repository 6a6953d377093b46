"""The executorch smoke's plumbing for real, in seconds: a stand-in `executor_runner` cross-compiled for riscv64
(clang-19, the forky sysroot) runs under qemu-user on the case × profile jobs the matrix gives. What it prints
(and whether it dies) is decided by the program file it is handed, so every verdict path runs through the real
qemu, timeouts, signals, parallel pool and progress lines. The export is the one fake: a real export needs torch
and minutes (the slow tier's lane test does it)."""

from __future__ import annotations

import dataclasses
import io
import time
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.config.cases import Case
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.smokes import executorch, payload

pytestmark = [pytest.mark.cross, pytest.mark.qemu]
COMPONENT = "executorch-xnnpack"

STAND_IN = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    const char *model = "";
    for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], "--model_path")) model = argv[i + 1];
    FILE *f = fopen(model, "r");
    char what[32] = "";
    if (!f || !fgets(what, sizeof what, f)) { puts("cannot read the program"); return 1; }
    printf("Note (XNNPACK): Using binary microkernel 'xnn_f32_vadd_ukernel__rvv_u8v'.\n");
    if (!strncmp(what, "SIGILL", 6)) raise(SIGILL);
    if (!strncmp(what, "HANG", 4)) for (;;) {}
    printf("I executor_runner.cpp:884]  max_absolute_error:  %s\n", strncmp(what, "OFF", 3) ? "0.000000" : "0.5");
    printf("I executor_runner.cpp:887]  max_relative_error:  %s\n", strncmp(what, "OFF", 3) ? "0.000000" : "0.5");
    printf("TEST: BundleIO index[0] Test_result: %s\n", strncmp(what, "FAIL", 4) ? "PASS" : "FAIL");
    return 0;
}
"""


@pytest.fixture
def ctx(cfg: Config, sysroots: dict[Arch, Path], session_build_dir: Path) -> Context:
    context = Context(cfg, Runner(Log(io.StringIO())), cases=("all",))
    compiler = context.compiler(COMPONENT, Arch.RISCV64)
    runner = context.component_dir(Arch.RISCV64, COMPONENT) / "install" / "bin" / "executor_runner"
    runner.parent.mkdir(parents=True, exist_ok=True)
    source = runner.parent / "stand_in.c"
    source.write_text(STAND_IN)
    context.runner.run([*compiler.cc, *compiler.target_flags, *compiler.linker_flags,
                        f"--sysroot={sysroots[Arch.RISCV64]}", "-static", "-O1", source, "-o", runner], quiet=True)
    return context


def test_every_verdict_path_through_qemu(ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    behaviour = {"add": "PASS", "mobilebert": "SIGILL", "llama2": "FAIL", "mv2": "PASS", "resnet18": "HANG"}

    def exported(_: Context, case: Case) -> executorch.Program:
        path = tmp_path / f"{case.name}.bpte"
        path.write_text("OFF" if case.quantize and case.model == "add" else behaviour[case.model])
        return executorch.Program(case, path, rtol=0.01, atol=0.01, magnitude=0.5, delegated=1)

    monkeypatch.setattr(executorch, "export", exported)
    monkeypatch.setattr(payload, "timeout_for", lambda *_, **__: 3.0)  # resnet18's stand-in hangs
    profiles = ctx.config.arches[Arch.RISCV64].profiles
    stale = ctx.component_dir(Arch.RISCV64, COMPONENT) / "etdump" / "add-xnnpack@rvv256.etdump"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"an earlier run's etdump")
    rows = {r.label: r for r in executorch.smoke(ctx, Arch.RISCV64, COMPONENT, profiles)}
    # the matrix's XNNPACK cases, the exempt models as SKIP rows naming their reason
    assert rows["yolo26-xnnpack"].verdict is Verdict.SKIP and "trained weights" in rows["yolo26-xnnpack"].reason
    assert "yolo26-xnnpack-q8" not in rows  # upstream's exclusion
    # this variant's profiles only: the RVV runner never lands on novector
    runs = [step for step in rows if "@" in step]
    assert {step.split("@")[1] for step in runs} == {"rvv128", "rvv256", "rvv512"}
    assert len(runs) == 5 * 2 * 3  # (add, mv2, mobilebert, llama2, resnet18) × quantize × profiles
    passing = rows["add-xnnpack@rvv256"]
    assert passing.verdict is Verdict.PASS and "Test_result: PASS; max abs 0" in passing.reason
    # the runner said PASS, but its own error statistics are over the tolerance it was given
    over = rows["add-xnnpack-q8@rvv128"]
    assert over.verdict is Verdict.FAIL and "error statistics over tolerance" in over.reason
    hung = rows["resnet18-xnnpack@rvv256"]
    assert hung.verdict is Verdict.FAIL and hung.reason.startswith("timed out")
    died = rows["mobilebert-xnnpack@rvv512"]
    assert died.verdict is Verdict.FAIL and "died of SIGILL" in died.reason
    assert rows["llama2-xnnpack-q8@rvv128"].verdict is Verdict.FAIL
    assert "Test_result FAIL" in rows["llama2-xnnpack@rvv512"].reason
    # the stand-in writes no etdump, and an earlier run's is not taken for this one's
    assert "op-timing" not in rows and not stale.exists()
    stream = ctx.log.stream
    assert isinstance(stream, io.StringIO) and f": {len(runs)}/{len(runs)} " in stream.getvalue()


def test_the_op_timing_row_carries_its_own_time(ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def exported(_: Context, case: Case) -> executorch.Program:  # an export of seconds, as torch's are
        time.sleep(0.5)
        path = tmp_path / f"{case.name}.bpte"
        path.write_text("PASS")
        return executorch.Program(case, path, rtol=0.01, atol=0.01, magnitude=0.5, delegated=1)

    monkeypatch.setattr(executorch, "export", exported)
    monkeypatch.setattr(executorch, "op_tables", lambda *_: (tmp_path / "optiming.json", "| op | ms |"))
    one = dataclasses.replace(ctx, cases=("add",))
    profile = ctx.config.arches[Arch.RISCV64].profile("rvv128")
    rows = {r.label: r for r in executorch.smoke(one, Arch.RISCV64, COMPONENT, [profile])}
    assert rows["add-xnnpack@rvv128"].verdict is Verdict.PASS
    table = rows["op-timing"]
    assert table.verdict is Verdict.PASS and table.detail == "| op | ms |"
    assert table.wall < 0.5 and (table.wall or table.cpu)  # its own, not the exports' second

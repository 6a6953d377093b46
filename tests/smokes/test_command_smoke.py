"""The declarative smoke run in this process on real programs under qemu (the README's example runs it through
invoke; here its every branch is measured): the sentinel on each profile, the JSON a program writes compared with
the amd64 control's, a difference named, and an expected signal that does not come is a FAIL."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Check, Verdict
from crosslane.smokes import command
from crosslane_helpers import REPO

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.spawns]

PROGRAM = r"""
#include <stdio.h>
int main(int argc, char **argv) {
    long total = 0;
    for (int i = 0; i < 1000; i++) total += i;
    printf("sum %ld\n", total);
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        fprintf(f, "{\"sum\": %ld, \"scale\": %s}\n", total, SCALE);
        fclose(f);
    }
    return 0;
}
"""
SMOKE = """
[components.demo]
source = { kind = "tree", path = "components/canary" }
arches = ["amd64", "riscv64"]
[components.demo.smoke]
kind = "command"
argv = ["{install}/bin/demo", "{output}"]
sentinel = "sum 499500"
compare = "json"
tolerance = { rel = 0.01 }
"""


def install(build: Path, arch: Arch, compiler: str, scale: str) -> None:
    folder = build / arch.value / "demo" / "install" / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    source = folder.parent / "demo.c"
    source.write_text(PROGRAM)
    subprocess.run([compiler, f"-DSCALE=\"{scale}\"", "-O1", "-o", str(folder / "demo"), str(source)], check=True,
                   capture_output=True, timeout=120)


def context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str = "", smoke: str = SMOKE) -> Context:
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    # The repository's own versions.toml (its sysroots are made already), with the component added.
    text = (REPO / "versions.toml").read_text(encoding="utf-8") + smoke + extra
    return Context(config_mod.parse(text, REPO / "versions.toml"), Runner(Log(io.StringIO())))


def test_sentinel_and_json_parity_with_the_control(tmp_path: Path, sysroots: object,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(tmp_path, monkeypatch)
    install(tmp_path / "build", Arch.RISCV64, "riscv64-linux-gnu-gcc", "1.000")
    install(tmp_path / "build", Arch.AMD64, "gcc", "1.005")  # within rel 0.01
    profiles = list(ctx.config.arches[Arch.RISCV64].profiles[:2])
    rows = command.smoke(ctx, Arch.RISCV64, "demo", profiles)
    smokes = [r for r in rows if r.check is Check.SMOKE]
    parity = [r for r in rows if r.check is Check.PARITY]
    assert [r.verdict for r in smokes] == [Verdict.PASS] * 2 and all(r.reason == "sum 499500" for r in smokes), rows
    assert len(parity) >= 2 and all(r.verdict is Verdict.PASS for r in parity), parity

    install(tmp_path / "build", Arch.AMD64, "gcc", "2.0")  # the control now disagrees beyond the tolerance
    rows = command.smoke(ctx, Arch.RISCV64, "demo", profiles)
    failed = [r for r in rows if r.check is Check.PARITY and r.verdict is Verdict.FAIL]
    assert failed and all("rel diff 0.5" in r.reason for r in failed), failed  # 1.0 against 2.0
    assert all(r.wall > 0 for r in rows if r.check is Check.SMOKE)  # each profile's run timed


def test_stdout_parity_says_what_it_compared(tmp_path: Path, sysroots: object,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(tmp_path, monkeypatch, smoke=SMOKE.replace('compare = "json"', 'compare = "stdout"'))
    install(tmp_path / "build", Arch.RISCV64, "riscv64-linux-gnu-gcc", "1.0")
    install(tmp_path / "build", Arch.AMD64, "gcc", "1.0")
    [parity] = [r for r in command.smoke(ctx, Arch.RISCV64, "demo", [ctx.config.arches[Arch.RISCV64].profiles[0]])
                if r.check is Check.PARITY]
    assert parity.verdict is Verdict.PASS
    assert parity.reason == "= control: stdout: identical text: 1 line, 10 characters (exact)", parity.reason


def test_the_smoke_runs_and_names_only_the_profiles_it_lists(tmp_path: Path, sysroots: object,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from crosslane.run import pipeline

    listed = SMOKE.replace('compare = "json"\n', 'profiles = ["novector", "rvv256"]\n')
    ctx = context(tmp_path, monkeypatch, smoke=listed)
    logged = io.StringIO()
    ctx = Context(ctx.config, Runner(Log(logged)))
    install(tmp_path / "build", Arch.RISCV64, "riscv64-linux-gnu-gcc", "1.0")
    rows = pipeline.smoke_components(ctx, Arch.RISCV64, ["demo"])
    assert [(r.profile, r.verdict) for r in rows] == [("novector", Verdict.PASS), ("rvv256", Verdict.PASS)], rows
    assert "smoke: demo on riscv64 (novector, rvv256)" in logged.getvalue(), logged.getvalue()
    with pytest.raises(UsageError, match="--cpu rvv128 selects no smoke to run on riscv64: demo's smoke runs on "
                                         "novector, rvv256 only"):
        pipeline.smoke_components(ctx, Arch.RISCV64, ["demo"], "rvv128")


def test_an_expected_signal_that_does_not_come_fails(tmp_path: Path, sysroots: object,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(tmp_path, monkeypatch, 'expect = { novector = "SIGILL" }\n')
    install(tmp_path / "build", Arch.RISCV64, "riscv64-linux-gnu-gcc", "1.0")
    install(tmp_path / "build", Arch.AMD64, "gcc", "1.0")
    novector = ctx.config.arches[Arch.RISCV64].profile("novector")
    [row, *_] = command.smoke(ctx, Arch.RISCV64, "demo", [novector])
    assert row.verdict is Verdict.FAIL and row.reason == "expected SIGILL on novector, exit 0", row


def test_a_component_not_built_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = context(tmp_path, monkeypatch)
    [row] = command.smoke(ctx, Arch.RISCV64, "demo", list(ctx.config.arches[Arch.RISCV64].profiles))
    assert row.verdict is Verdict.FAIL and "invoke build --arch riscv64 --component demo" in row.reason

"""ARCH-PARITY regression rows, both directions, on configs parsed from TOML in tmp_path."""

from __future__ import annotations

from pathlib import Path

import pytest

from cfgkit import make
from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane.policy import parity
from crosslane.report import Row, Verdict

LANE_OFF = '[lanes.genai.riscv64]\nenabled = false\nreason = "no riscv64 ORT yet"\n'
LANE_ON = "[lanes.genai.riscv64]\nenabled = true\n"
EXEMPT = '[parity.exemptions]\n"riscv64:onnxruntime-genai" = "not built for riscv64 yet"\n'


def site_packages(tmp_path: Path, with_genai: bool) -> Path:
    site = tmp_path / "site-packages"
    (site / "numpy-2.2.0.dist-info").mkdir(parents=True)
    if with_genai:
        (site / "onnxruntime_genai-0.9.0.dist-info").mkdir()
    return site


def genai_row(tmp_path: Path, extra: str, arch: Arch, with_genai: bool) -> Row:
    cfg = make(tmp_path, extra)
    present = parity.installed([site_packages(tmp_path, with_genai)])
    rows = [r for r in parity.check(cfg, arch, present, "site-packages") if r.component == "onnxruntime-genai"]
    assert len(rows) == 1, rows
    return rows[0]


def test_riscv64_without_genai_fails_naming_it(tmp_path: Path) -> None:
    row = genai_row(tmp_path, "", Arch.RISCV64, with_genai=False)
    assert row.verdict is Verdict.FAIL
    assert "drift: onnxruntime-genai" in row.reason and "riscv64" in row.reason


def test_riscv64_with_pinned_genai_passes(tmp_path: Path) -> None:
    row = genai_row(tmp_path, "", Arch.RISCV64, with_genai=True)
    assert row.verdict is Verdict.PASS


def test_riscv64_with_lane_off_passes_naming_the_setting(tmp_path: Path) -> None:
    row = genai_row(tmp_path, LANE_OFF, Arch.RISCV64, with_genai=False)
    assert row.verdict is Verdict.PASS
    assert "lane off by versions.toml lanes.genai.riscv64.enabled = false" in row.reason


def test_riscv64_with_lane_off_by_environment_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_LANE_GENAI_RISCV64", "0")
    row = genai_row(tmp_path, "", Arch.RISCV64, with_genai=False)
    assert row.verdict is Verdict.PASS
    assert "lane off by CROSSLANE_LANE_GENAI_RISCV64=0" in row.reason
    monkeypatch.setenv("CROSSLANE_LANE_GENAI_RISCV64", "1")
    assert genai_row(tmp_path / "on", "", Arch.RISCV64, with_genai=False).verdict is Verdict.FAIL


def test_amd64_still_fails_when_riscv64_hatch_is_off(tmp_path: Path) -> None:
    row = genai_row(tmp_path, LANE_OFF, Arch.AMD64, with_genai=False)
    assert row.verdict is Verdict.FAIL
    assert "drift: onnxruntime-genai" in row.reason and "amd64" in row.reason


@pytest.mark.parametrize("with_genai", [False, True], ids=["absent", "present"])
def test_exemption_readded_while_lane_on_fails(tmp_path: Path, with_genai: bool) -> None:
    row = genai_row(tmp_path, LANE_ON + EXEMPT, Arch.RISCV64, with_genai=with_genai)
    assert row.verdict is Verdict.FAIL
    assert '"riscv64:onnxruntime-genai"' in row.reason


def test_exemption_for_absent_distribution_passes_with_its_reason(tmp_path: Path) -> None:
    row = genai_row(tmp_path, EXEMPT, Arch.RISCV64, with_genai=False)
    assert (row.verdict, row.reason) == (Verdict.PASS, "exempt: not built for riscv64 yet")


def test_exemption_for_present_distribution_is_stale(tmp_path: Path) -> None:
    row = genai_row(tmp_path, EXEMPT, Arch.RISCV64, with_genai=True)
    assert row.verdict is Verdict.FAIL and "stale exemption" in row.reason


def test_exemption_next_to_a_lane_that_is_off_is_stale(tmp_path: Path) -> None:
    row = genai_row(tmp_path, LANE_OFF + EXEMPT, Arch.RISCV64, with_genai=False)
    assert row.verdict is Verdict.FAIL and "stale exemption" in row.reason


def test_exemption_for_unknown_distribution_is_stale(tmp_path: Path) -> None:
    cfg = make(tmp_path, '[parity.exemptions]\n"arm64:torch" = "never built"\n')
    rows = parity.check(cfg, Arch.ARM64, {"onnxruntime-genai"}, "x")
    assert [(r.component, r.verdict) for r in rows] == [("onnxruntime-genai", Verdict.PASS), ("torch", Verdict.FAIL)]


def test_installed_reads_dist_info_egg_info_and_wheels(tmp_path: Path) -> None:
    (tmp_path / "a" / "Onnxruntime_GenAI-0.9.0.dist-info").mkdir(parents=True)
    (tmp_path / "a" / "old_pkg-1.0.egg-info").mkdir()
    (tmp_path / "staging" / "wheels").mkdir(parents=True)
    (tmp_path / "staging" / "wheels" / "onnx-1.17.0-cp313-cp313-linux_riscv64.whl").write_bytes(b"")
    (tmp_path / "staging" / "wheels" / "broken.whl").write_bytes(b"")
    assert parity.installed([tmp_path / "a", tmp_path / "staging"]) == {"onnxruntime-genai", "old-pkg", "onnx"}


def test_distribution_key_is_parsed_and_typos_still_rejected(tmp_path: Path) -> None:
    cfg = make(tmp_path)
    assert cfg.components["genai"].distribution == "onnxruntime-genai"
    assert cfg.components["canary"].distribution is None
    with pytest.raises(ConfigError, match="did you mean 'distribution'"):
        make(tmp_path, "[components.typo]\nsource = { kind = \"tree\", path = \"components/canary\" }\n"
                       "distributon = \"x\"\n")


def test_parity_task_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from crosslane.cli import commands, gate_tasks
    make(tmp_path)
    config = str(tmp_path / "versions.toml")
    site = site_packages(tmp_path, with_genai=False)
    assert commands.run(gate_tasks.parity("riscv64", [str(site)]), config_path=config) == 1
    assert "drift: onnxruntime-genai" in capsys.readouterr().out
    (site / "onnxruntime_genai-0.9.0.dist-info").mkdir()
    assert commands.run(gate_tasks.parity("riscv64", [str(site)]), config_path=config) == 0
    assert commands.run(gate_tasks.parity("riscv64", []), config_path=config) == 2
    assert commands.run(gate_tasks.parity("riscv64", [str(tmp_path / "nope")]), config_path=config) == 2
    assert "not a folder" in capsys.readouterr().err


def test_a_component_built_only_when_named_is_not_asked_of_the_arch(tmp_path: Path) -> None:
    """`job = false`: the arch's job never installs it, so parity does not ask for its distribution."""
    cfg = make(tmp_path, '[components.extra]\nsource = { kind = "tree", path = "components/canary" }\n'
                         'arches = ["riscv64"]\njob = false\ndistribution = "extra-dist"\n')
    present = parity.installed([site_packages(tmp_path, True)])
    assert not [r for r in parity.check(cfg, Arch.RISCV64, present, "site-packages") if r.component == "extra-dist"]
    cfg = make(tmp_path / "in-job", '[components.extra]\nsource = { kind = "tree", path = "components/canary" }\n'
                                    'arches = ["riscv64"]\ndistribution = "extra-dist"\n')
    rows = [r for r in parity.check(cfg, Arch.RISCV64, present, "site-packages") if r.component == "extra-dist"]
    assert rows and rows[0].verdict is Verdict.FAIL

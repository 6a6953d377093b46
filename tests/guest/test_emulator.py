"""arches.<arch>.emulator: every program of the arch runs under the tool root's qemu-user, found (never made) by
the steps that run programs; made with the arch's sysroot."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.errors import MissingPrerequisite
from crosslane.features.probes import Probes
from crosslane.guest import qemu
from crosslane.host import toolroot
from crosslane.log import Log
from crosslane.process.runner import Runner


def with_emulator(cfg: Config, root: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setattr(toolroot, "root_path", lambda spec: root)
    return dataclasses.replace(cfg, arches={**cfg.arches, Arch.RISCV64: dataclasses.replace(
        cfg.arches[Arch.RISCV64], emulator="qemu-user")})


def test_an_arch_without_emulator_runs_under_the_hosts_qemu(cfg: Config) -> None:
    runner = Runner(Log(io.StringIO()))
    assert cfg.arches[Arch.RISCV64].emulator is None
    host = qemu.for_arch(runner, cfg, Arch.RISCV64)
    assert Path(host).name == "qemu-riscv64-static" and "toolroots" not in host
    qemu.ensure_emulator(runner, cfg, Arch.RISCV64)  # nothing to make


def test_an_emulator_not_made_is_a_missing_prerequisite_naming_the_step_that_makes_it(
        cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = with_emulator(cfg, tmp_path / "root", monkeypatch)
    runner = Runner(Log(io.StringIO()), dry_run=True)
    with pytest.raises(MissingPrerequisite, match=r"tool root qemu-user \(arches\.riscv64\.emulator\) is not made"
                       ) as caught:
        qemu.for_arch(runner, config, Arch.RISCV64)
    assert caught.value.fix == "invoke sysroot --arch riscv64"
    found = Probes(runner, config, lambda name, arch: pytest.fail("no compiler asked for")).qemu(Arch.RISCV64)
    assert found.path is None and found.fix == "invoke sysroot --arch riscv64"


def test_a_made_emulator_is_the_roots_qemu_and_one_without_it_names_the_package(
        cfg: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    (root / toolroot.MANIFEST).parent.mkdir(parents=True)
    (root / toolroot.MANIFEST).write_text('{"packages": {}}')
    config = with_emulator(cfg, root, monkeypatch)
    runner = Runner(Log(io.StringIO()))
    with pytest.raises(MissingPrerequisite, match=r"tool root qemu-user has no usr/bin/qemu-riscv64"):
        qemu.for_arch(runner, config, Arch.RISCV64)
    binary = root / "usr/bin/qemu-riscv64"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert qemu.for_arch(runner, config, Arch.RISCV64) == str(binary)
    qemu.ensure_emulator(runner, config, Arch.RISCV64)  # made already: nothing fetched
    assert not runner.commands

"""A cache manifest crosslane did not write (cut, of the wrong shape or types), in the sysroot's or a tool root's
cache folder: a real `invoke` process refuses it with the integrity exit code 6 and one line naming the manifest,
never a traceback or a build on top of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from hostilekit import REPO, Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("cache manifests")]

CORRUPT = ["{", "[]", '{"packages": 5}', '{"packages": [{"package": 1}]}']


@pytest.mark.parametrize("text", CORRUPT, ids=["cut", "list", "number", "wrong-type"])
def test_a_sysroot_manifest_crosslane_did_not_write(tmp_path: Path, text: str) -> None:
    box = Sandbox(tmp_path)
    cfg = config_mod.load(REPO / "versions.toml")
    path = box.cache / "sysroots" / sysroot_mod.sysroot_path(cfg.sysroot, Arch.RISCV64).name
    path.mkdir(parents=True)
    (path / sysroot_mod.MANIFEST).write_text(text)
    box.refused(6, sysroot_mod.MANIFEST, "sysroot", "--arch", "riscv64")


@pytest.mark.parametrize("text", CORRUPT, ids=["cut", "list", "number", "wrong-type"])
def test_a_tool_root_manifest_crosslane_did_not_write(tmp_path: Path, text: str) -> None:
    box = Sandbox(tmp_path)
    cfg = config_mod.load(REPO / "versions.toml")
    spec = cfg.toolroots["qemu-user"]
    path = box.cache / "toolroots" / toolroot.root_path(spec).name
    path.mkdir(parents=True)
    (path / toolroot.MANIFEST).write_text(text)
    box.refused(6, toolroot.MANIFEST, "sources", "--arch", "arm64", "--component", "canary")

"""The cross-wheel gate on hostile and honest wheels built in tmp_path: each defect its own named FAIL."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands, gate_tasks
from crosslane.errors import VerdictFailed
from crosslane.files import wheelzip
from crosslane.gates import wheel as gate
from crosslane.report import Row, Verdict
from gatekit import elf_header, make_wheel, plain_member, symlink_member

RISCV = elf_header(243, e_flags=0x5)
GOOD_NAME = "demo-1.0-cp313-cp313-linux_riscv64.whl"


def fails(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r.verdict is Verdict.FAIL]


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Wheels in tmp_path/in; the gate's temporary folders in tmp_path/tmp (checked empty afterwards)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    return tmp_path


def everything(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_honest_wheel_passes(sandbox: Path) -> None:
    wheel = make_wheel(sandbox / "in", GOOD_NAME, {"demo/libdemo.so": RISCV,
                                                   "demo/_core.cpython-313-riscv64-linux-gnu.so": RISCV,
                                                   "demo/__init__.py": b""})
    rows = gate.verify_wheel(wheel, Arch.RISCV64)
    assert fails(rows) == []
    steps = {r.subject for r in rows}
    assert {"platform-tag", "unpack", "record", "elf-arch", "ext-suffix"} <= steps


HOSTILE = {
    "zip-slip": ({}, [plain_member("../evil.txt")], GOOD_NAME, None, "unpack", "zip-slip"),
    "absolute-path": ({}, [plain_member("/tmp/crosslane-evil.txt")], GOOD_NAME, None, "unpack", "absolute-path"),
    "symlink": ({}, [symlink_member("demo/passwd", "/etc/passwd")], GOOD_NAME, None, "unpack", "symlink"),
    "bomb": ({}, [plain_member("demo/zeros.bin", bytes(48 << 20))], GOOD_NAME, None, "unpack", "bomb"),
    "duplicate": ({"demo/x.py": b"a"}, [plain_member("demo/x.py", b"evil")], GOOD_NAME, None, "unpack",
                  "duplicate"),
    "truncated-so": ({"demo/libdemo.so": RISCV[:30]}, [], GOOD_NAME, None, "elf-arch", "DEFECT demo/libdemo.so"),
    "record-hash": ({"demo/libdemo.so": RISCV}, [], GOOD_NAME, {"demo/libdemo.so": RISCV + b"patched"}, "record",
                    "demo/libdemo.so: RECORD says sha256="),
    "host-ext-suffix": ({"demo/_core.cpython-313-x86_64-linux-gnu.so": RISCV}, [], GOOD_NAME, None, "ext-suffix",
                        "suffix for x86_64-linux-gnu, expected .cpython-313-riscv64-linux-gnu.so"),
    "wrong-tag": ({"demo/libdemo.so": RISCV}, [], "demo-1.0-cp313-cp313-manylinux_2_28_x86_64.whl", None,
                  "platform-tag", "platform tag manylinux_2_28_x86_64"),
}


@pytest.mark.parametrize("case", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_wheel_fails_by_name_and_writes_nothing_outside_temp(sandbox: Path, case: str) -> None:
    files, raw, name, tamper, step, reason = HOSTILE[case]
    wheel = make_wheel(sandbox / "in", name, files, tamper=tamper, raw=raw)
    before = everything(sandbox)
    rows = gate.verify_wheel(wheel, Arch.RISCV64)
    failed = fails(rows)
    assert [(r.subject, reason in r.reason) for r in failed] == [(step, True)], failed
    assert everything(sandbox) == before, "the gate left files behind"
    assert not Path("/tmp/crosslane-evil.txt").exists()


@pytest.mark.parametrize("case", list(HOSTILE), ids=list(HOSTILE))
def test_hostile_wheel_exits_1_without_traceback(sandbox: Path, case: str, repo: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    files, raw, name, tamper, step, _ = HOSTILE[case]
    wheel = make_wheel(sandbox / "in", name, files, tamper=tamper, raw=raw)
    code = commands.run(gate_tasks.verify("riscv64", [str(wheel)]), config_path=str(repo / "versions.toml"))
    out, err = capsys.readouterr()
    assert code == 1
    assert "Traceback" not in out + err
    assert f" gate:{step} " in out and "FAIL" in out


def test_total_size_bound(sandbox: Path) -> None:
    wheel = make_wheel(sandbox / "in", GOOD_NAME, {"demo/a.bin": bytes(4096), "demo/b.bin": bytes(4096)})
    rows = gate.verify_wheel(wheel, Arch.RISCV64, limits=wheelzip.Limits(max_total_bytes=6000))
    assert [r.reason.split(": ")[1] for r in fails(rows)] == ["bomb"]


def test_file_missing_from_record_fails(sandbox: Path) -> None:
    wheel = make_wheel(sandbox / "in", GOOD_NAME, {"demo/__init__.py": b""}, raw=[plain_member("demo/extra.py")])
    rows = fails(gate.verify_wheel(wheel, Arch.RISCV64))
    assert [r.subject for r in rows] == ["record"]
    assert "demo/extra.py: not listed in RECORD" in rows[0].reason


def test_not_a_zip_fails_as_corrupt(sandbox: Path) -> None:
    wheel = sandbox / "in" / GOOD_NAME
    wheel.write_bytes(b"PK not really")
    rows = fails(gate.verify_wheel(wheel, Arch.RISCV64))
    assert [r.subject for r in rows] == ["unpack"] and "corrupt zip" in rows[0].reason


@pytest.mark.parametrize(("platform", "arch", "ok"), [
    ("manylinux_2_28_aarch64", Arch.ARM64, True), ("linux_aarch64", Arch.ARM64, True),
    ("manylinux2014_aarch64", Arch.ARM64, True), ("musllinux_1_2_aarch64", Arch.ARM64, True),
    ("linux_riscv64", Arch.RISCV64, True), ("manylinux_2_17_x86_64", Arch.AMD64, True),
    ("manylinux_2_28_aarch64", Arch.RISCV64, False), ("linux_x86_64", Arch.RISCV64, False),
    ("win_amd64", Arch.AMD64, False), ("macosx_11_0_arm64", Arch.ARM64, False),
], ids=lambda v: str(v))
def test_platform_tag_matching(platform: str, arch: Arch, ok: bool) -> None:
    assert gate.platform_matches(platform, arch) is ok


def test_python_version_from_tag() -> None:
    assert gate.wheel_tags("x-1.0-cp313-cp313-linux_riscv64.whl").python_version == "3.13"
    assert gate.wheel_tags("x-1.0-cp39-abi3-linux_riscv64.whl").python_version is None


def test_invalid_wheel_name_fails(sandbox: Path) -> None:
    wheel = make_wheel(sandbox / "in", "not-a-wheel-name.whl", {"demo/__init__.py": b""})
    rows = fails(gate.verify_wheel(wheel, Arch.RISCV64))
    assert rows[0].subject == "platform-tag" and "invalid wheel name" in rows[0].reason


def test_extension_without_suffix_fails_only_when_it_is_one(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, GOOD_NAME, {"demo/_core.abi3.so": RISCV, "demo/libplain.so": RISCV})
    rows = gate.verify_wheel(wheel, Arch.RISCV64)
    assert fails(rows) == []
    assert [r.reason for r in rows if r.subject == "ext-suffix"] == ["stable ABI (.abi3.so)"]


def test_require_wheel(tmp_path: Path) -> None:
    with pytest.raises(VerdictFailed, match="produced no wheel"):
        gate.require_wheel(tmp_path)
    with pytest.raises(VerdictFailed, match="produced no wheel"):
        gate.require_wheel(tmp_path / "never-created")
    (tmp_path / GOOD_NAME).write_bytes(b"")
    assert gate.require_wheel(tmp_path) == [tmp_path / GOOD_NAME]

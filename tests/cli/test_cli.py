"""The entry points as a user runs them: invoke and nox, real processes."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.host import hostsetup

pytestmark = pytest.mark.spawns
BIN = Path(sys.executable).parent


def invoke(repo: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "invoke"), "--search-root", str(repo), *args], capture_output=True, text=True,
                          cwd=cwd or repo, timeout=120, env={**os.environ, "CI": "true"})


def test_invoke_list_shows_every_task(repo: Path) -> None:
    out = invoke(repo, "--list").stdout
    for name in ("setup", "sysroot", "build", "smoke", "all"):
        assert f"  {name} " in out


def test_bad_config_through_invoke_is_one_line_exit_2(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "components" / "canary").mkdir(parents=True)
    bad = tmp_path / "versions.toml"
    bad.write_text((repo / "versions.toml").read_text().replace('"amd64", "arm64", "riscv64"]',
                                                               '"amd64", "arm64", "riscv"]', 1))
    done = invoke(repo, "build", "--arch", "riscv64", "--config", str(bad))
    assert done.returncode == 2
    assert done.stderr.strip() == ("crosslane: error: versions.toml: components.canary.arches[2]: unknown arch "
                                   "'riscv' (known: amd64, arm64, riscv64)")


def test_unknown_arch_argument(repo: Path) -> None:
    done = invoke(repo, "build", "--arch", "mips")
    assert done.returncode == 2
    assert "--arch: unknown arch 'mips' (known: amd64, arm64, riscv64)" in done.stderr
    assert "Traceback" not in done.stderr


def test_nox_lists_sessions_per_arch(repo: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "nox", "-l", "-f", str(repo / "noxfile.py")], capture_output=True,
                          text=True, timeout=60)
    for arch in Arch:
        assert f"build-{arch}" in done.stdout and f"smoke-{arch}" in done.stdout
    assert "tests" in done.stdout and "lint" in done.stdout and "bench" in done.stdout


def test_setup_packages_and_dpkg_query(cfg: Config) -> None:
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    wanted = hostsetup.packages_needed(cfg, [Arch.RISCV64])
    assert {"gcc-riscv64-linux-gnu", "clang-19", "qemu-user-static"} <= set(wanted)
    assert "gcc-aarch64-linux-gnu" not in wanted
    # A tool root (a component's Rust, or an arch's qemu-user) needs mmdebstrap; without either, none.
    assert "mmdebstrap" in hostsetup.packages_needed(cfg, [Arch.RISCV64], ["onnxruntime-genai"])
    assert "mmdebstrap" not in hostsetup.packages_needed(cfg, [Arch.RISCV64], ["cpuinfo"])
    assert "mmdebstrap" in hostsetup.packages_needed(cfg, [Arch.ARM64], ["cpuinfo"])  # arches.arm64.emulator
    host_qemu = dataclasses.replace(cfg, arches={**cfg.arches, Arch.ARM64: dataclasses.replace(
        cfg.arches[Arch.ARM64], emulator=None)})
    assert "mmdebstrap" not in hostsetup.packages_needed(host_qemu, [Arch.ARM64], ["cpuinfo"])
    runner = Runner(Log())
    assert hostsetup.missing_packages(runner, ["dpkg", "no-such-package-xyz"]) == ("no-such-package-xyz",)


@pytest.mark.parametrize("args", [
    ("verify", "--arch", "arm64", "--path", ""),
    ("verify", "--arch", "arm64", "--staging", "", "--path", "x.whl"),
    ("parity", "--arch", "riscv64", "--path", ""),
    ("pack", "--arch", "riscv64", "--component", "cpuinfo", "--output", ""),
    ("unpack", "--input", ""),
    ("report-diff", "", "old.json"),
    ("report-diff", "old.json", ""),  # named even though OLD does not exist either
    ("consistency", "--json", ""),  # the rows would be written nowhere, silently
    ("consistency", "--config", ""),  # the default versions.toml instead of the one meant
    ("index", "--input", ""),  # every wheel of the build tree instead of the downloaded ones
    ("index", "--output", ""),
    ("report", "--input", "", "--output", "x"),
    ("floors", "--check", ""),
    ("patch", "--component", "cpuinfo", "--arch", "riscv64", "--source-dir", ""),
    ("actions", "--repo", ""),
    ("matrix", "--config", ""),
])
def test_an_empty_path_is_a_usage_error_not_the_current_folder(repo: Path, args: tuple[str, ...]) -> None:
    # `--path "$WHEEL"` with WHEEL unset: before, verify and parity scanned the current folder and failed its files.
    done = invoke(repo, *args)
    option = ("OLD" if args[1] == "" else "NEW") if "report-diff" in args else args[args.index("") - 1]
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"crosslane: error: {option} '': an empty path"), done.stderr
    assert "Traceback" not in done.stderr

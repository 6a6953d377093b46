"""Hostile input, third round (issue 40), each case a real `invoke` process: a credential in the shared-cache URL
is printed nowhere, a malformed one stops every build before anything is removed, a dry run writes nothing,
selections that select nothing are refused, test names from a target cannot forge output, cache manifests and
packs that crossed a job cannot crash a reader or pass as verified. Every refusal: its exit code, one error line,
no traceback."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane import stamps
from crosslane.archs import Arch
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from hostilekit import BIN, REPO, Done, Sandbox, snapshot

pytestmark = [pytest.mark.spawns]

SECRET = "s3cr3t-Pa55"


def invoke(*args: str, env: dict[str, str], timeout: float = 600) -> Done:
    done = subprocess.run([str(BIN / "invoke"), "--search-root", str(REPO), *args], cwd=REPO,
                          env={**os.environ, "CROSSLANE_NO_WAIT": "1", **env}, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                          timeout=timeout)
    return Done(done.returncode, done.stdout)


def everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink())


@pytest.fixture
def built(tmp_path: Path, sysroots: object) -> dict[str, str]:
    """The canary built for riscv64 in a build folder of the test's own (the real cache's sysroot)."""
    env = {"CROSSLANE_BUILD_DIR": str(tmp_path / "build"), "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    done = invoke("build", "--arch", "riscv64", "--component", "canary", env=env)
    assert done.rc == 0, done.out
    return env


# --- 1, 2: a credential in CROSSLANE_CCACHE_REMOTE --------------------------------------------------------------

@pytest.mark.hostile("1-2 credentials in the shared-cache URL")
@pytest.mark.cross
@pytest.mark.parametrize("url", [f"redis://user:{SECRET}@127.0.0.1:1", f"http://user:{SECRET}@127.0.0.1:1/cache",
                                 f"redis://{SECRET}@127.0.0.1:1"],
                         ids=["redis-user-password", "http", "redis-password"])
def test_a_credential_is_printed_nowhere(built: dict[str, str], tmp_path: Path, url: str) -> None:
    env = {**built, "CROSSLANE_CCACHE_REMOTE": url}
    done = invoke("build", "--arch", "riscv64", "--component", "canary", "--force", "--json",
                  str(tmp_path / "report.json"), env=env)
    assert done.rc == 0, done.out
    assert SECRET not in done.out and "CCACHE_REMOTE_STORAGE=" in done.out  # shown, redacted
    assert SECRET.encode() not in everything_under(tmp_path)  # reports, stamps, summary, logs: every file


@pytest.mark.hostile("1-2 credentials in the shared-cache URL")
@pytest.mark.cross
@pytest.mark.parametrize("url", [f"redis://u:{SECRET}@host\nx", f"redis://u:{SECRET}@host|attr",
                                 f"redis ://u:{SECRET}@h"], ids=["newline", "attribute", "space"])
@pytest.mark.parametrize("how", [("--force",), ("--dry-run",), ()], ids=["force", "dry-run", "up-to-date"])
def test_a_malformed_url_stops_every_build_before_anything_changes(built: dict[str, str], tmp_path: Path, url: str,
                                                                   how: tuple[str, ...]) -> None:
    folder = tmp_path / "build" / "riscv64" / "canary"
    before = snapshot(folder, ())
    done = invoke("build", "--arch", "riscv64", "--component", "canary", *how,
                  env={**built, "CROSSLANE_CCACHE_REMOTE": url})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "CROSSLANE_CCACHE_REMOTE is not a ccache remote storage URL" in done.errors[0]
    assert SECRET not in done.out and "Traceback" not in done.out
    assert snapshot(folder, ()) == before  # the install folder and its stamp as they were


@pytest.mark.hostile("1-2 credentials in the shared-cache URL")
@pytest.mark.parametrize("text", [f"redis://user:{SECRET}@h:1", f"redis://:{SECRET}@h", f"https://{SECRET}@h/x",
                                  f"redis://u:{SECRET}/x@h", f"redis://u:{SECRET}@x@h", f"a='redis://u:{SECRET}@h' b"],
                         ids=["user-password", "password", "token", "slash-in-password", "at-in-password", "quoted"])
def test_a_url_credential_is_redacted_whatever_it_holds(text: str) -> None:
    from crosslane.log import redact
    shown = redact(text)
    assert SECRET not in shown and "***@" in shown, shown


@pytest.mark.hostile("1-2 credentials in the shared-cache URL")
@pytest.mark.parametrize("url", [f"u:{SECRET}@redis://h", f"{SECRET}redis://h", f"{SECRET} redis://h"],
                         ids=["credential-before-scheme", "glued", "spaced"])
def test_a_malformed_url_is_named_without_its_text(url: str) -> None:
    from crosslane.errors import ConfigError
    from crosslane.recipes import cmake
    with pytest.raises(ConfigError) as caught:
        cmake.remote_cache({"CROSSLANE_CCACHE_REMOTE": url})
    assert SECRET not in caught.value.one_line() and "no known scheme" in caught.value.one_line()


@pytest.mark.hostile("1-2 credentials in the shared-cache URL")
@pytest.mark.cross
def test_a_malformed_url_stops_a_dry_run_of_the_whole_job(tmp_path: Path, sysroots: object) -> None:
    build = tmp_path / "build"
    done = invoke("all", "--arch", "riscv64", "--component", "canary", "--dry-run",
                  env={"CROSSLANE_BUILD_DIR": str(build), "CROSSLANE_CCACHE_REMOTE": f"redis://u:{SECRET}@h|x"})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "CROSSLANE_CCACHE_REMOTE" in done.errors[0], done.out
    assert SECRET not in done.out and not build.exists()


# --- 3: a dry run writes nothing ----------------------------------------------------------------------------------

@pytest.mark.hostile("3 dry runs")
@pytest.mark.cross
def test_a_dry_run_of_a_wheel_lane_writes_nothing(tmp_path: Path, sysroots: object) -> None:
    build = tmp_path / "build"
    earlier = build / "riscv64/onnxruntime-genai/wheels/cp314-linux_riscv64/install/dist"
    earlier.mkdir(parents=True)
    (earlier / "onnxruntime_genai-0.15.2-cp314-cp314-linux_riscv64.whl").write_bytes(b"an earlier build's wheel")
    before = snapshot(build, ())
    done = invoke("build", "--arch", "riscv64", "--component", "onnxruntime-genai", "--dry-run",
                  env={"CROSSLANE_BUILD_DIR": str(build)})
    assert done.rc == 0, done.out
    assert "Traceback" not in done.out and not re.search(r"\bPASS\s+(\S+s/\S+s\s+)?built", done.out)
    assert snapshot(build, ()) == before
    pack = invoke("pack", "--arch", "riscv64", "--component", "onnxruntime-genai", "--output",
                  str(tmp_path / "genai.tar.gz"), env={"CROSSLANE_BUILD_DIR": str(build)})
    assert pack.rc == 2 and len(pack.errors) == 1 and "not built" in pack.errors[0], pack.out


# --- 5: selections that select nothing -----------------------------------------------------------------------------

@pytest.mark.hostile("5 selections of nothing")
@pytest.mark.cross
@pytest.mark.parametrize("selection", [("--build", "cp99-*"), ()], ids=["option", "environment"])
@pytest.mark.parametrize("command", ["build", "all"])
def test_a_build_selection_of_nothing_is_refused(tmp_path: Path, sysroots: object, selection: tuple[str, ...],
                                                 command: str) -> None:
    env = {"CROSSLANE_BUILD_DIR": str(tmp_path / "build"), **({} if selection else {"CROSSLANE_BUILD": "cp99-*"})}
    done = invoke(command, "--arch", "riscv64", "--component", "onnxruntime-genai", "--dry-run", *selection,
                  env=env)
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "no build identifier matches cp99-*" in done.errors[0], done.out
    assert "Traceback" not in done.out


@pytest.mark.hostile("5 selections of nothing")
def test_a_case_that_is_no_model_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    done = box.refused(2, "--case bogus: not a model of any [cases.*] matrix", "smoke", "--arch", "riscv64",
                       "--component", "executorch-portable", "--case", "bogus")
    assert "did you mean" in done.errors[0] or "known" in done.errors[0]


@pytest.mark.hostile("5 selections of nothing")
@pytest.mark.parametrize(("args", "words"), [
    (("smoke", "--arch", "riscv64", "--cpu", "--json", "x.json"), "invoke smoke: Flag '--cpu' needed value"),
    (("build", "--arch", "riscv64", "--no-such-flag"), "invoke build: No idea what '--no-such-flag' is"),
], ids=["flag-without-value", "unknown-flag"])
def test_invokes_own_argument_errors_are_one_crosslane_line(args: tuple[str, ...], words: str) -> None:
    done = invoke(*args, env={})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and words in done.errors[0] and "see invoke --help" in done.errors[0], done.out
    assert done.out.strip() == done.errors[0] and "Traceback" not in done.out


# --- 8: cache manifests -------------------------------------------------------------------------------------------

CORRUPT = ["{", "[]", '{"packages": 5}', '{"packages": [{"package": 1}]}']


@pytest.mark.hostile("8 cache manifests")
@pytest.mark.parametrize("text", CORRUPT, ids=["cut", "list", "number", "wrong-type"])
def test_a_sysroot_manifest_crosslane_did_not_write(tmp_path: Path, text: str) -> None:
    box = Sandbox(tmp_path)
    cfg = config_mod.load(REPO / "versions.toml")
    path = box.cache / "sysroots" / sysroot_mod.sysroot_path(cfg.sysroot, Arch.RISCV64).name
    path.mkdir(parents=True)
    (path / sysroot_mod.MANIFEST).write_text(text)
    box.refused(6, sysroot_mod.MANIFEST, "sysroot", "--arch", "riscv64")


@pytest.mark.hostile("8 cache manifests")
@pytest.mark.parametrize("text", CORRUPT, ids=["cut", "list", "number", "wrong-type"])
def test_a_tool_root_manifest_crosslane_did_not_write(tmp_path: Path, text: str) -> None:
    box = Sandbox(tmp_path)
    cfg = config_mod.load(REPO / "versions.toml")
    spec = cfg.toolroots["qemu-user"]
    path = box.cache / "toolroots" / toolroot.root_path(spec).name
    path.mkdir(parents=True)
    (path / toolroot.MANIFEST).write_text(text)
    box.refused(6, toolroot.MANIFEST, "sources", "--arch", "arm64", "--component", "canary")


# --- 9: packs ----------------------------------------------------------------------------------------------------

@pytest.mark.hostile("9 packs")
@pytest.mark.cross
@pytest.mark.parametrize("output", ["/dev/full", "/dev/null"])
def test_a_pack_is_written_to_a_regular_file_only(built: dict[str, str], output: str) -> None:
    done = invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", output, env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "not a regular file" in done.errors[0], done.out
    assert Path(output).is_char_device()


@pytest.mark.hostile("9 packs")
@pytest.mark.cross
def test_a_pack_whose_gzip_trailer_is_wrong_is_refused(built: dict[str, str], tmp_path: Path) -> None:
    pack = tmp_path / "canary.tar.gz"
    assert invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", str(pack), env=built).rc == 0
    data = bytearray(pack.read_bytes())
    data[-8] ^= 0xFF  # the CRC-32 of gzip's trailer (the last 8 bytes: CRC-32, size)
    pack.write_bytes(bytes(data))
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(bytes(data))
    folder = tmp_path / "build" / "riscv64" / "canary"
    stamp = stamps.read(folder)
    done = invoke("unpack", "--input", str(pack), env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "not a readable pack" in done.errors[0], done.out
    assert stamps.read(folder) == stamp and json.dumps(stamp)


@pytest.mark.hostile("9 packs")
@pytest.mark.cross
def test_a_pack_recompressed_with_xz_and_corrupted_is_refused(built: dict[str, str], tmp_path: Path) -> None:
    """tarfile reads any compression: a corrupt xz stream (lzma's own error, not an OSError) is one line too."""
    import lzma
    pack = tmp_path / "canary.tar.gz"
    assert invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", str(pack), env=built).rc == 0
    data = bytearray(lzma.compress(gzip.decompress(pack.read_bytes())))
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))
    done = invoke("unpack", "--input", str(pack), env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "Traceback" not in done.out, done.out

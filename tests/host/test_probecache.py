"""A version probe that fails says why: the last line its program printed (a tool root's wrapper that cannot enter
the root prints the reason), never a bare "failed"; and a failure is not cached."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.errors import MissingPrerequisite
from crosslane.host import probecache, toolchains
from crosslane.log import Log
from crosslane.process.runner import Runner

pytestmark = pytest.mark.spawns


def test_a_failed_version_probe_carries_its_last_line_and_is_asked_again(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\necho first >&2\necho 'crosslane: cannot enter the root /r: no such folder' >&2\n"
                    "exit 125\n")
    tool.chmod(0o755)
    runner = Runner(Log(io.StringIO()))
    found = probecache.version_output(runner, [str(tool), "--version"])
    assert found == probecache.Failed("exit status 125: crosslane: cannot enter the root /r: no such folder")
    assert not list((tmp_path / "cache").rglob("version-*.json"))  # a failure is not cached
    tool.write_text("#!/bin/sh\necho 'tool 1.2'\n")
    assert probecache.version_output(runner, [str(tool), "--version"]) == "tool 1.2"


def test_a_damaged_cache_entry_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    key: dict[str, object] = {"binary": "x"}
    probecache.write_cached("version", key, "1.0")
    assert probecache.read_cached("version", key) == "1.0"
    probecache.cache_file("version", key).write_text("[" * 100_000 + "]" * 100_000)
    assert probecache.read_cached("version", key) is None


def test_a_compiler_that_prints_no_version_is_no_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    tool = tmp_path / "riscv64-linux-gnu-gcc"
    tool.write_text("#!/bin/sh\necho 'gcc: warning: spec file ignored'\n")
    tool.chmod(0o755)
    with pytest.raises(MissingPrerequisite, match=r"-dumpfullversion printed 'gcc: warning: spec file ignored', "
                                                  r"not a version"):
        toolchains._version(Runner(Log(io.StringIO())), str(tool), "-dumpfullversion")


def test_a_link_in_the_cache_that_loops_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "shared").symlink_to("shared")
    with pytest.raises(MissingPrerequisite, match=r"cache/shared: a link in the cache that leads nowhere"):
        toolchains.places_for(Runner(Log(io.StringIO())), tmp_path)

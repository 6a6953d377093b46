"""A version probe that fails says why: the last line its program printed (a tool root's wrapper that cannot enter
the root prints the reason), never a bare "failed"; and a failure is not cached."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from crosslane.host import probecache
from crosslane.log import Log
from crosslane.runner import Runner

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

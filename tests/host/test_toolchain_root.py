"""A toolchain's compilers from a tool root: the wrappers' identity follows what the root holds."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from crosslane.config import ToolRootSpec
from crosslane.host import toolchains, toolroot
from crosslane.log import Log
from crosslane.runner import Runner

pytestmark = pytest.mark.spawns  # the entry probe runs unshare

SPEC = ToolRootSpec(name="cc", suite="forky", mirror="http://deb.debian.org/debian", packages=("gcc-x",),
                    architectures=("amd64",))


def test_a_root_made_again_with_another_compiler_gets_other_wrappers(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    runner = Runner(Log(io.StringIO()))
    if toolroot.entry_mode(runner) is None:
        pytest.skip("this host lets no process enter a tool root: " + toolroot.ENTRY_FIX)
    root = toolroot.root_path(SPEC)
    root.mkdir(parents=True)
    places = toolchains.RootPlaces(binds=(tmp_path / "build",), read_only=(tmp_path / "cache",))
    found = []
    for version in ("16.1.0-1", "16.2.0-1"):  # the same spec, a rolling suite: another compiler inside
        (root / toolroot.MANIFEST).write_text(json.dumps({"inputs": {}, "packages": {"gcc-x:amd64": version}}))
        wrappers = toolchains.root_wrappers(runner, SPEC, ("x-gcc",), places)
        found.append(Path(wrappers["x-gcc"]))
        assert found[-1].is_file() and "enter_root.py" in found[-1].read_text()
    assert found[0] != found[1] and found[0].parent.parent == found[1].parent.parent == tmp_path / "cache/toolchains"

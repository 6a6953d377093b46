"""What a build compiles: the pristine tree, or a per-arch patched copy; patches feed the build stamp."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.files import stamps
from crosslane.sources import worktree
from crosslane_helpers import diff, patch_entry, quiet_context, tree_hash, write_config_text, write_patch

ORIGINAL = b"alpha\nbeta\ngamma\ndelta\n"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))


def setup_component(root: Path, new_beta: str = "BETA") -> Context:
    pristine = root / "components/demo"
    pristine.mkdir(parents=True, exist_ok=True)
    (pristine / "f.txt").write_bytes(ORIGINAL)
    data = diff("f.txt", ORIGINAL, ORIGINAL.replace(b"beta", new_beta.encode()))
    entry = patch_entry("demo/001.patch", write_patch(root, "demo/001.patch", data), ["riscv64"])
    cfg = write_config_text(root, f"""
[components.demo]
source = {{ kind = "tree", path = "components/demo" }}
arches = ["amd64", "riscv64"]
patches = [{entry}]
""")
    return quiet_context(cfg)


@pytest.mark.spawns
def test_patched_arch_gets_a_copy_and_the_pristine_tree_is_untouched(tmp_path: Path) -> None:
    ctx = setup_component(tmp_path)
    pristine = tmp_path / "components/demo"
    before = tree_hash(pristine)
    component = ctx.config.components["demo"]
    rv = worktree.prepare(ctx, component, Arch.RISCV64)
    assert rv.path == tmp_path / "build/riscv64/demo/src"
    assert (rv.path / "f.txt").read_bytes() == b"alpha\nBETA\ngamma\ndelta\n"
    assert [r.reason for r in rv.rows] == ["demo/001.patch: APPLICABLE→applied"]
    again = worktree.prepare(ctx, component, Arch.RISCV64)
    assert [r.reason for r in again.rows] == ["demo/001.patch: APPLIED (already; skipped)"]
    amd = worktree.prepare(ctx, component, Arch.AMD64)
    assert amd.path == pristine
    assert [r.verdict.value for r in amd.rows] == ["SKIP"]
    assert tree_hash(pristine) == before


@pytest.mark.spawns
def test_changing_a_patch_changes_the_stamp_and_remakes_the_copy(tmp_path: Path) -> None:
    ctx = setup_component(tmp_path)
    first = worktree.prepare(ctx, ctx.config.components["demo"], Arch.RISCV64)
    ctx2 = setup_component(tmp_path, new_beta="Beta!")
    second = worktree.prepare(ctx2, ctx2.config.components["demo"], Arch.RISCV64)
    assert first.patch_inputs != second.patch_inputs
    assert stamps.key({"patches": first.patch_inputs}) != stamps.key({"patches": second.patch_inputs})
    assert (second.path / "f.txt").read_bytes() == b"alpha\nBeta!\ngamma\ndelta\n"
    assert [r.reason for r in second.rows] == ["demo/001.patch: APPLICABLE→applied"]


@pytest.mark.spawns
def test_a_copy_interrupted_mid_series_is_made_anew(tmp_path: Path) -> None:
    """A kill between the copy and the end of the series leaves a marker saying so: the next run recopies."""
    import json

    ctx = setup_component(tmp_path)
    component = ctx.config.components["demo"]
    first = worktree.prepare(ctx, component, Arch.RISCV64)
    marker = tmp_path / "build/riscv64/demo" / worktree.MARKER
    data = json.loads(marker.read_text())
    assert data["patched"] is True
    (first.path / "f.txt").write_bytes(b"alpha\nhalf-written\n")
    marker.write_text(json.dumps({**data, "patched": False}))
    again = worktree.prepare(ctx, component, Arch.RISCV64)
    assert [r.reason for r in again.rows] == ["demo/001.patch: APPLICABLE→applied"]
    assert (again.path / "f.txt").read_bytes() == b"alpha\nBETA\ngamma\ndelta\n"


@pytest.mark.spawns
def test_a_new_source_dirname_leaves_no_old_copy_beside_it(tmp_path: Path) -> None:
    import dataclasses

    ctx = setup_component(tmp_path)
    component = ctx.config.components["demo"]
    worktree.prepare(ctx, component, Arch.RISCV64)
    named = dataclasses.replace(component, source_dirname="demo")
    again = worktree.prepare(ctx, named, Arch.RISCV64)
    assert again.path == tmp_path / "build/riscv64/demo/src/demo"
    assert sorted(p.name for p in (tmp_path / "build/riscv64/demo/src").iterdir()) == ["demo"]
    assert (again.path / "f.txt").read_bytes() == b"alpha\nBETA\ngamma\ndelta\n"

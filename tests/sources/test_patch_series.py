"""Patch series whose state is the series' own: overlapping hunks, created/deleted/renamed files, CRLF, -p0,
a 30-patch series, partial states and a failure half way through an apply — each checked against real GNU
`patch` applied in order."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import PatchConflict
from crosslane.process.runner import Result
from crosslane.sources import patches
from crosslane.sources.patches import State
from crosslane_helpers import diff, edit, quiet_context, sha256, tree_hash, write_config_text

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("patch series")]
BASE = b"".join(f"line {i}\n".encode() for i in range(1, 41))


def created(name: str, data: bytes) -> bytes:
    body = "".join(f"+{line}" for line in data.decode().splitlines(keepends=True))
    return f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,{len(data.splitlines())} @@\n{body}".encode()


def deleted(name: str, data: bytes) -> bytes:
    body = "".join(f"-{line}" for line in data.decode().splitlines(keepends=True))
    return f"--- a/{name}\n+++ /dev/null\n@@ -1,{len(data.splitlines())} +0,0 @@\n{body}".encode()


def renamed(old: str, new: str) -> bytes:
    return (f"diff --git a/{old} b/{new}\nsimilarity index 100%\nrename from {old}\nrename to {new}\n").encode()


class Series:
    """A tree (src.txt, gone.txt, old.txt) and a component whose patches are *diffs*, in order."""

    def __init__(self, root: Path, diffs: list[bytes], strips: list[int] | None = None,
                 files: dict[str, bytes] | None = None) -> None:
        self.root = root
        self.tree = root / "upstream"
        self.tree.mkdir()
        for name, data in (files or {"src.txt": BASE, "gone.txt": b"bye\n", "old.txt": b"moving\n"}).items():
            (self.tree / name).write_bytes(data)
        self.pristine = root / "pristine"
        shutil.copytree(self.tree, self.pristine)
        entries = []
        self.paths = []
        for index, data in enumerate(diffs):
            rel = f"demo/{index:03d}.patch"
            path = root / "patches" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            self.paths.append(path)
            strip = (strips or [1] * len(diffs))[index]
            entries.append(f'{{ path = "{rel}", sha256 = "{sha256(data)}", strip = {strip} }}')
        (root / "components/demo").mkdir(parents=True)
        self.cfg = write_config_text(root, f"""
[components.demo]
source = {{ kind = "tree", path = "components/demo" }}
arches = ["riscv64"]
patches = [{", ".join(entries)}]
""")
        self.ctx = quiet_context(self.cfg)
        self.strips = strips or [1] * len(diffs)

    def apply(self) -> list[State]:
        steps = patches.apply(self.ctx.runner, self.cfg.root, self.cfg.components["demo"], Arch.RISCV64, self.tree)
        return [s.state for s in steps]

    def states(self) -> list[State]:
        plan = patches.plan(self.ctx.runner, self.cfg.root, self.cfg.components["demo"], Arch.RISCV64, self.tree)
        return [s.state for s in plan]

    def reference(self, count: int | None = None) -> str:
        """The tree digest GNU patch gives applying the first *count* patches in order, by hand."""
        ref = self.root / f"reference-{count}"
        shutil.rmtree(ref, ignore_errors=True)
        shutil.copytree(self.pristine, ref)
        for path, strip in list(zip(self.paths, self.strips, strict=True))[:count]:
            subprocess.run(["patch", f"-p{strip}", "--batch", "-F0", "-s", "-i", str(path)], cwd=ref, check=True)
        return tree_hash(ref)

    def apply_by_hand(self, count: int) -> None:
        for path, strip in list(zip(self.paths, self.strips, strict=True))[:count]:
            subprocess.run(["patch", f"-p{strip}", "--batch", "-F0", "-s", "-i", str(path)], cwd=self.tree,
                           check=True)


def overlapping() -> list[bytes]:
    """Patch 2 rewrites the very line patch 1 wrote: patch 1 alone no longer reverses once 2 is in."""
    one = edit(BASE, 10, "one")
    two = edit(one, 10, "two")
    return [diff("src.txt", BASE, one), diff("src.txt", one, two)]


def test_overlapping_hunks_are_applied_then_applied_again_as_a_no_op(tmp_path: Path) -> None:
    fx = Series(tmp_path, overlapping())
    assert fx.apply() == [State.APPLICABLE, State.APPLICABLE]
    assert tree_hash(fx.tree) == fx.reference()
    assert fx.states() == [State.APPLIED, State.APPLIED]  # per-patch reverse checks said CONFLICT here
    assert fx.apply() == [State.APPLIED, State.APPLIED] and tree_hash(fx.tree) == fx.reference()


def test_create_then_edit_delete_rename_and_crlf(tmp_path: Path) -> None:
    crlf = b"a\r\nb\r\nc\r\n"
    new = b"fresh 1\nfresh 2\n"
    diffs = [created("new.txt", new), diff("new.txt", new, b"fresh 1\nedited 2\n"), deleted("gone.txt", b"bye\n"),
             renamed("old.txt", "moved.txt"), diff("crlf.txt", crlf, b"a\r\nB\r\nc\r\n")]
    fx = Series(tmp_path, diffs, files={"src.txt": BASE, "gone.txt": b"bye\n", "old.txt": b"moving\n",
                                        "crlf.txt": crlf})
    assert fx.apply() == [State.APPLICABLE] * 5
    assert tree_hash(fx.tree) == fx.reference()
    assert (fx.tree / "new.txt").read_bytes() == b"fresh 1\nedited 2\n" and not (fx.tree / "gone.txt").exists()
    assert (fx.tree / "moved.txt").read_bytes() == b"moving\n" and (fx.tree / "crlf.txt").read_bytes() == \
        b"a\r\nB\r\nc\r\n"
    assert fx.states() == [State.APPLIED] * 5


def test_p0_and_p1_in_one_series(tmp_path: Path) -> None:
    one = edit(BASE, 3, "p1 edit")
    plain = diff("src.txt", one, edit(one, 30, "p0 edit")).replace(b"--- a/", b"--- ").replace(b"+++ b/", b"+++ ")
    fx = Series(tmp_path, [diff("src.txt", BASE, one), plain], strips=[1, 0])
    assert fx.apply() == [State.APPLICABLE, State.APPLICABLE]
    assert tree_hash(fx.tree) == fx.reference() and fx.states() == [State.APPLIED, State.APPLIED]


def long_series(count: int = 32) -> list[bytes]:
    """Every patch edits the line the previous one wrote, and one more line of its own."""
    diffs, text = [], BASE
    for index in range(count):
        after = edit(edit(text, 20, f"shared {index}"), 1 + index % 40, f"own {index}")
        diffs.append(diff("src.txt", text, after))
        text = after
    return diffs


def test_a_long_overlapping_series_equals_patch_in_order(tmp_path: Path) -> None:
    fx = Series(tmp_path, long_series())
    assert fx.apply() == [State.APPLICABLE] * 32
    assert tree_hash(fx.tree) == fx.reference()
    assert fx.states() == [State.APPLIED] * 32


@pytest.mark.parametrize("done", [1, 17, 31])
def test_a_partial_series_applies_the_rest(tmp_path: Path, done: int) -> None:
    fx = Series(tmp_path, long_series())
    fx.apply_by_hand(done)
    assert fx.states() == [State.APPLIED] * done + [State.APPLICABLE] * (32 - done)
    fx.apply()
    assert tree_hash(fx.tree) == fx.reference()


def test_no_prefix_fits_is_a_conflict_and_the_tree_is_untouched(tmp_path: Path) -> None:
    fx = Series(tmp_path, overlapping())
    (fx.tree / "src.txt").write_bytes(edit(BASE, 10, "somebody else"))
    before = tree_hash(fx.tree)
    with pytest.raises(PatchConflict) as caught:
        fx.apply()
    assert caught.value.exit_code == 4 and "000.patch" in caught.value.message
    assert tree_hash(fx.tree) == before


def test_a_failure_half_way_restores_the_tree_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """patch writes some files of patch 2, then fails (as on an unwritable folder): nothing of the run stays."""
    two_files = diff("src.txt", BASE, edit(BASE, 5, "five")) + diff("other.txt", b"x\n", b"y\n")
    fx = Series(tmp_path, [diff("src.txt", edit(BASE, 5, "five"), edit(edit(BASE, 5, "five"), 30, "thirty")),
                           two_files][::-1], files={"src.txt": BASE, "other.txt": b"x\n"})
    before = tree_hash(fx.tree)
    real = patches._patch

    def failing(runner: object, tree: Path, spec: object, *, reverse: bool = False, dry_run: bool = True) -> Result:
        result = real(runner, tree, spec, reverse=reverse, dry_run=dry_run)  # type: ignore[arg-type]
        if not dry_run and tree == fx.tree and spec is fx.cfg.components["demo"].patches[1]:
            (tree / "src.txt").write_bytes(b"half written\n")
            return Result(argv=result.argv, returncode=1, output="patching file other.txt\nHunk #1 FAILED at 1.",
                          seconds=0.0)
        return result

    monkeypatch.setattr(patches, "_patch", failing)
    with pytest.raises(PatchConflict, match="the tree was restored as it was"):
        fx.apply()
    assert tree_hash(fx.tree) == before


def test_a_no_op_reads_the_recorded_state_until_a_touched_file_changes(tmp_path: Path) -> None:
    fx = Series(tmp_path, overlapping())
    assert fx.apply() == [State.APPLICABLE, State.APPLICABLE]
    fx.ctx.runner.commands.clear()
    assert fx.states() == [State.APPLIED, State.APPLIED]
    assert not [c for c in fx.ctx.runner.commands if c[0] == "patch"]  # the recorded state, patch not run
    (fx.tree / "src.txt").write_bytes(BASE)  # reverted by hand: the state recorded for the pristine tree
    assert fx.states() == [State.APPLICABLE, State.APPLICABLE]
    (fx.tree / "src.txt").write_bytes(edit(BASE, 10, "by hand"))  # evidence never seen: patch judges again
    assert fx.states() == [State.CONFLICT]
    assert [c for c in fx.ctx.runner.commands if c[0] == "patch"]

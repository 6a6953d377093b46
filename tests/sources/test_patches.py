"""The patch engine on fixture trees with real GNU patch: states decided by exit codes, plan before apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import actions, commands
from crosslane.errors import ConfigError, PatchConflict
from crosslane.sources import patches
from crosslane.sources.patches import State
from crosslane_helpers import diff, edit, patch_entry, quiet_context, sha256, tree_hash, write_config_text, write_patch

BASE_TEXT = b"".join(f"line {i}\n".encode() for i in range(1, 31))


class Fixture:
    """An upstream tree (tree/src.txt, tree/other.txt) and a component whose series is given as diffs."""

    def __init__(self, root: Path, series: list[tuple[str, bytes, list[str] | None]], base: bytes = BASE_TEXT):
        self.root = root
        self.tree = root / "upstream"
        self.tree.mkdir()
        (self.tree / "src.txt").write_bytes(base)
        (self.tree / "other.txt").write_bytes(b"untouched\n")
        entries = []
        for rel, data, arches in series:
            entries.append(patch_entry(rel, write_patch(root, rel, data), arches))
        (root / "components/demo").mkdir(parents=True)
        self.cfg = write_config_text(root, f"""
[components.demo]
source = {{ kind = "tree", path = "components/demo" }}
arches = ["amd64", "riscv64"]
patches = [{", ".join(entries)}]
""")
        self.component = self.cfg.components["demo"]
        self.ctx = quiet_context(self.cfg)

    def apply(self, arch: Arch = Arch.RISCV64, *, check: bool = False) -> list[patches.Step]:
        return patches.apply(self.ctx.runner, self.cfg.root, self.component, arch, self.tree, check=check)

    def states(self, arch: Arch = Arch.RISCV64) -> list[State]:
        return [s.state for s in patches.plan(self.ctx.runner, self.cfg.root, self.component, arch, self.tree)]


def one_change(number: int = 10, new: str = "changed 10", base: bytes = BASE_TEXT) -> bytes:
    return diff("src.txt", base, edit(base, number, new))


@pytest.mark.spawns
def test_applicable_then_applied_is_a_no_op(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)])
    assert fx.states() == [State.APPLICABLE]
    fx.apply()
    after = tree_hash(fx.tree)
    assert (fx.tree / "src.txt").read_bytes() == edit(BASE_TEXT, 10, "changed 10")
    assert fx.states() == [State.APPLIED]
    steps = fx.apply()
    assert [s.state for s in steps] == [State.APPLIED]
    assert tree_hash(fx.tree) == after
    assert sorted(p.name for p in fx.tree.iterdir()) == ["other.txt", "src.txt"]  # no .orig, no .rej


@pytest.mark.spawns
def test_series_where_patch_two_builds_on_patch_one(tmp_path: Path) -> None:
    first = edit(BASE_TEXT, 10, "changed 10")
    second = edit(first, 11, "changed 11")
    fx = Fixture(tmp_path, [("demo/001.patch", diff("src.txt", BASE_TEXT, first), None),
                            ("demo/002.patch", diff("src.txt", first, second), None)])
    assert fx.states() == [State.APPLICABLE, State.APPLICABLE]
    fx.apply()
    assert (fx.tree / "src.txt").read_bytes() == second


@pytest.mark.spawns
def test_partially_applied_series_applies_only_the_rest(tmp_path: Path) -> None:
    first = edit(BASE_TEXT, 5, "changed 5")
    fx = Fixture(tmp_path, [("demo/001.patch", diff("src.txt", BASE_TEXT, first), None),
                            ("demo/002.patch", one_change(25, "changed 25", first), None)])
    (fx.tree / "src.txt").write_bytes(first)  # someone applied 001 already
    steps = fx.apply()
    assert [s.state for s in steps] == [State.APPLIED, State.APPLICABLE]
    assert (fx.tree / "src.txt").read_bytes() == edit(first, 25, "changed 25")


@pytest.mark.spawns
def test_conflict_in_patch_three_leaves_the_tree_exactly_as_it_was(tmp_path: Path) -> None:
    one, two = edit(BASE_TEXT, 3, "c3"), edit(edit(BASE_TEXT, 3, "c3"), 20, "c20")
    broken = diff("src.txt", edit(BASE_TEXT, 12, "something else"), edit(BASE_TEXT, 12, "c12"))
    fx = Fixture(tmp_path, [("demo/001.patch", diff("src.txt", BASE_TEXT, one), None),
                            ("demo/002.patch", diff("src.txt", one, two), None),
                            ("demo/003.patch", broken, None)])
    before = tree_hash(fx.tree)
    with pytest.raises(PatchConflict) as caught:
        fx.apply()
    assert tree_hash(fx.tree) == before
    message = caught.value.one_line()
    assert "demo/003.patch" in message and "src.txt, hunk #1" in message and "\n" not in message
    assert caught.value.exit_code == 4


@pytest.mark.spawns
def test_a_hunk_that_needs_fuzz_is_refused(tmp_path: Path) -> None:
    # Upstream changed a context line next to the hunk: patch would apply it with fuzz 1; -F0 refuses.
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)], base=edit(BASE_TEXT, 8, "drifted 8"))
    before = tree_hash(fx.tree)
    assert fx.states() == [State.CONFLICT]
    with pytest.raises(PatchConflict, match="hunk #1"):
        fx.apply()
    assert tree_hash(fx.tree) == before


@pytest.mark.spawns
def test_an_offset_is_fine(tmp_path: Path) -> None:
    shifted = b"new first line\nnew second line\n" + BASE_TEXT
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)], base=shifted)
    fx.apply()
    assert b"changed 10\n" in (fx.tree / "src.txt").read_bytes()


@pytest.mark.spawns
def test_crlf_files_patch_byte_exact(tmp_path: Path) -> None:
    crlf = BASE_TEXT.replace(b"\n", b"\r\n")
    fx = Fixture(tmp_path, [("demo/001.patch", diff("src.txt", crlf, edit(crlf, 10, "changed 10")), None)],
                 base=crlf)
    assert b"\r\n" in (tmp_path / "patches/demo/001.patch").read_bytes()
    fx.apply()
    assert (fx.tree / "src.txt").read_bytes() == edit(crlf, 10, "changed 10")
    assert fx.states() == [State.APPLIED]


@pytest.mark.spawns
def test_gated_patch_on_another_arch_leaves_the_tree_byte_identical(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), ["riscv64"])])
    before = tree_hash(fx.tree)
    steps = fx.apply(Arch.AMD64)
    assert [s.state for s in steps] == [State.NOT_FOR_ARCH]
    assert tree_hash(fx.tree) == before
    fx.apply(Arch.RISCV64)
    assert tree_hash(fx.tree) != before


@pytest.mark.spawns
def test_check_changes_nothing_and_fails_unless_all_applied(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)])
    before = tree_hash(fx.tree)
    rows = actions.patch(fx.ctx, "demo", Arch.RISCV64, str(fx.tree), check=True)
    assert [r.verdict.value for r in rows] == ["FAIL"]
    assert tree_hash(fx.tree) == before
    actions.patch(fx.ctx, "demo", Arch.RISCV64, str(fx.tree), check=False)
    rows = actions.patch(fx.ctx, "demo", Arch.RISCV64, str(fx.tree), check=True)
    assert [r.verdict.value for r in rows] == ["PASS"]


@pytest.mark.spawns
@pytest.mark.parametrize(("state", "check", "code"), [
    pytest.param("pristine", True, 1, id="check-not-applied-exits-1"),
    pytest.param("pristine", False, 0, id="apply-exits-0"),
    pytest.param("conflicting", False, 4, id="conflict-exits-4"),
    pytest.param("edited-patch", False, 2, id="unpinned-edit-exits-2"),
])
def test_exit_codes_and_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], state: str,
                                        check: bool, code: int) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)])
    if state == "conflicting":
        (fx.tree / "src.txt").write_bytes(edit(BASE_TEXT, 10, "upstream moved on"))
    if state == "edited-patch":
        path = tmp_path / "patches/demo/001.patch"
        path.write_bytes(path.read_bytes().replace(b"changed 10", b"changed ten"))
    before = tree_hash(fx.tree)
    result = commands.run(lambda ctx: actions.patch(ctx, "demo", Arch.RISCV64, str(fx.tree), check=check),
                          config_path=str(tmp_path / "versions.toml"))
    err = capsys.readouterr().err
    assert result == code
    assert "Traceback" not in err
    if code in (2, 4):
        errors = [line for line in err.splitlines() if line.startswith("crosslane: error:")]
        assert len(errors) == 1
        assert tree_hash(fx.tree) == before


def test_patch_edited_without_its_pin_is_a_config_error(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)])
    (tmp_path / "patches/demo/001.patch").write_bytes(one_change(12, "other"))
    with pytest.raises(ConfigError, match=r"patches\[0\]: patches/demo/001.patch has sha256 [0-9a-f]{64}, the pin"):
        patches.verify_pins(fx.cfg.root, fx.component)


def test_missing_patch_file_is_a_config_error(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), None)])
    (tmp_path / "patches/demo/001.patch").unlink()
    with pytest.raises(ConfigError, match=r"cannot read patches/demo/001\.patch"):
        patches.verify_pins(fx.cfg.root, fx.component)


def test_stamp_inputs_carry_each_patch_sha256_and_state(tmp_path: Path) -> None:
    fx = Fixture(tmp_path, [("demo/001.patch", one_change(), ["riscv64"])])
    digest = sha256((tmp_path / "patches/demo/001.patch").read_bytes())
    assert patches.stamp_inputs(fx.cfg.root, fx.component, Arch.RISCV64) == [
        {"patch": "demo/001.patch", "sha256": digest, "state": "APPLIED"}]
    assert patches.stamp_inputs(fx.cfg.root, fx.component, Arch.AMD64)[0]["state"] == "NOT-FOR-ARCH"


def test_touched_files_strip_one_component_and_skip_dev_null() -> None:
    data = (b"--- a/x/y.c\t2020-01-01\n+++ b/x/y.c\t2020-01-01\n@@ -1 +1 @@\n-a\n+b\n"
            b"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+n\n")
    assert patches.touched_files(data) == ["x/y.c", "new.txt"]


@pytest.mark.parametrize(("output", "expected"), [
    pytest.param("checking file a.c\nHunk #2 FAILED at 40.\n1 out of 2 hunks FAILED\n", "a.c, hunk #2 (at line 40)",
                 id="hunk"),
    pytest.param("can't find file to patch at input line 3\nNo file to patch.  Skipping patch.\n", "is missing",
                 id="missing-file"),
])
def test_conflict_detail_names_file_and_hunk(output: str, expected: str) -> None:
    assert expected in patches.conflict_detail(output)

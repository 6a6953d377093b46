"""Actions staged at their pinned commits from a git mirror, and a bundle the mirror lacks rebuilt with real npm
from the pinned lockfile, or refused naming the action, the file and the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane.config import SysrootSpec
from crosslane.errors import IntegrityError, MissingPrerequisite, StepFailed
from crosslane.localci import staging
from crosslane.localci.pins import ActionPin
from crosslane.log import Log
from crosslane.process.runner import Runner

pytestmark = pytest.mark.spawns

DEFAULTS = SysrootSpec(suite="forky", mirror="http://deb.debian.org/debian", keyring="", packages=(), arch_packages={})
LOCK = {"name": "tool", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "tool", "version": "1.0.0"}}}
BUNDLE = ("node -e \"require('fs').mkdirSync('dist',{recursive:true});"
          "require('fs').writeFileSync('dist/index.js','console.log(1)')\"")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def action_mirror(tmp_path: Path, *, lockfile: bool = True, script: str = BUNDLE) -> tuple[ActionPin, Path]:
    """acme/tool with a node action whose dist/index.js a partial mirror lacks."""
    work = tmp_path / "upstream"
    (work / "dist").mkdir(parents=True)
    (work / "action.yml").write_text("name: tool\nruns:\n  using: node20\n  main: dist/index.js\n")
    (work / "dist" / "index.js").write_text("console.log('released')\n")
    (work / "package.json").write_text(json.dumps({"name": "tool", "version": "1.0.0", "scripts": {"package": script}}))
    if lockfile:
        (work / "package-lock.json").write_text(json.dumps(LOCK))
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "one")
    git(work, "tag", "v1.0.0")
    bare = tmp_path / "mirrors" / "acme+tool" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return ActionPin("acme/tool", git(work, "rev-parse", "HEAD"), "v1.0.0", ("build",)), bare


def drop(bare: Path, path: str, commit: str) -> None:
    oid = subprocess.run(["git", "--git-dir", str(bare), "rev-parse", f"{commit}:{path}"], check=True,
                         capture_output=True, text=True).stdout.strip()
    for pack in (bare / "objects" / "pack").glob("*.pack"):
        subprocess.run(["git", "--git-dir", str(bare), "unpack-objects", "-q"], stdin=pack.open("rb"), check=True)
        pack.unlink()
        pack.with_suffix(".idx").unlink()
    (bare / "objects" / oid[:2] / oid[2:]).unlink()


@pytest.fixture(autouse=True)
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", str(tmp_path / "mirrors" / "{owner}+{name}" / "repo"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # the venv's npm


def test_a_whole_mirror_is_the_action_as_it_is(tmp_path: Path) -> None:
    pin, _ = action_mirror(tmp_path)
    folder = staging.stage(Runner(Log()), pin, DEFAULTS)
    assert (folder / "dist" / "index.js").read_text() == "console.log('released')\n"
    assert not (folder / staging.RECORD).exists()


def test_a_bundle_the_mirror_lacks_is_rebuilt_from_the_lockfile_once(tmp_path: Path) -> None:
    pin, bare = action_mirror(tmp_path)
    drop(bare, "dist/index.js", pin.commit)
    runner = Runner(Log())
    folder = staging.stage(runner, pin, DEFAULTS)
    assert (folder / "dist" / "index.js").read_text() == "console.log(1)"
    record = json.loads((folder / staging.RECORD).read_text())
    assert record["script"] == "package" and record["rebuilt"] == ["dist/index.js"]
    assert record["node"].startswith("v") and not (folder / "node_modules").exists() and not (folder / ".git").exists()
    assert any("ci" in argv for argv in runner.commands)
    runner.commands.clear()
    assert staging.stage(runner, pin, DEFAULTS) == folder and not any("ci" in a for a in runner.commands)


def test_no_lockfile_to_rebuild_from_is_refused_naming_the_file(tmp_path: Path) -> None:
    pin, bare = action_mirror(tmp_path, lockfile=False)
    drop(bare, "dist/index.js", pin.commit)
    with pytest.raises(MissingPrerequisite, match=r"acme/tool@\w{12}: the mirror lacks dist/index.js, and it has no "
                                                  r"package-lock.json") as raised:
        staging.stage(Runner(Log()), pin, DEFAULTS)
    assert "stage a mirror of https://github.com/acme/tool that holds every file" in raised.value.one_line()


def test_a_script_that_does_not_make_the_bundle_fails_and_leaves_nothing(tmp_path: Path) -> None:
    pin, bare = action_mirror(tmp_path, script="node -e \"0\"")
    drop(bare, "dist/index.js", pin.commit)
    with pytest.raises(StepFailed, match=r"npm run package did not make dist/index\.js"):
        staging.stage(Runner(Log()), pin, DEFAULTS)
    assert not list((tmp_path / "cache" / "actions").glob("acme+tool*"))


def test_a_mirror_without_the_commit_names_the_action_and_the_mirror_variable(tmp_path: Path) -> None:
    pin, _ = action_mirror(tmp_path)
    moved = ActionPin(pin.repo, "f" * 40, None, pin.jobs)
    with pytest.raises(MissingPrerequisite, match=r"action acme/tool@ffffffffffff \(no version named\)") as raised:
        staging.stage(Runner(Log()), moved, DEFAULTS)
    assert "CROSSLANE_GIT_MIRROR" in raised.value.one_line()


@pytest.mark.parametrize(("metadata", "said"), [
    ("runs:\n  using: node20\n  main: ../../../../etc/passwd\n", "runs.main '../../../../etc/passwd' is not a file"),
    ("runs:\n  using: node20\n  main: /etc/passwd\n", "runs.main '/etc/passwd' is not a file"),
    ("runs:\n  using: node20\n  main: [a, b]\n", "runs.main \\['a', 'b'\\] is not a file"),
    ("runs: node20\n", "no `runs:` mapping"),
    ('runs:\n  using: node20\n  main: "dist/a\\0b.js"\n', r"runs.main 'dist/a\\x00b.js' is not a file"),
    ('runs:\n  using: node20\n  main: "dist/\\ud800.js"\n', r"runs.main 'dist/\\ud800.js' is not a file"),
    ("runs: " + "[" * 20_000 + "]" * 20_000 + "\n", "not an action's metadata"),
], ids=["climbs-out", "absolute", "a-list", "no-mapping", "nul", "surrogate", "nested-too-deeply"])
def test_an_action_whose_metadata_points_outside_or_is_malformed_is_refused(tmp_path: Path, metadata: str,
                                                                           said: str) -> None:
    (tmp_path / "action.yml").write_text(metadata)
    with pytest.raises(IntegrityError, match=said):
        staging.missing_entry_points(tmp_path)


def test_a_cached_rebuild_is_used_only_when_its_record_names_this_commit_and_lockfile(tmp_path: Path) -> None:
    pin, bare = action_mirror(tmp_path)
    drop(bare, "dist/index.js", pin.commit)
    made = staging.stage(Runner(Log()), pin, DEFAULTS)
    record = made / staging.RECORD
    (made / "dist" / "index.js").write_text("planted")
    record.write_text("not json at all")  # a damaged record is no evidence of what the copy was made from
    again = staging.stage(Runner(Log()), pin, DEFAULTS)
    assert (again / "dist" / "index.js").read_text() != "planted"
    assert json.loads((again / staging.RECORD).read_text())["commit"] == pin.commit


def test_an_action_yml_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "action.yml").mkdir()
    with pytest.raises(IntegrityError, match="not an action's metadata"):
        staging.missing_entry_points(tmp_path)

"""Air-gapped staging: a pinned git commit exported from a local mirror (CROSSLANE_GIT_MIRROR), partial
mirrors, offline mode, and FetchContent dependencies in versions.toml."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crosslane import config
from crosslane.config import GitSource, PinnedSource
from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake
from crosslane.sources import gitexport, pinned
from crosslane_helpers import versions_header


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> dict[str, str]:
    """owner/name laid out as the template expects, a bare mirror with v1 and a later commit."""
    work = tmp_path / "upstream"
    work.mkdir()
    git(work, "init", "-q")
    (work / "src").mkdir()
    (work / "src" / "a.c").write_text("int a;\n")
    (work / "run.sh").write_text("#!/bin/sh\n")
    (work / "run.sh").chmod(0o755)
    (work / "link").symlink_to("src/a.c")
    (work / "test").mkdir()
    (work / "test" / "big.bin").write_bytes(b"\0" * 4096)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "one")
    git(work, "tag", "v1")
    first = git(work, "rev-parse", "HEAD")
    (work / "src" / "b.c").write_text("int b;\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "two")
    bare = tmp_path / "mirrors" / "acme+widget" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    big = git(work, "rev-parse", "HEAD:test/big.bin")
    return {"first": first, "second": git(work, "rev-parse", "HEAD"), "bare": str(bare), "big": big,
            "template": str(tmp_path / "mirrors" / "{owner}+{name}" / "repo")}


def drop_blob(bare: Path, oid: str) -> None:
    """Make *bare* a partial mirror: unpack, then delete one blob's object file."""
    for pack in (bare / "objects" / "pack").glob("*.pack"):
        subprocess.run(["git", "--git-dir", str(bare), "unpack-objects", "-q"], stdin=pack.open("rb"), check=True)
        pack.unlink()
        pack.with_suffix(".idx").unlink()
    (bare / "objects" / oid[:2] / oid[2:]).unlink()


@pytest.mark.spawns
def test_export_writes_the_commit_tree_with_modes_and_links(tmp_path: Path, mirror: dict[str, str]) -> None:
    dest = tmp_path / "out"
    done = gitexport.export(Path(mirror["bare"]), mirror["first"], "v1", "https://x/acme/widget", dest)
    assert (dest / "src" / "a.c").read_text() == "int a;\n" and not (dest / "src" / "b.c").exists()
    assert (dest / "run.sh").stat().st_mode & 0o111
    assert (dest / "link").is_symlink() and (dest / "link").read_text() == "int a;\n"
    assert (done.files, done.absent) == (4, ())


@pytest.mark.spawns
def test_a_moved_tag_in_the_mirror_is_an_integrity_error(tmp_path: Path, mirror: dict[str, str]) -> None:
    with pytest.raises(IntegrityError, match=r"tag v1 is commit .*, versions\.toml pins") as err:
        gitexport.export(Path(mirror["bare"]), mirror["second"], "v1", "u", tmp_path / "out")
    assert err.value.exit_code == 6


@pytest.mark.spawns
def test_a_commit_the_mirror_lacks_is_missing(tmp_path: Path, mirror: dict[str, str]) -> None:
    with pytest.raises(MissingPrerequisite, match=r"lacks commit 0{40}"):
        gitexport.export(Path(mirror["bare"]), "0" * 40, None, "u", tmp_path / "out")


@pytest.mark.spawns
@pytest.mark.parametrize("allowed", [True, False], ids=["absent-ok", "not-declared"])
def test_a_partial_mirror_needs_absent_ok(tmp_path: Path, mirror: dict[str, str], allowed: bool) -> None:
    drop_blob(Path(mirror["bare"]), mirror["big"])
    dest = tmp_path / "out"
    if not allowed:
        with pytest.raises(MissingPrerequisite, match=r"the mirror lacks test/big\.bin"):
            gitexport.export(Path(mirror["bare"]), mirror["first"], None, "u", dest)
        return
    done = gitexport.export(Path(mirror["bare"]), mirror["first"], None, "u", dest, absent_ok=["test/*"])
    assert done.absent == ("test/big.bin",) and (dest / "src" / "a.c").is_file()


COMPONENT = """
[components.widget]
source = {{ kind = "git", url = "https://example.invalid/acme/widget", tag = "v1", commit = "{commit}" }}
arches = ["riscv64"]
[components.widget.fetchcontent.gadget]
source = {{ kind = "git", url = "https://example.invalid/acme/widget", commit = "{commit}" }}
"""


def load(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "versions.toml"
    path.write_text(versions_header(riscv64_toolchain="gcc") + text)
    return config.load(path)


def gadget(tmp_path: Path, mirror: dict[str, str], monkeypatch: pytest.MonkeyPatch
           ) -> tuple[config.Config, tuple[PinnedSource, ...]]:
    """COMPONENT's FetchContent pin of the mirror's first commit, with a cache of the test's own."""
    cfg = load(tmp_path, COMPONENT.format(commit=mirror["first"]))
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    return cfg, cfg.components["widget"].fetchcontent["gadget"]


@pytest.mark.spawns
def test_pinned_fetch_goes_through_the_mirror_and_then_offline_reads_the_cache(
        tmp_path: Path, mirror: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, specs = gadget(tmp_path, mirror, monkeypatch)
    monkeypatch.setenv("CROSSLANE_OFFLINE", "1")
    with pytest.raises(MissingPrerequisite, match=r"widget\+gadget: git .* is not staged") as err:
        pinned.fetch_pinned(Runner(Log()), "widget+gadget", specs, cfg.sysroot)
    assert err.value.exit_code == 3 and "invoke sources --arch <arch> --component widget" in err.value.one_line()
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", mirror["template"])  # staging from a local mirror is allowed offline
    fetched = pinned.fetch_pinned(Runner(Log()), "widget+gadget", specs, cfg.sysroot)
    assert (fetched.path / "src" / "a.c").is_file()
    monkeypatch.delenv("CROSSLANE_GIT_MIRROR")
    again = pinned.fetch_pinned(Runner(Log()), "widget+gadget", specs, cfg.sysroot)
    assert again.path == fetched.path and again.served_by.endswith("(cached)")
    assert pinned.absent_files("widget+gadget", specs[0]) == frozenset()  # a whole mirror: nothing lacked


@pytest.mark.spawns
def test_the_files_a_partial_mirror_lacked_are_recorded_with_the_staged_pin(
        tmp_path: Path, mirror: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    drop_blob(Path(mirror["bare"]), mirror["big"])
    cfg = load(tmp_path, '[components.widget]\nsource = { kind = "git", url = "https://example.invalid/acme/widget", '
                         f'commit = "{mirror["first"]}", absent_ok = ["test/*"] }}\narches = ["riscv64"]\n')
    spec = cfg.components["widget"].sources[0]
    assert isinstance(spec, GitSource) and spec.absent_ok == ("test/*",)
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", mirror["template"])
    assert pinned.absent_files("widget", spec) is None  # not staged: nothing recorded
    pinned.fetch_pinned(Runner(Log()), "widget", [spec], cfg.sysroot)
    assert pinned.absent_files("widget", spec) == frozenset({"test/big.bin"})


def test_fetchcontent_dependencies_must_be_pinned(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    text = COMPONENT.format(commit="a" * 40).replace(
        'source = { kind = "git", url = "https://example.invalid/acme/widget", commit = "' + "a" * 40 + '" }',
        'source = { kind = "tree", path = "src" }')
    with pytest.raises(ConfigError, match=r"fetchcontent.gadget.source: a FetchContent dependency must be pinned"):
        load(tmp_path, text)


def test_the_python_wrapper_runs_the_target_interpreter_under_qemu() -> None:
    text = cmake.python_wrapper(["/usr/bin/qemu-riscv64-static", "-L", "/s r", "-cpu", "rv64"], Path("/s r/usr/bin/py"))
    assert text.splitlines()[-1] == "exec /usr/bin/qemu-riscv64-static -L '/s r' -cpu rv64 '/s r/usr/bin/py' \"$@\""


def repo_with(path: Path, files: dict[str, str]) -> str:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "c")
    return git(path, "rev-parse", "HEAD")


@pytest.mark.spawns
def test_submodules_come_at_the_superprojects_gitlinks_through_the_mirror(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A superproject with a submodule that has a submodule of its own: each exported at the commit its
    parent's gitlink pins, not at the submodule repository's newest commit."""
    work, mirrors = tmp_path / "work", tmp_path / "mirrors"
    leaf_pinned = repo_with(work / "leaf", {"leaf.h": "#define LEAF 1\n"})
    (work / "leaf" / "leaf.h").write_text("#define LEAF 2 /* newer, not pinned */\n")
    git(work / "leaf", "commit", "-qam", "newer")
    mid = work / "mid"
    repo_with(mid, {"mid.c": "int mid;\n"})
    git(mid, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(work / "leaf"), "third-party/leaf")
    git(mid, "-C", "third-party/leaf", "checkout", "-q", leaf_pinned)
    git(mid, "add", "-A")
    git(mid, "commit", "-qm", "leaf")
    top = work / "top"
    repo_with(top, {"CMakeLists.txt": "project(top)\n"})
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(mid), "deps/mid")
    git(top, "commit", "-qm", "mid")
    # .gitmodules name the upstream URLs a user would have, relative and absolute: point them at GitHub-like ones.
    gm = (top / ".gitmodules").read_text().replace(str(mid), "../mid")
    (top / ".gitmodules").write_text(gm)
    git(top, "commit", "-qam", "relative url")
    gm = (mid / ".gitmodules").read_text().replace(str(work / "leaf"), "https://example.invalid/acme/leaf")
    (mid / ".gitmodules").write_text(gm)
    git(mid, "commit", "-qam", "url")
    git(top, "-C", "deps/mid", "pull", "-q", "--no-rebase", str(mid), "HEAD")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "bump mid")
    for name in ("top", "mid", "leaf"):
        subprocess.run(["git", "clone", "-q", "--bare", str(work / name), str(mirrors / f"acme+{name}" / "repo")],
                       check=True)
    commit = git(top, "rev-parse", "HEAD")
    text = f"""
[components.top]
arches = ["riscv64"]
[components.top.source]
kind = "git"
url = "https://example.invalid/acme/top"
commit = "{commit}"
submodules = ["deps/mid", "deps/mid/third-party/leaf"]
"""
    cfg = load(tmp_path, text)
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", str(mirrors / "{owner}+{name}" / "repo"))
    fetched = pinned.fetch(Runner(Log()), cfg.components["top"], cfg.sysroot, arch="riscv64")
    assert (fetched.path / "deps/mid/mid.c").read_text() == "int mid;\n"
    assert (fetched.path / "deps/mid/third-party/leaf/leaf.h").read_text() == "#define LEAF 1\n"
    assert "+submodules:deps/mid,deps/mid/third-party/leaf" in fetched.identity
    # Where each came from is kept with the pin, for the SBOM and provenance: its own URL and the gitlink's commit.
    mid_commit = git(top, "-C", "deps/mid", "rev-parse", "HEAD")
    source = cfg.components["top"].sources[0]
    assert isinstance(source, GitSource)
    assert pinned.submodule_pins("top", source) == {
        "deps/mid": ("https://example.invalid/acme/mid", mid_commit),
        "deps/mid/third-party/leaf": ("https://example.invalid/acme/leaf", leaf_pinned)}


@pytest.mark.spawns
def test_a_submodule_that_is_not_one_is_a_config_error(tmp_path: Path, mirror: dict[str, str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    text = COMPONENT.format(commit=mirror["first"]).replace('commit = "', 'submodules = ["src"], commit = "', 1)
    cfg = load(tmp_path, text)
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", mirror["template"])
    with pytest.raises(ConfigError, match=r"'src' is not a submodule there \(no gitlink\)"):
        pinned.fetch(Runner(Log()), cfg.components["widget"], cfg.sysroot, arch="riscv64")


@pytest.mark.spawns
def test_a_damaged_cache_entry_is_replaced_by_the_next_fetch(
        tmp_path: Path, mirror: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry with a tree and no pin file is what no publish leaves: every fetch failed on it (not empty)."""
    cfg, specs = gadget(tmp_path, mirror, monkeypatch)
    monkeypatch.setenv("CROSSLANE_GIT_MIRROR", mirror["template"])
    damaged = pinned.cache_entry("widget+gadget", specs[0])
    (damaged / "tree").mkdir(parents=True)
    (damaged / "tree" / "leftover").write_text("x")
    fetched = pinned.fetch_pinned(Runner(Log()), "widget+gadget", specs, cfg.sysroot)
    assert (fetched.path / "src" / "a.c").is_file() and not (fetched.path / "leftover").exists()
    assert sorted(p.name for p in damaged.parent.iterdir()) == [damaged.name]

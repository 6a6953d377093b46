"""A git mirror that crossed a network is hostile: crafted tree objects (git itself never writes `..`, a link `a`
beside a folder `a/`, or a path twice, but `git mktree` makes them), a tag that is missing or moved, and signals
while a tree is being written. `invoke sources` must stop with one line and its exit code, publish no cache
entry, and write nothing outside the cache."""

from __future__ import annotations

import signal
import subprocess
import zlib
from pathlib import Path

import pytest

from hostilekit import REPO, Sandbox

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("mirrors")]

OWNER, NAME = "hostile", "tree"
URL = f"https://example.invalid/{OWNER}/{NAME}.git"


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "--git-dir", str(repo), *args], input=stdin, capture_output=True, check=True,
                          env={"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
                               "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                               "PATH": "/usr/bin:/bin"})
    return done.stdout.decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", stdin=data)


def tree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """entries: (mode, object id, name); no checks: this is how a hostile tree is made."""
    kinds = {"040000": "tree", "160000": "commit"}
    text = "".join(f"{mode} {kinds.get(mode, 'blob')} {oid}\t{name}\n" for mode, oid, name in entries)
    return git(repo, "mktree", "--missing", stdin=text.encode())


def mirror(box: Sandbox) -> Path:
    repo = box.inputs / "mirrors" / f"{OWNER}+{NAME}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--bare")
    return repo


def commit(repo: Path, top: str) -> str:
    return git(repo, "commit-tree", top, "-m", "hostile")


def climbing(repo: Path, hops: int) -> str:
    """A tree whose only path is ../../…/outside/pwned."""
    inner = tree(repo, [("040000", tree(repo, [("100644", blob(repo, b"pwned\n"), "pwned")]), "outside")])
    for _ in range(hops):
        inner = tree(repo, [("040000", inner, "..")])
    return inner


def config(box: Sandbox, pinned: str, tag: str | None = None) -> Path:
    folder = box.inputs / "repo"
    folder.mkdir(exist_ok=True)
    (folder / "versions.toml").write_text((REPO / "versions.toml").read_text().split("\n[components.")[0] + f"""
[components.hostile]
source = {{ kind = "git", url = "{URL}", commit = "{pinned}"{f', tag = "{tag}"' if tag else ''} }}
arches = ["riscv64"]
""")
    return folder / "versions.toml"


def sources(box: Sandbox, pinned: str, tag: str | None = None) -> list[str]:
    env = {"CROSSLANE_GIT_MIRROR": str(box.inputs / "mirrors" / "{owner}+{name}")}
    box.env.update(env)
    return ["sources", "--arch", "riscv64", "--component", "hostile", "--config", str(config(box, pinned, tag))]


def nothing_published(box: Sandbox) -> None:
    assert not list(box.cache.rglob("pin.json")) and not list(box.cache.rglob("*.partial"))
    assert not list(box.root.rglob("pwned"))


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


def make_dotdot(repo: Path) -> str:
    # cache/sources/hostile/.<entry>.partial/.fetch/tree is 5 below the cache, which is 2 below the box.
    return commit(repo, climbing(repo, 7))


def make_link_and_folder(repo: Path) -> str:
    inner = tree(repo, [("100644", blob(repo, b"x"), "x")])
    return commit(repo, tree(repo, [("120000", blob(repo, b"../../../../../../../outside"), "a"),
                                    ("040000", inner, "a")]))


def make_link_out(repo: Path) -> str:
    return commit(repo, tree(repo, [("120000", blob(repo, b"../../../../../../../outside"), "out")]))


def make_link_absolute(repo: Path) -> str:
    return commit(repo, tree(repo, [("120000", blob(repo, b"/etc"), "etc")]))


def make_link_chain(repo: Path) -> str:
    return commit(repo, tree(repo, [("120000", blob(repo, b"."), "a"),
                                    ("120000", blob(repo, b"a/a/../../../../../../../../outside"), "b")]))


def make_twice(repo: Path) -> str:
    data = blob(repo, b"x")
    return commit(repo, tree(repo, [("100644", data, "x"), ("100644", blob(repo, b"y"), "x")]))


def make_long_name(repo: Path) -> str:
    return commit(repo, tree(repo, [("100644", blob(repo, b"x"), "n" * 300)]))


def make_below_a_file(repo: Path) -> str:
    inner = tree(repo, [("100644", blob(repo, b"x"), "evil")])
    return commit(repo, tree(repo, [("100644", blob(repo, b"x"), "f"), ("040000", inner, "f")]))


@pytest.mark.parametrize(("make", "words"), [
    (make_dotdot, "'..' component"),
    (make_link_and_folder, "below the link"),
    (make_link_out, "leads outside the tree"),
    (make_link_absolute, "leads outside the tree"),
    (make_link_chain, "leads outside the tree"),
    (make_twice, "appears twice"),
    (make_long_name, "longer than 255"),
    (make_below_a_file, "below the file"),
], ids=["dotdot", "link-and-folder", "link-out", "link-absolute", "link-chain", "twice", "long-name",
        "below-a-file"])
def test_a_crafted_tree_is_refused_before_a_file_is_written(box: Sandbox, make: object, words: str) -> None:
    repo = mirror(box)
    pinned = make(repo)  # type: ignore[operator]
    box.refused(6, words, *sources(box, pinned))
    nothing_published(box)


def good_commit(repo: Path, size: int = 1) -> str:
    return commit(repo, tree(repo, [("100644", blob(repo, b"x" * size), "data.bin")]))


def test_a_pinned_tag_the_mirror_lacks(box: Sandbox) -> None:
    repo = mirror(box)
    box.refused(6, "but no tag v1.0", *sources(box, good_commit(repo), tag="v1.0"))
    nothing_published(box)


def test_a_moved_tag(box: Sandbox) -> None:
    repo = mirror(box)
    pinned = good_commit(repo)
    other = commit(repo, tree(repo, [("100644", blob(repo, b"other"), "data.bin")]))
    git(repo, "update-ref", "refs/tags/v1.0", other)
    box.refused(6, "a moved tag", *sources(box, pinned, tag="v1.0"))
    nothing_published(box)


def test_a_commit_the_mirror_lacks(box: Sandbox) -> None:
    mirror(box)
    box.refused(3, "lacks commit", *sources(box, "d" * 40))
    nothing_published(box)


def test_a_good_mirror_stages(box: Sandbox) -> None:
    repo = mirror(box)
    pinned = good_commit(repo)
    git(repo, "update-ref", "refs/tags/v1.0", pinned)
    done = box.invoke(*sources(box, pinned, tag="v1.0"))
    assert done.rc == 0, done.out
    [staged] = list(box.cache.rglob("data.bin"))
    assert staged.read_bytes() == b"x"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_while_staging_publishes_nothing(box: Sandbox, sig: int) -> None:
    repo = mirror(box)
    pinned = good_commit(repo, 256 << 20)
    ended = box.interrupted(sig, lambda: bool(list(box.cache.rglob("*.partial"))), *sources(box, pinned))
    assert not list(box.cache.rglob("pin.json")), "a killed staging was published"
    if sig == signal.SIGTERM:
        assert ended.rc == 143 and not list(box.cache.rglob("*.partial")), ended.out
    done = box.invoke(*sources(box, pinned))  # the next run sweeps a killed one's folder and stages afresh
    assert done.rc == 0, done.out
    assert not list(box.cache.rglob("*.partial")) and len(list(box.cache.rglob("data.bin"))) == 1


def swap_object(repo: Path, oid: str, kind: str, data: bytes) -> None:
    """Replace a loose object's bytes, keeping its id: git reads it back without checking."""
    path = repo / "objects" / oid[:2] / oid[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(f"{kind} {len(data)}\0".encode() + data))


def test_a_file_whose_bytes_are_not_its_pinned_id_is_refused(box: Sandbox) -> None:
    repo = mirror(box)
    data = blob(repo, b"hello\n")
    pinned = commit(repo, tree(repo, [("100644", data, "data.txt")]))
    swap_object(repo, data, "blob", b"echo pwned\n")
    box.refused(6, f"the blob stored as {data} holds other bytes", *sources(box, pinned))
    nothing_published(box)


def test_a_tree_whose_bytes_are_not_its_pinned_id_is_refused(box: Sandbox) -> None:
    """A swapped subtree lists another file: ls-tree would read it as the commit's."""
    repo = mirror(box)
    inner = tree(repo, [("100644", blob(repo, b"hello\n"), "data.txt")])
    pinned = commit(repo, tree(repo, [("040000", inner, "src")]))
    evil = blob(repo, b"echo pwned\n")
    swap_object(repo, inner, "tree", b"100644 pwned\0" + bytes.fromhex(evil))
    box.refused(6, f"the tree stored as {inner} holds other bytes", *sources(box, pinned))
    nothing_published(box)


def test_a_truncated_object_is_refused(box: Sandbox) -> None:
    repo = mirror(box)
    data = blob(repo, bytes(range(256)) * 40)
    pinned = commit(repo, tree(repo, [("100644", data, "data.bin")]))
    path = repo / "objects" / data[:2] / data[2:]
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-40])  # its header readable, its data cut short
    box.refused(6, "cannot read the mirror's objects", *sources(box, pinned))
    nothing_published(box)

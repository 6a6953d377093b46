"""Pinned sources: git pins and moved tags, archive checksums, hostile archives, .dsc checks, mirrors, cache."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
import tarfile
import threading
import time
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.config import DebianSource, GitSource, SysrootSpec
from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.sources import debsrc, net, pinned, safe_extract, worktree
from crosslane_helpers import git, pinned_source, quiet_context, sha256, tarball, write_config_text

DEFAULTS = SysrootSpec(suite="trixie", mirror="http://deb.debian.org/debian",
                       keyring="/usr/share/keyrings/debian-archive-keyring.gpg", packages=(), arch_packages={})
UNREACHABLE = "http://127.0.0.1:1/never.tar.gz"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.mode = 0o644
    return info


def good_tarball(path: Path) -> Path:
    return tarball(path, [(member("pkg-1.0", tarfile.DIRTYPE), None), (member("pkg-1.0/README"), b"hello\n"),
                          (member("pkg-1.0/sub/link", tarfile.SYMTYPE, "../README"), None)])


def component_toml(source: str, mirrors: str = "") -> str:
    extra = f"\nmirrors = [{mirrors}]" if mirrors else ""
    return f"""
[components.demo]
source = {source}{extra}
arches = ["amd64"]
"""


def archive_source(url: str, digest: str) -> str:
    return f'{{ kind = "archive", url = "{url}", sha256 = "{digest}" }}'


# --- archives -------------------------------------------------------------------------------------------


def test_archive_with_good_checksum_is_extracted_and_cached(tmp_path: Path) -> None:
    archive = good_tarball(tmp_path / "pkg.tar.gz")
    cfg = write_config_text(tmp_path, component_toml(archive_source(archive.as_uri(), sha256(archive.read_bytes()))))
    fetched = pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    assert (fetched.path / "README").read_text() == "hello\n"
    assert (fetched.path / "sub/link").is_symlink()
    assert "(fetched)" in fetched.served_by
    archive.unlink()  # the cache serves now, no download
    again = pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    assert again.path == fetched.path and "(cached)" in again.served_by


def test_archive_with_bad_checksum_is_refused_and_not_cached(tmp_path: Path) -> None:
    archive = good_tarball(tmp_path / "pkg.tar.gz")
    cfg = write_config_text(tmp_path, component_toml(archive_source(archive.as_uri(), "0" * 64)))
    pinned_wrong = f"sha256 is {sha256(archive.read_bytes())}, versions.toml pins 0000"
    with pytest.raises(IntegrityError, match=pinned_wrong) as err:
        pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    assert err.value.exit_code == 6
    assert pinned.cached("demo", pinned_source(cfg.components["demo"])) is None
    assert not list((tmp_path / "cache/sources/demo").iterdir())


def test_archive_without_checksum_is_rejected_on_load(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="has no sha256"):
        write_config_text(tmp_path, component_toml('{ kind = "archive", url = "https://example.org/x.tar.gz" }'))


def test_unreachable_source_fails_fast_and_names_the_fix(tmp_path: Path) -> None:
    cfg = write_config_text(tmp_path, component_toml(archive_source(UNREACHABLE, "0" * 64)))
    start = time.monotonic()
    with pytest.raises(MissingPrerequisite) as err:
        pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    assert time.monotonic() - start < 5
    assert err.value.one_line() == ("127.0.0.1 unreachable for demo; stage it: invoke sources --arch <arch> "
                                    "--component demo (where the network or a git mirror reaches it), "
                                    "set CROSSLANE_GIT_MIRROR, pass --source demo=PATH or add a mirror")
    assert err.value.exit_code == 3


def test_mirrors_are_tried_in_order_and_the_report_names_the_one_that_served(tmp_path: Path) -> None:
    archive = good_tarball(tmp_path / "pkg.tar.gz")
    digest = sha256(archive.read_bytes())
    cfg = write_config_text(tmp_path, component_toml(archive_source(UNREACHABLE, digest),
                                                archive_source(archive.as_uri(), digest)))
    ctx = quiet_context(cfg)
    prepared = worktree.prepare(ctx, cfg.components["demo"], Arch.AMD64)
    assert (prepared.path / "README").is_file()
    [row] = prepared.rows
    assert row.label == "source" and archive.as_uri() in row.reason and "from mirror 1, after 1 failed" in row.reason
    assert prepared.source_id == f"archive:{archive.as_uri()}#sha256={digest}"


def test_local_override_is_used_as_is_and_marked_unverified(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "file").write_text("mine\n")
    cfg = write_config_text(tmp_path, component_toml(archive_source(UNREACHABLE, "0" * 64)))
    ctx = dataclasses.replace(quiet_context(cfg), sources={"demo": checkout})
    prepared = worktree.prepare(ctx, cfg.components["demo"], Arch.AMD64)
    assert prepared.path == checkout
    assert prepared.rows[0].reason.startswith("local, unverified")
    assert prepared.source_id.startswith("local:")


def test_dry_run_fetches_nothing(tmp_path: Path) -> None:
    cfg = write_config_text(tmp_path, component_toml(archive_source(UNREACHABLE, "0" * 64)))
    fetched = pinned.fetch(Runner(Log(), dry_run=True), cfg.components["demo"], cfg.sysroot)
    assert "dry run" in fetched.served_by and not fetched.path.exists()


# --- hostile archives -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("members", "message"), [
    pytest.param([(member("/etc/evil"), b"x")], "absolute path", id="absolute-path"),
    pytest.param([(member("pkg/../../evil"), b"x")], "contains '..'", id="dot-dot"),
    pytest.param([(member("pkg/link", tarfile.SYMTYPE, "../../outside"), None)], "points outside", id="symlink-out"),
    pytest.param([(member("pkg/link", tarfile.SYMTYPE, "/etc/passwd"), None)], "points outside", id="symlink-abs"),
    pytest.param([(member("pkg/link", tarfile.SYMTYPE, "../pkg-sibling"), None)], "points outside",
                 id="symlink-out-of-stripped-top"),
    pytest.param([(member("pkg/hard", tarfile.LNKTYPE, "../outside"), None)], "hard link", id="hardlink-out"),
    pytest.param([(member("pkg/dev", tarfile.CHRTYPE), None)], "device or fifo", id="device"),
])
def test_hostile_archives_are_refused_and_leave_nothing(tmp_path: Path, members: list[tuple[tarfile.TarInfo,
                                                        bytes | None]], message: str) -> None:
    archive = tarball(tmp_path / "evil.tar.gz", [(member("pkg/ok"), b"fine\n"), *members])
    dest = tmp_path / "out" / "tree"
    with pytest.raises(ConfigError, match=message):
        safe_extract.extract(archive, dest)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "outside").exists()


def test_single_top_folder_is_stripped_and_inner_links_kept(tmp_path: Path) -> None:
    dest = safe_extract.extract(good_tarball(tmp_path / "pkg.tar.gz"), tmp_path / "tree")
    assert sorted(p.name for p in dest.iterdir()) == ["README", "sub"]
    assert (dest / "sub/link").resolve() == (dest / "README").resolve()


def test_a_non_tar_download_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"<html>not found</html>")
    with pytest.raises(ConfigError, match="not a readable tar archive"):
        safe_extract.extract(junk, tmp_path / "tree")


# --- Debian .dsc ----------------------------------------------------------------------------------------

DSC = """-----BEGIN PGP SIGNED MESSAGE-----
Hash: SHA512

Format: 3.0 (quilt)
Source: demo
Version: 1.0-1
Checksums-Sha256:
 {orig_sha} {orig_size} demo_1.0.orig.tar.gz
 {deb_sha} {deb_size} demo_1.0-1.debian.tar.xz
Files:
 00000000000000000000000000000000 1 demo_1.0.orig.tar.gz

-----BEGIN PGP SIGNATURE-----
abc
-----END PGP SIGNATURE-----
"""


def fake_dsc(folder: Path, *, corrupt: bool = False) -> Path:
    orig = good_tarball(folder / "demo_1.0.orig.tar.gz")
    debian = folder / "demo_1.0-1.debian.tar.xz"
    debian.write_bytes(b"debian packaging")
    orig_bytes = orig.read_bytes()
    dsc = folder / "demo_1.0-1.dsc"
    dsc.write_text(DSC.format(orig_sha=sha256(orig_bytes), orig_size=len(orig_bytes),
                              deb_sha=sha256(b"debian packaging"), deb_size=16))
    if corrupt:
        orig.write_bytes(orig_bytes[:-1] + bytes([orig_bytes[-1] ^ 1]))
    return dsc


def test_dsc_files_are_verified_and_the_orig_tarball_found(tmp_path: Path) -> None:
    dsc = fake_dsc(tmp_path)
    files = debsrc.verify(dsc)
    assert [f.name for f in files] == ["demo_1.0.orig.tar.gz", "demo_1.0-1.debian.tar.xz"]
    assert debsrc.upstream_tarball(dsc, files).name == "demo_1.0.orig.tar.gz"


def test_dsc_with_a_wrong_checksum_is_refused(tmp_path: Path) -> None:
    dsc = fake_dsc(tmp_path, corrupt=True)
    with pytest.raises(IntegrityError, match=r"demo_1.0-1.dsc: demo_1.0.orig.tar.gz has sha256 [0-9a-f]{64}") as err:
        debsrc.verify(dsc)
    assert err.value.exit_code == 6 and "\n" not in err.value.one_line()


def test_dsc_without_its_upstream_tarball_is_refused(tmp_path: Path) -> None:
    dsc = fake_dsc(tmp_path)
    (tmp_path / "demo_1.0-1.debian.tar.xz").unlink()  # not needed: Debian's packaging is not applied
    assert [f.name for f in debsrc.verify(dsc)] == ["demo_1.0.orig.tar.gz"]
    (tmp_path / "demo_1.0.orig.tar.gz").unlink()
    with pytest.raises(ConfigError, match=r"lists demo_1\.0\.orig\.tar\.gz, which was not downloaded"):
        debsrc.verify(dsc)


def test_print_uris_lines_are_read() -> None:
    line = f"'http://h/pool/main/h/hello/hello_2.10-5.dsc' hello_2.10-5.dsc 1736 SHA256:{'a' * 64}"
    assert debsrc.parse_print_uris(f"Reading package lists...\n{line}\n") == {
        "hello_2.10-5.dsc": ("http://h/pool/main/h/hello/hello_2.10-5.dsc", 1736, "a" * 64)}


def test_dsc_file_names_cannot_escape(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a plain file name"):
        debsrc.parse_dsc(f"Checksums-Sha256:\n {'0' * 64} 1 ../evil\n", "x.dsc")


@pytest.mark.parametrize("size", ["9" * 5000, "\u00b2", "-1", ""], ids=["over-int-digits", "unicode-digit",
                                                                       "negative", "empty"])
def test_a_dsc_size_that_is_no_byte_count_is_one_line(size: str) -> None:
    with pytest.raises(ConfigError, match="malformed Checksums-Sha256 line"):
        debsrc.parse_dsc(f"Checksums-Sha256:\n {'0' * 64} {size} d_1.0.orig.tar.gz\n", "x.dsc")


@pytest.mark.parametrize(("names", "upstream"), [
    pytest.param(["d_1.0-1.debian.tar.xz", "d_1.0.orig.tar.xz", "d_1.0.orig-extra.tar.xz"], "d_1.0.orig.tar.xz",
                 id="quilt"),
    pytest.param(["d_1.0.tar.xz"], "d_1.0.tar.xz", id="native"),
])
def test_upstream_tarball_name(names: list[str], upstream: str) -> None:
    files = tuple(debsrc.DscFile(name, 1, "0" * 64) for name in names)
    assert debsrc.upstream_name(Path("d_1.0-1.dsc"), files) == upstream


# --- git ------------------------------------------------------------------------------------------------


@pytest.fixture
def upstream(tmp_path: Path) -> dict[str, str]:
    """A fixture upstream: v1 (annotated), v2 (lightweight, one commit later), a CRLF file and an inner link."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "inner").symlink_to("a.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "tag", "-a", "v1", "-m", "v1")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    git(repo, "tag", "v2")
    return {"url": repo.as_uri(), "first": first, "second": git(repo, "rev-parse", "HEAD"), "repo": str(repo)}


def git_source(url: str, commit: str, tag: str | None) -> GitSource:
    return GitSource(url=url, tag=tag, commit=commit)


@pytest.mark.spawns
@pytest.mark.parametrize(("tag", "which"), [
    pytest.param("v1", "first", id="annotated-tag"),
    pytest.param("v2", "second", id="lightweight-tag"),
    pytest.param(None, "first", id="commit-without-tag"),
])
def test_git_pin_is_checked_out_byte_exact(tmp_path: Path, upstream: dict[str, str], tag: str | None,
                                           which: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    tree = pinned.fetch_git(Runner(Log()), git_source(upstream["url"], upstream[which], tag), work).tree
    assert (tree / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
    assert (tree / "inner").is_symlink()
    assert (tree / "b.txt").exists() == (which == "second")
    assert not (tree / ".git").exists()


@pytest.mark.spawns
def test_moved_tag_is_an_error_naming_both_commits(tmp_path: Path, upstream: dict[str, str]) -> None:
    cfg = write_config_text(tmp_path, component_toml(
        f'{{ kind = "git", url = "{upstream["url"]}", tag = "v2", commit = "{upstream["first"]}" }}'))
    with pytest.raises(IntegrityError) as err:
        pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    message = err.value.one_line()
    assert err.value.exit_code == 6
    assert upstream["first"] in message and upstream["second"] in message and "moved tag" in message
    assert pinned.cached("demo", pinned_source(cfg.components["demo"])) is None


@pytest.mark.spawns
def test_missing_tag_falls_through_to_a_clear_error(tmp_path: Path, upstream: dict[str, str]) -> None:
    cfg = write_config_text(tmp_path, component_toml(
        f'{{ kind = "git", url = "{upstream["url"]}", tag = "v9", commit = "{upstream["first"]}" }}'))
    with pytest.raises(MissingPrerequisite) as err:
        pinned.fetch(Runner(Log()), cfg.components["demo"], cfg.sysroot)
    assert err.value.one_line().endswith("did not serve tag v9 for demo; stage it: invoke sources --arch <arch> "
                                         "--component demo (where the network or a git mirror reaches it), "
                                         "set CROSSLANE_GIT_MIRROR, pass --source demo=PATH or add a mirror")
    assert "couldn't find remote ref" in (err.value.detail or "")


@pytest.mark.spawns
def test_git_tree_with_a_link_pointing_outside_is_refused(tmp_path: Path, upstream: dict[str, str]) -> None:
    repo = Path(upstream["repo"])
    (repo / "escape").symlink_to("../../etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(ConfigError, match="points outside the tree"):
        pinned.fetch_git(Runner(Log()), git_source(upstream["url"], git(repo, "rev-parse", "HEAD"), None), work)


@pytest.mark.spawns
def test_unreachable_git_host_fails_fast(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    start = time.monotonic()
    with pytest.raises(net.Unavailable, match=r"127\.0\.0\.1 unreachable"):
        pinned.fetch_git(Runner(Log()), git_source("https://127.0.0.1:1/x.git", "0" * 40, "v1"), work)
    assert time.monotonic() - start < 5


# --- Debian, for real -----------------------------------------------------------------------------------


@pytest.mark.network
def test_debian_source_package_is_fetched_verified_and_extracted(tmp_path: Path) -> None:
    """hello from trixie: .dsc via the signed Sources index, every file re-verified, orig extracted."""
    spec = DebianSource(package="hello", version="2.10-5", suite="trixie")
    work = tmp_path / "work"
    work.mkdir()
    tree = pinned.fetch_debian(Runner(Log()), spec, work, DEFAULTS)
    assert (tree / "src/hello.c").is_file()
    assert not (tree / "debian").exists()  # Debian's packaging and patches are not applied


@pytest.mark.parametrize(("pin", "url", "code"), [
    pytest.param("0" * 64, "archive", 6, id="checksum-mismatch-exits-6"),
    pytest.param("0" * 64, UNREACHABLE, 3, id="unreachable-exits-3"),
])
def test_source_errors_are_one_line_with_their_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          pin: str, url: str, code: int) -> None:
    archive = good_tarball(tmp_path / "pkg.tar.gz")
    write_config_text(tmp_path, component_toml(archive_source(archive.as_uri() if url == "archive" else url, pin)))
    result = commands.run(lambda ctx: list(worktree.prepare(ctx, ctx.config.components["demo"], Arch.AMD64).rows),
                          config_path=str(tmp_path / "versions.toml"))
    err = capsys.readouterr().err
    assert result == code
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("crosslane: error:")]) == 1


def test_cache_entries_keep_the_names_sources_were_staged_under(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Staged sources (hundreds of MB, maybe copied from another machine) stay valid across the move from one
    SourceSpec class to one class per kind: the digest is over the same fields, spelled the same way."""
    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path))
    spec = GitSource(url="https://github.com/o/p", tag="v1", commit="a" * 40, absent_ok=("test/*",))
    legacy = {"kind": "git", "url": "https://github.com/o/p", "tag": "v1", "commit": "a" * 40,
              "absent_ok": "('test/*',)"}
    digest = hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()[:16]
    assert pinned.cache_entry("p", spec).name == f"git-{digest}"
    debian = DebianSource(package="hello", version="2.10-5", mirror="http://m/debian")
    legacy = {"kind": "debian", "package": "hello", "version": "2.10-5", "url": "http://m/debian", "absent_ok": "()"}
    digest = hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()[:16]
    assert pinned.cache_entry("hello", debian).name == f"debian-{digest}"


def _member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


@pytest.mark.parametrize(("members", "words"), [
    ([(_member("pkg/a", tarfile.SYMTYPE, "."), None), (_member("pkg/b", tarfile.SYMTYPE, "a/../x"), None)],
     "leads outside"),
    ([(_member("pkg/l", tarfile.SYMTYPE, "d"), None), (_member("pkg/l/x"), b"x")], "below the link"),
    ([(_member("pkg/x"), b"1"), (_member("pkg/x"), b"2")], "appears twice"),
    ([(_member("pkg/h", tarfile.LNKTYPE, "pkg/missing"), None)], "is not to an earlier file of the archive"),
    ([(_member("pkg/l", tarfile.SYMTYPE, "d"), None), (_member("pkg/d/f"), b"x"),
      (_member("pkg/h", tarfile.LNKTYPE, "pkg/l/f"), None)], "is not to an earlier file of the archive"),
    # tarfile finds a hard link's target among the members before it: a later one, itself or a cycle was a KeyError
    ([(_member("pkg/h", tarfile.LNKTYPE, "pkg/f"), None), (_member("pkg/f"), b"x")],
     "is not to an earlier file of the archive"),
    ([(_member("pkg/ok"), b"x"), (_member("pkg/h", tarfile.LNKTYPE, "pkg/h"), None)],
     "is not to an earlier file of the archive"),
    ([(_member("pkg/a", tarfile.LNKTYPE, "pkg/b"), None), (_member("pkg/b", tarfile.LNKTYPE, "pkg/a"), None)],
     "is not to an earlier file of the archive"),
], ids=["chain-out", "below-link", "file-twice", "hardlink-missing", "hardlink-through-link", "hardlink-forward",
        "hardlink-to-itself", "hardlink-cycle"])
def test_an_archive_is_checked_whole_before_extraction(tmp_path: Path, members: list[tuple[tarfile.TarInfo,
                                                                                        bytes | None]],
                                                       words: str) -> None:
    archive = tarball(tmp_path / "pkg.tar.gz", members)
    with pytest.raises(ConfigError, match=words):
        safe_extract.extract(archive, tmp_path / "tree")
    assert not (tmp_path / "tree").exists()


def test_a_folder_listed_twice_and_a_hard_link_to_a_file_extract(tmp_path: Path) -> None:
    archive = tarball(tmp_path / "pkg.tar.gz", [(_member("pkg/d", tarfile.DIRTYPE), None),
                                                (_member("pkg/d", tarfile.DIRTYPE), None), (_member("pkg/d/f"), b"x"),
                                                (_member("pkg/h", tarfile.LNKTYPE, "pkg/d/f"), None)])
    tree = safe_extract.extract(archive, tmp_path / "tree")
    assert (tree / "h").read_bytes() == b"x" and (tree / "d/f").stat().st_nlink == 2


@pytest.mark.parametrize("reply", [
    b"HELLO WORLD\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n",
    b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: a\r\n" % i for i in range(150)) + b"\r\nhi",
], ids=["no-status-line", "broken-chunk", "too-many-headers"])
def test_a_reply_that_is_no_http_is_an_unavailable_host(tmp_path: Path, reply: bytes) -> None:
    """http.client's errors are no OSErrors: they escaped download() and the next mirror was never tried."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def serve() -> None:
        for _ in range(2):  # the probe's connection, then the request's
            client, _ = server.accept()
            with client:
                if client.recv(65536):
                    client.sendall(reply)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(net.Unavailable, match="a reply that is no HTTP"):
            net.download(f"http://127.0.0.1:{port}/x.tar.gz", tmp_path / "x.tar.gz")
    finally:
        server.close()

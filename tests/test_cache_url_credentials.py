"""A credential in the shared-cache URL (CROSSLANE_CCACHE_REMOTE), each case a real `invoke` process where it
builds: it is printed nowhere and written to no file, and a malformed URL stops every build, dry runs included,
before anything is removed, naming the variable without its text. Every refusal: exit 2, one error line, no
traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostilekit import build_canary, invoke, snapshot

pytestmark = [pytest.mark.spawns, pytest.mark.hostile("credentials in the shared-cache URL")]

SECRET = "s3cr3t-Pa55"


def everything_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink())


@pytest.fixture
def built(tmp_path: Path, sysroots: object) -> dict[str, str]:
    return build_canary(tmp_path)


@pytest.mark.cross
@pytest.mark.parametrize("url", [f"redis://user:{SECRET}@127.0.0.1:1", f"http://user:{SECRET}@127.0.0.1:1/cache",
                                 f"redis://{SECRET}@127.0.0.1:1"],
                         ids=["redis-user-password", "http", "redis-password"])
def test_a_credential_is_printed_nowhere(built: dict[str, str], tmp_path: Path, url: str) -> None:
    env = {**built, "CROSSLANE_CCACHE_REMOTE": url}
    done = invoke("build", "--arch", "riscv64", "--component", "canary", "--force", "--json",
                  str(tmp_path / "report.json"), env=env)
    assert done.rc == 0, done.out
    assert SECRET not in done.out and "CCACHE_REMOTE_STORAGE=" in done.out  # shown, redacted
    assert SECRET.encode() not in everything_under(tmp_path)  # reports, stamps, summary, logs: every file


@pytest.mark.cross
@pytest.mark.parametrize("url", [f"redis://u:{SECRET}@host\nx", f"redis://u:{SECRET}@host|attr",
                                 f"redis ://u:{SECRET}@h"], ids=["newline", "attribute", "space"])
@pytest.mark.parametrize("how", [("--force",), ("--dry-run",), ()], ids=["force", "dry-run", "up-to-date"])
def test_a_malformed_url_stops_every_build_before_anything_changes(built: dict[str, str], tmp_path: Path, url: str,
                                                                   how: tuple[str, ...]) -> None:
    folder = tmp_path / "build" / "riscv64" / "canary"
    before = snapshot(folder, ())
    done = invoke("build", "--arch", "riscv64", "--component", "canary", *how,
                  env={**built, "CROSSLANE_CCACHE_REMOTE": url})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "CROSSLANE_CCACHE_REMOTE is not a ccache remote storage URL" in done.errors[0]
    assert SECRET not in done.out and "Traceback" not in done.out
    assert snapshot(folder, ()) == before  # the install folder and its stamp as they were


@pytest.mark.parametrize("text", [f"redis://user:{SECRET}@h:1", f"redis://:{SECRET}@h", f"https://{SECRET}@h/x",
                                  f"redis://u:{SECRET}/x@h", f"redis://u:{SECRET}@x@h", f"a='redis://u:{SECRET}@h' b"],
                         ids=["user-password", "password", "token", "slash-in-password", "at-in-password", "quoted"])
def test_a_url_credential_is_redacted_whatever_it_holds(text: str) -> None:
    from crosslane.log import redact
    shown = redact(text)
    assert SECRET not in shown and "***@" in shown, shown


@pytest.mark.parametrize("url", [f"u:{SECRET}@redis://h", f"{SECRET}redis://h", f"{SECRET} redis://h"],
                         ids=["credential-before-scheme", "glued", "spaced"])
def test_a_malformed_url_is_named_without_its_text(url: str) -> None:
    from crosslane.errors import ConfigError
    from crosslane.recipes import cmake
    with pytest.raises(ConfigError) as caught:
        cmake.remote_cache({"CROSSLANE_CCACHE_REMOTE": url})
    assert SECRET not in caught.value.one_line() and "no known scheme" in caught.value.one_line()


@pytest.mark.cross
def test_a_malformed_url_stops_a_dry_run_of_the_whole_job(tmp_path: Path, sysroots: object) -> None:
    build = tmp_path / "build"
    done = invoke("all", "--arch", "riscv64", "--component", "canary", "--dry-run",
                  env={"CROSSLANE_BUILD_DIR": str(build), "CROSSLANE_CCACHE_REMOTE": f"redis://u:{SECRET}@h|x"})
    assert done.rc == 2, done.out
    assert len(done.errors) == 1 and "CROSSLANE_CCACHE_REMOTE" in done.errors[0], done.out
    assert SECRET not in done.out and not build.exists()

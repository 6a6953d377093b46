"""The shared compile cache's settings (ccache remote_storage) from the environment, and its counts in the report."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.errors import ConfigError
from crosslane.recipes import cmake


def test_no_url_no_remote() -> None:
    assert cmake.remote_cache({}) == {}
    assert cmake.remote_cache({cmake.REMOTE_ENV: "  "}) == {}


@pytest.mark.parametrize(("read_only", "expected"), [("", "redis://cache:6379"), ("1", "redis://cache:6379|read-only")])
def test_the_url_and_read_only_reach_ccache(read_only: str, expected: str) -> None:
    environ = {cmake.REMOTE_ENV: "redis://cache:6379", cmake.READ_ONLY_ENV: read_only}
    assert cmake.remote_cache(environ) == {"CCACHE_REMOTE_STORAGE": expected}


@pytest.mark.parametrize("url", ["ftp://cache", "redis://a|b", "redis://a b", "--help", "cache:6379"])
def test_a_url_ccache_would_misread_is_refused_naming_the_variable(url: str) -> None:
    with pytest.raises(ConfigError, match=rf"{cmake.REMOTE_ENV} is not a ccache remote storage URL"):
        cmake.remote_cache({cmake.REMOTE_ENV: url})


def test_remote_hits_and_errors_are_counted(tmp_path: Path) -> None:
    log = tmp_path / "stats.log"
    log.write_text("# a.c\ndirect_cache_hit\nremote_storage_hit\nremote_storage_read_hit\n# b.c\ncache_miss\n"
                   "remote_storage_error\n")
    counts = cmake.ccache_counts(log)
    assert counts == {"hits": 1, "misses": 1, "remote_hits": 1, "remote_errors": 1}
    assert "failed 1 times: local cache only" in cmake.remote_note(counts)
    assert cmake.remote_note({"hits": 9, "misses": 1, "remote_hits": 9}) == " (9 of 10 compiles from the remote cache)"
    assert cmake.remote_note({"hits": 1, "misses": 1}) == ""

"""Hostile versions.toml input: one-line ConfigError (exit 2) each, never a traceback, a hang or a write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.config.load import MAX_CONFIG_BYTES
from crosslane.errors import ConfigError, MissingPrerequisite
from crosslane_helpers import versions_header, write_config

pytestmark = [pytest.mark.hostile("versions.toml")]


@pytest.mark.parametrize("name", ["../../../x", ".hidden", "a/b", "", "x" * 65, "a..b", "-flag"])
def test_component_names_that_are_not_folder_names_are_refused(tmp_path: Path, name: str) -> None:
    text = (versions_header() + f'\n[components."{name}"]\nsource = {{ kind = "tree", path = "." }}\n'
            'arches = ["riscv64"]\n')
    with pytest.raises(ConfigError, match=r"component name .* must be 1–64 letters"):
        config_mod.parse(text, tmp_path / "versions.toml")


def test_profile_and_toolchain_names_are_checked_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"profile name '\.\./up' must be"):
        config_mod.parse(versions_header().replace('max = "max"\n[arches.arm64]', '"../up" = "max"\n[arches.arm64]'),
                         tmp_path / "versions.toml")
    with pytest.raises(ConfigError, match="toolchain name 'a/b' must be"):
        config_mod.parse(versions_header().replace("[toolchains.gcc]", '[toolchains."a/b"]\nfamily = "gcc"\n'
                                                   "[toolchains.gcc]"), tmp_path / "versions.toml")


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_timeouts_must_be_finite(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match=f"smoke.timeout: {value.lstrip('-')}|smoke.timeout: -inf"):
        write_config(tmp_path, {"c": f'smoke = {{ kind = "canary", timeout = {value} }}'})


def test_deep_nesting_is_a_config_error(tmp_path: Path) -> None:
    text = versions_header() + "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    with pytest.raises(ConfigError, match=r"nested too deeply|invalid TOML"):
        config_mod.parse(text, tmp_path / "versions.toml")


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "versions.toml"
    path.write_bytes(versions_header().encode() + b"# caf\xe9\n")
    with pytest.raises(ConfigError, match=r"versions.toml: line \d+: not UTF-8 \(byte 0xe9\)"):
        config_mod.load(path)


def test_special_and_huge_files_are_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        config_mod.load(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        config_mod.load(Path("/dev/zero"))
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigError, match="larger than"):
        config_mod.load(big)


@pytest.mark.parametrize(("extra", "words"), [
    ('source_subdir = "../../etc"', "source_subdir: '../../etc' must stay inside the source tree"),
    ('source_subdir = "/abs"', "source_subdir: '/abs' must stay inside the source tree"),
], ids=["dotdot", "absolute"])
def test_source_subdir_stays_inside(tmp_path: Path, extra: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace(".", r"\.")):
        write_config(tmp_path, {"c": extra})


@pytest.mark.parametrize("path", ["", "."])
def test_an_empty_tree_path_is_an_error(tmp_path: Path, path: str) -> None:
    text = (versions_header() + f'\n[components.c]\nsource = {{ kind = "tree", path = "{path}" }}\n'
            'arches = ["riscv64"]\n')
    with pytest.raises(ConfigError, match="an empty path would mean the whole folder"):
        config_mod.parse(text, tmp_path / "versions.toml")


@pytest.mark.parametrize(("change", "words"), [
    (('cmake = "3.31.6"', 'cmake = "latest"'), "tools.cmake: 'latest' is not a version such as 3.31.6"),
    (('ninja = "1.13.0"', 'ninja = "1.13.0; rm -rf /"'), "tools.ninja: '1.13.0; rm -rf /' is not a version"),
    (("version = 19", "version = 1900"), "toolchains.clang.version: 1900 is not a compiler major version"),
], ids=["cmake", "ninja", "toolchain"])
def test_tool_versions_are_checked_on_load(tmp_path: Path, change: tuple[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_mod.parse(versions_header().replace(*change), tmp_path / "versions.toml")
    assert words in caught.value.message


def test_a_smoke_names_only_known_profiles(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"components\.c\.smoke\.profiles: unknown CPU profile\(s\) rvv1024"):
        write_config(tmp_path, {"c": 'smoke = { kind = "canary", profiles = ["rvv1024"] }'})


@pytest.mark.parametrize(("extra", "words"), [
    ('smoke = { kind = "canary", timeout = 1' + "0" * 320 + " }",
     "components.c.smoke.timeout: an integer of 1064 bits, beyond TOML's 64-bit range"),
    ('source_subdir = "a\\u0000b"', "components.c.source_subdir: a string with a NUL character"),
    ('"a\\u0000b" = 1', "'components.c.a\\x00b': a key with a NUL character"),
], ids=["huge-integer", "nul-in-a-string", "nul-in-a-key"])
def test_what_tomllib_reads_but_no_key_can_hold_is_one_line(tmp_path: Path, extra: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        write_config(tmp_path, {"c": extra})
    assert words in caught.value.message, caught.value.message


def test_a_unicode_digit_in_a_vlen_is_no_number(tmp_path: Path) -> None:
    text = versions_header().replace("vlen=128", "vlen=\u00b2")
    with pytest.raises(ConfigError, match=r"arches.riscv64.profiles.rvv128: vlen=\u00b2 .* is not a power of two"):
        config_mod.parse(text, tmp_path / "versions.toml")


@pytest.mark.parametrize("key", ["extends", "depends"])
def test_a_chain_deeper_than_pythons_recursion_loads(tmp_path: Path, key: str) -> None:
    """1,500 components each extending (or depending on) the next: valid, and read without recursion."""
    (tmp_path / "components" / "c").mkdir(parents=True)
    text = versions_header() + '[components.c1500]\nsource = { kind = "tree", path = "components/c" }\n'
    for index in range(1, 1500):
        if key == "extends":
            text += f'[components.c{index}]\nextends = "c{index + 1}"\n'
        else:
            text += (f'[components.c{index}]\nsource = {{ kind = "tree", path = "components/c" }}\n'
                     f'depends = ["c{index + 1}"]\n')
    (tmp_path / "versions.toml").write_text(text)
    cfg = config_mod.load(tmp_path / "versions.toml")
    assert len(cfg.components) == 1500
    assert cfg.build_order(("c1",))[:2] == (("c1500", "c1499") if key == "depends" else ("c1",))


def test_a_debian_suite_that_would_read_as_an_option_is_refused(tmp_path: Path) -> None:
    text = versions_header().replace('suite = "trixie"', 'suite = "--hook-dir=/tmp/x"')
    with pytest.raises(ConfigError, match=r"sysroot.suite: '--hook-dir=/tmp/x' is not a Debian suite name"):
        config_mod.parse(text, tmp_path / "versions.toml")
    text = versions_header() + '[toolroots.forky]\nsuite = "../escaped"\n'
    with pytest.raises(ConfigError, match=r"toolroots.forky.suite: '../escaped' is not a Debian suite name"):
        config_mod.parse(text, tmp_path / "versions.toml")


def test_a_plug_in_that_cannot_be_loaded_is_one_line_naming_its_package(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "site" / "brokenplug-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[crosslane.smokes]\nmysmoke = brokenplug_missing.mod:ENTRY\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(MissingPrerequisite) as caught:
        write_config(tmp_path, {"c": 'smoke = { kind = "mysmoke" }'})
    assert caught.value.one_line().startswith(
        "brokenplug: its crosslane.smokes entry point 'mysmoke = brokenplug_missing.mod:ENTRY' cannot be loaded "
        "(ModuleNotFoundError: No module named 'brokenplug_missing')"), caught.value.one_line()
    assert "repair or uninstall brokenplug" in caught.value.one_line()


def test_a_byte_order_mark_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"versions\.toml: line 1: starts with a byte-order mark"):
        config_mod.parse("\ufeff" + versions_header(), tmp_path / "versions.toml")

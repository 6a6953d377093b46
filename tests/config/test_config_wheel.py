"""components.<c>.wheel: the CPythons a cmake-wheel component builds for, what it bundles, its install roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane_helpers import write_config

WHEEL = 'recipe = "cmake-wheel"\n[components.app.wheel]\n'


def test_the_wheel_table_parses_and_names_build_identifiers(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"ort": "", "app": 'depends = ["ort"]\n' + WHEEL +
                                  'pythons = ["3.13", "3.14"]\nbundle = { riscv64 = ["libonnxruntime.so.1.23"] }\n'
                                  'drop_requires = { riscv64 = ["onnxruntime"] }\n'
                                  'install_suites = { "3.13" = "trixie" }\ninstall_packages = ["python3-numpy"]'})
    spec = cfg.components["app"].wheel
    assert spec.identifiers(Arch.RISCV64, "3.14") == ("cp313-linux_riscv64", "cp314-linux_riscv64")
    assert dict(spec.bundle) == {Arch.RISCV64: ("libonnxruntime.so.1.23",)} and spec.repair
    assert dict(spec.drop_requires) == {Arch.RISCV64: ("onnxruntime",)}
    assert dict(spec.install_suites) == {"3.13": "trixie"} and spec.install_packages == ("python3-numpy",)
    # Each CPython is in the sysroot: its headers, libpython and the interpreter FindPython runs.
    assert {"python3.13", "libpython3.13-dev", "python3.14", "libpython3.14-dev"} <= set(cfg.sysroot.packages)


def test_without_pythons_the_identifier_is_the_sysroots_cpython(tmp_path: Path) -> None:
    spec = write_config(tmp_path, {"app": 'recipe = "cmake-wheel"'}).components["app"].wheel
    assert spec.identifiers(Arch.AMD64, "3.14") == ("cp314-linux_x86_64",)


@pytest.mark.parametrize(("extra", "expected"), [
    (WHEEL + 'pythons = ["3.14", "py3"]', r"components\.app\.wheel\.pythons: entry 1: 'py3' is not a CPython"),
    (WHEEL + 'pythons = ["3.14", "3.14"]', r"pythons: a CPython is listed twice"),
    (WHEEL + 'bundle = { amd64 = ["onnxruntime.dll"] }',
     r"bundle: amd64: 'onnxruntime.dll' is not a shared library file name"),
    (WHEEL + 'bundle = { amd64 = ["../libx.so"] }', r"bundle: amd64: '\.\./libx\.so' is not a shared library"),
    (WHEEL + 'drop_requires = { amd64 = ["onnxruntime"] }',
     r"drop_requires: amd64: a requirement is dropped only for a library"),
    (WHEEL + 'pythons = ["3.14"]\ninstall_suites = { "3.13" = "trixie" }',
     r"install_suites\.3\.13: '3\.13' = 'trixie': a CPython of pythons"),
    (WHEEL + 'pythons = ["3.14"]\ninstall_suites = { "3.14" = "../x" }', r"install_suites\.3\.14"),
    (WHEEL + 'install_packages = ["python3-numpy; rm"]', r"install_packages"),
    (WHEEL + 'symbol_versions = { amd64 = ["log10f"] }', r"symbol_versions: amd64: 'log10f' is not symbol@VERSION"),
    (WHEEL + 'symbol_versions = { amd64 = ["a@b\\"); x(\\""] }', r"symbol_versions: amd64: .* is not symbol@VERSION"),
    (WHEEL + 'pythons = ["3.14"]\nrepiar = true',
     r"components\.app\.wheel\.repiar: unknown key; did you mean 'repair'"),
    ('[components.app.wheel]\npythons = ["3.14"]', r"components\.app\.wheel: a \[wheel\] table is read by the "
                                                   r"cmake-wheel recipe only"),
], ids=["not-a-version", "twice", "dll", "climbs", "drop-without-bundle", "suite-for-unknown-python",
        "suite-not-a-name", "package-name", "symver-without-version", "symver-injection", "typo", "wrong-recipe"])
def test_a_bad_wheel_table_names_its_key(tmp_path: Path, extra: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        write_config(tmp_path, {"ort": "", "app": extra})


def test_symbol_versions_parse_per_arch(tmp_path: Path) -> None:
    spec = write_config(tmp_path, {"app": WHEEL + 'symbol_versions = { amd64 = ["log10f@GLIBC_2.2.5"] }'}
                        ).components["app"].wheel
    assert dict(spec.symbol_versions) == {Arch.AMD64: ("log10f@GLIBC_2.2.5",)}

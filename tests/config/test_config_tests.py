"""components.<c>.tests: an upstream suite's kind, selection, requirements and per-arch exemptions; each mistake is
one line naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane_helpers import write_config

TESTS = "[components.app.tests]\n"


def test_a_ctest_suite_parses(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": TESTS + 'kind = "ctest"\ncmake_args = ["-DT=ON"]\ntargets = ["a-test"]\n'
                                  'timeout = 60\nprofiles = ["rvv128"]\ncontrol = false\n'
                                  '[components.app.tests.exempt.riscv64]\n'
                                  '"a-test/S.*" = "fails for a measured reason"'})
    spec = cfg.components["app"].tests
    assert spec is not None and spec.kind == "ctest" and spec.targets == ("a-test",) and not spec.control
    assert dict(spec.exempt[Arch.RISCV64]) == {"a-test/S.*": "fails for a measured reason"}
    assert cfg.components["app"].tests is not None and write_config(
        tmp_path, {"app": ""}).components["app"].tests is None


def test_a_pytest_suite_pins_its_requirements(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": TESTS + 'kind = "pytest"\npaths = ["test/python/test_x.py"]\n'
                                  'requirements = ["pytest==8.4.2"]\npackages = ["python3-numpy"]\n'
                                  'arch_packages = { riscv64 = ["python3-onnxruntime"] }'})
    spec = cfg.components["app"].tests
    assert spec is not None and spec.requirements == ("pytest==8.4.2",)
    assert dict(spec.arch_packages) == {Arch.RISCV64: ("python3-onnxruntime",)}


@pytest.mark.parametrize(("extra", "expected"), [
    ('kind = "gtest"', r"components\.app\.tests\.kind: unknown test suite kind 'gtest'"),
    ('kind = "ctest"\nregex = "("', r"tests\.regex: '\(' is not a regular expression"),
    ('kind = "ctest"\npaths = ["t.py"]', r"tests\.paths: 'paths' is read by kind = \"pytest\" only"),
    ('kind = "pytest"\npaths = ["t.py"]\ntargets = ["x"]', r"tests\.targets: 'targets' is read by kind = \"ctest\""),
    ('kind = "pytest"', r"tests\.paths: a pytest suite names its test files"),
    ('kind = "pytest"\npaths = ["../t.py"]', r"tests\.paths\[0\]: '\.\./t\.py' is not a test file inside the source"),
    ('kind = "pytest"\npaths = ["t.py"]\nrequirements = ["pytest"]', r"requirements\[0\]: 'pytest' has no version"),
    ('kind = "ctest"\ntimeout = 0', r"tests\.timeout: 0 is not a number of seconds above 0"),
    ('kind = "ctest"\n[components.app.tests.exempt.riscv64]\n"x" = "later"',
     r"tests\.exempt\.riscv64\.x: 'x': an exemption is a test id .* and the measured reason"),
    ('kind = "ctest"\n[components.app.tests.exempt.sparc]\n"x" = "a long enough reason"', r"exempt\.sparc"),
    ('kind = "ctest"\nwhatever = 1', r"tests\.whatever: unknown key"),
    ('kind = "ctest"\nemulator = { arm64 = "qemu-new" }', r"tests\.emulator: unknown key"),
])
def test_a_bad_tests_table_names_its_key(tmp_path: Path, extra: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        write_config(tmp_path, {"app": TESTS + extra})


def test_the_real_suites_parse(cfg: object) -> None:
    from crosslane.config import Config

    assert isinstance(cfg, Config)
    declared = {name for name, c in cfg.components.items() if c.tests is not None}
    assert {"cpuinfo", "onnxruntime-genai", "xnnpack", "xnnpack-novector"} <= declared
    novector = cfg.components["xnnpack-novector"].tests
    assert novector is not None and novector.profiles == ("novector",) and novector.targets  # merged from xnnpack


def test_a_suites_own_dependencies_stay_out_of_the_components_build(cfg: object) -> None:
    from crosslane.config import Config

    assert isinstance(cfg, Config)
    cpuinfo = cfg.components["cpuinfo"]
    assert cpuinfo.tests is not None and "googletest" in cpuinfo.tests.fetchcontent
    assert "googletest" not in cpuinfo.fetchcontent  # the library's build fetches only what it reads
    assert "googletest" in cfg.components["xnnpack-novector"].tests.fetchcontent  # type: ignore[union-attr]


def test_a_test_builds_dependency_takes_no_patches(tmp_path: Path) -> None:
    text = (TESTS + 'kind = "ctest"\n[components.app.tests.fetchcontent.googletest]\n'
            'source = { kind = "git", url = "https://example.invalid/g", commit = "' + "a" * 40 + '" }\n'
            'patches = [{ path = "x.patch", sha256 = "' + "0" * 64 + '" }]\n')
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "x.patch").write_text("")
    with pytest.raises(ConfigError, match=r"tests\.fetchcontent: a test build's dependencies are used as pinned"):
        write_config(tmp_path, {"app": text})

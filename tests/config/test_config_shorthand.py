"""versions.toml's ways of stating a fact once: component `extends`, `@group` arguments, [pins], host-venv `extends`,
and arch membership only in components' `arches`; each mistake is one line naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.config import Config
from crosslane.errors import ConfigError
from crosslane_helpers import REPO, versions_header

FAMILY = """
[args]
runner = ["-DRUNNER=ON", "-DLOG=ON"]
[components.base]
source = { kind = "git", url = "https://example.org/p", commit = "0123456789abcdef0123456789abcdef01234567" }
arches = ["amd64", "arm64", "riscv64"]
toolchain = { amd64 = "clang", riscv64 = "clang" }
options = { xnnpack = "off" }
cmake_args = ["-DX={option_xnnpack}"]
arch_cmake_args = { amd64 = ["@runner"], arm64 = ["@runner"], riscv64 = ["-DPRESET=rv"] }
smoke = { kind = "canary", timeout = 60 }
[components.variant]
extends = "base"
options = { xnnpack = "on" }
arch_cmake_args = { arm64 = ["@runner", "-DKLEIDI=OFF"] }
smoke = { timeout = 90 }
[components.narrow]
extends = "variant"
arches = ["riscv64"]
"""


def parse(text: str) -> Config:
    return config_mod.parse(versions_header() + text, Path("/x/versions.toml"))


def test_a_variant_states_only_what_differs() -> None:
    cfg = parse(FAMILY)
    base, variant, narrow = (cfg.components[n] for n in ("base", "variant", "narrow"))
    assert variant.cmake_args_for(Arch.AMD64) == ("-DX={option_xnnpack}", "-DRUNNER=ON", "-DLOG=ON")
    assert variant.cmake_args_for(Arch.ARM64) == ("-DX={option_xnnpack}", "-DRUNNER=ON", "-DLOG=ON", "-DKLEIDI=OFF")
    assert variant.cmake_args_for(Arch.RISCV64) == base.cmake_args_for(Arch.RISCV64) == ("-DX={option_xnnpack}",
                                                                                        "-DPRESET=rv")
    assert (base.options["xnnpack"], variant.options["xnnpack"]) == ("off", "on")
    assert variant.smoke is not None and (variant.smoke.kind, variant.smoke.timeout) == ("canary", 90.0)
    # the parent's source, shared (one staged copy), through a chain of two
    assert (variant.source_of, narrow.source_of) == ("base", "base")
    assert variant.sources == narrow.sources == base.sources
    # per-arch entries of arches the variant does not build are dropped; the control's stay when it builds the
    # variant because its smoke compares with it (a canary smoke does)
    assert dict(narrow.arch_cmake_args) == {Arch.RISCV64: ("-DPRESET=rv",), Arch.AMD64: ("-DRUNNER=ON", "-DLOG=ON")}
    assert dict(narrow.toolchain) == {Arch.RISCV64: "clang", Arch.AMD64: "clang"}
    uncompared = parse(FAMILY.replace('smoke = { kind = "canary", timeout = 60 }',
                                      'smoke = { kind = "cpuinfo-isa", timeout = 60 }')).components["narrow"]
    assert dict(uncompared.arch_cmake_args) == {Arch.RISCV64: ("-DPRESET=rv",)}


def test_an_arch_job_is_every_component_that_lists_it() -> None:
    cfg = parse(FAMILY)
    assert cfg.arches[Arch.RISCV64].components == ("base", "variant", "narrow")
    assert cfg.arches[Arch.ARM64].components == ("base", "variant")


@pytest.mark.parametrize(("edit", "message"), [
    pytest.param(('extends = "base"\noptions', 'extends = "bsae"\noptions'),
                 r"components\.variant\.extends: unknown component 'bsae'; did you mean 'base'\?", id="unknown-parent"),
    pytest.param(("[components.base]\n", '[components.base]\nextends = "narrow"\n'),
                 r"components\.\w+\.extends: inheritance cycle", id="cycle"),
    pytest.param(('["@runner", "-DKLEIDI=OFF"]', '["@runer", "-DKLEIDI=OFF"]'),
                 r"components\.variant\.arch_cmake_args\.arm64\[0\]: unknown argument group 'runer'; "
                 r"did you mean 'runner'\?", id="unknown-group"),
    pytest.param(('runner = ["-DRUNNER=ON", "-DLOG=ON"]', 'runner = ["@other"]'),
                 r"args\.runner\[0\]: a group cannot name another group", id="nested-group"),
    pytest.param(('extends = "base"\noptions', 'extends = 3\noptions'),
                 r"components\.variant\.extends: expected the name of another component", id="not-a-name"),
])
def test_shorthand_mistakes_are_one_line_naming_the_key(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as raised:
        parse(FAMILY.replace(*edit))
    assert "\n" not in str(raised.value)


PINNED = """
[pins]
torch = "2.13.0"
PyYAML = "6.0.4"
[hostenvs.base]
requirements = ["torch", "pyyaml"]
[hostenvs.more]
extends = "base"
requirements = ["gguf==0.19.0"]
"""


def test_pins_state_a_version_once_and_venvs_extend() -> None:
    extras = parse(PINNED.replace('requirements = ["torch", "pyyaml"]', 'requirements = ["torch[cpu]", "pyyaml"]'))
    assert extras.hostenvs["base"][0] == "torch[cpu]==2.13.0"
    cfg = parse(PINNED)
    assert cfg.hostenvs["base"] == ("torch==2.13.0", "pyyaml==6.0.4")
    assert cfg.hostenvs["more"] == ("torch==2.13.0", "pyyaml==6.0.4", "gguf==0.19.0")


@pytest.mark.parametrize(("edit", "message"), [
    pytest.param(('["gguf==0.19.0"]', '["gguf"]'), r"hostenvs\.more\.requirements\[0\]: 'gguf' has no version",
                 id="bare-unpinned"),
    pytest.param(('["gguf==0.19.0"]', '["torch==2.12.0"]'), r"'torch==2\.12\.0': torch is pinned in \[pins\] already",
                 id="pinned-twice"),
    pytest.param(('["gguf==0.19.0"]', '["gguf>=0.19"]'), r"'gguf>=0\.19' is not pinned", id="range"),
    pytest.param(('PyYAML = "6.0.4"', 'PyYAML = "6.0.4"\npyyaml = "6.0.3"'), r"pins\.pyyaml: pyyaml is pinned twice",
                 id="pin-twice"),
    pytest.param(('torch = "2.13.0"', 'torch = ">=2"'), r"pins\.torch: '>=2' is not a version", id="pin-range"),
    # found by `nox -s reliability`'s fuzzing: a pin pip cannot read was a traceback, not this line
    pytest.param(('torch = "2.13.0"', 'torch = ".2.13.0"'), r"pins\.torch: '\.2\.13\.0' is not a version",
                 id="pin-not-pep440"),
    pytest.param(('torch = "2.13.0"', '"torch==1" = "2"'), r"'torch==1' is not a distribution name", id="pin-key"),
])
def test_pin_mistakes_are_one_line_naming_the_key(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse(PINNED.replace(*edit))


def test_the_repository_states_each_fact_once() -> None:
    text = (REPO / "versions.toml").read_text()
    # every pinned distribution's version appears once; the runner flags once; no arch lists its components
    for name, version in config_mod.load(REPO / "versions.toml").hostenvs.items():
        assert name
        for requirement in version:
            dist, _, pin = requirement.partition("==")
            assert len(re.findall(rf'"{re.escape(dist)}==', text)) + len(re.findall(
                rf'^{re.escape(dist)} = "{re.escape(pin)}"', text, re.M)) == 1, requirement
    assert text.count("-DEXECUTORCH_BUILD_EXECUTOR_RUNNER=ON") == 1
    assert not re.search(r"^\[arches\.[^]]+\]\n(?:[^[]*\n)*?components\s*=", text, re.M)


PINS = {"torch": "2.13.0", "torch-vision": "0.29.1", "numpy": "2.3.4"}


@pytest.mark.parametrize(("value", "expected"), [
    ("torch", "torch==2.13.0"),
    ("Torch_Vision", "Torch_Vision==0.29.1"),
    ("numpy[extra]", "numpy[extra]==2.3.4"),
    ("numpy; python_version >= '3.11'", 'numpy==2.3.4; python_version >= "3.11"'),
    ("pyyaml==6.0.4", "pyyaml==6.0.4"),
    ("pyyaml[a]==6.0.4 ; os_name == 'posix'", "pyyaml[a]==6.0.4 ; os_name == 'posix'"),
    ("scipy", "error: versions.toml: hostenvs.demo.requirements[0]: 'scipy' has no version: pin it in [pins]"),
    ("torch==2.12.0", "error: versions.toml: hostenvs.demo.requirements[0]: 'torch==2.12.0': torch is pinned in"),
    ("pyyaml>=6", "error: versions.toml: hostenvs.demo.requirements[0]: 'pyyaml>=6' is not pinned"),
    ("pyyaml==6,!=6.1", "error: versions.toml: hostenvs.demo.requirements[0]: 'pyyaml==6,!=6.1' is not pinned"),
    ("-bad", "error: versions.toml: hostenvs.demo.requirements[0]: '-bad' is not a requirement"),
])
def test_a_requirement_is_pinned_from_pins_or_refused(value: str, expected: str) -> None:
    from crosslane.config import shorthand
    from crosslane.config.reader import Table

    where = Table({}, "versions.toml", "hostenvs.demo.requirements")
    assert outcome_of(lambda: shorthand.pinned_requirements((value,), PINS, where)[0]).startswith(expected)


def outcome_of(read: object) -> str:
    assert callable(read)
    try:
        return str(read())
    except ConfigError as exc:
        return f"error: {exc}"


@pytest.mark.parametrize(("name", "valid"), [("torch", True), ("Torch_Vision", True), ("a.b-c_d", True), ("a", True),
                                             ("-a", False), ("a-", False), ("a b", False), ("a[x]", False),
                                             ("", False), ("é", False), ("a;", False)])
def test_a_pin_name_is_a_distribution_name(name: str, valid: bool) -> None:
    from crosslane.config import shorthand

    assert shorthand.is_distribution_name(name) is valid

"""versions.toml: the real file loads; every bad input is one line, exit 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config
from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.errors import ConfigError

GOOD = """\
schema = 1
[tools]
cmake = "3.31.6"
ninja = "1.13.0"
[sysroot]
packages = ["libc6-dev"]
[toolchains.gcc]
family = "gcc"
[arches.amd64]
toolchain = "gcc"
[arches.amd64.profiles]
max = "max"
[arches.riscv64]
toolchain = "gcc"
[arches.riscv64.profiles]
rvv128 = "rv64,v=true,vlen=128"
[components.canary]
source = { kind = "tree", path = "src" }
arches = ["amd64", "riscv64"]
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "src").mkdir(exist_ok=True)
    path = tmp_path / "versions.toml"
    path.write_text(text)
    return path


def test_real_versions_toml_loads(cfg: config.Config) -> None:
    assert set(cfg.arches) == {Arch.AMD64, Arch.ARM64, Arch.RISCV64}
    riscv = cfg.arches[Arch.RISCV64]
    assert [p.name for p in riscv.profiles] == ["novector", "rvv128", "rvv256", "rvv512"]
    assert [p.vlen(Arch.RISCV64) for p in riscv.profiles] == [None, 128, 256, 512]
    assert riscv.profile("novector").cpu == "rv64,zba=true,zbb=true,zbs=true,v=false"
    assert riscv.profile("rvv256").cpu == "rv64,zba=true,zbb=true,zbs=true,v=true,vlen=256,elen=64,vext_spec=v1.0"
    assert cfg.toolchain_for("canary", Arch.RISCV64).family == "clang"
    assert {"python3", "libpython3-dev"} <= set(cfg.sysroot.packages_for(Arch.RISCV64))


def test_minimal_config_parses(tmp_path: Path) -> None:
    cfg = config.load(write(tmp_path, GOOD))
    assert cfg.components["canary"].arches == (Arch.AMD64, Arch.RISCV64)
    assert cfg.build_order(("canary",)) == ("canary",)
    assert cfg.arches[Arch.AMD64].default_profile == "max"


CASES = {
    "syntax-error": (GOOD.replace('cmake = "3.31.6"', 'cmake = "3.31.6'),
                     "versions.toml: invalid TOML: "),
    "unknown-key": (GOOD.replace('arches = ["amd64", "riscv64"]', 'arhces = ["amd64", "riscv64"]'),
                    "versions.toml: components.canary.arhces: unknown key; did you mean 'arches'?"),
    "wrong-type": (GOOD.replace('cmake = "3.31.6"', "cmake = 3"),
                   "versions.toml: tools.cmake: expected a string, got integer 3"),
    "unknown-arch": (GOOD.replace('arches = ["amd64", "riscv64"]', 'arches = ["amd64", "riscv64", "riscv"]'),
                     "versions.toml: components.canary.arches[2]: unknown arch 'riscv' (known: amd64, arm64, riscv64)"),
    "missing-source": (GOOD.replace('source = { kind = "tree", path = "src" }\n', ""),
                       "versions.toml: components.canary: missing required key 'source'; add source = "
                       "{ kind = \"tree\", path = \"components/canary\" } or a pinned git/archive/debian source"),
    "unknown-dependency": (GOOD + 'depends = ["cpuinfoo"]\n[components.cpuinfo]\nsource = { kind = "tree", '
                           'path = "src" }\narches = ["amd64"]\n',
                           "versions.toml: components.canary.depends[0]: unknown dependency 'cpuinfoo'; "
                           "did you mean 'cpuinfo'?"),
    "cycle": (GOOD + 'depends = ["b"]\n[components.b]\nsource = { kind = "tree", path = "src" }\n'
              'depends = ["canary"]\n',
              "versions.toml: components.canary.depends: dependency cycle canary -> b -> canary; "
              "remove one of these dependencies"),
    "escaping-path": (GOOD.replace('path = "src"', 'path = "../outside"'),
                      "versions.toml: components.canary.source.path: path '../outside' escapes the repository; "
                      "use a path inside "),
    "vector-without-vlen": (GOOD.replace('rvv128 = "rv64,v=true,vlen=128"', 'rvv128 = "rv64,v=true"'),
                            "versions.toml: arches.riscv64.profiles.rvv128: 'rv64,v=true' enables the vector unit "
                            "without vlen=N; state the VLEN (qemu versions disagree on the default)"),
    "archive-without-sha256": (GOOD.replace('source = { kind = "tree", path = "src" }',
                                            'source = { kind = "archive", url = "https://example.org/x.tar.gz" }'),
                               "versions.toml: components.canary.source: archive 'https://example.org/x.tar.gz' has "
                               "no sha256; add sha256 = \"…\" (no checksum, no fetch)"),
    "schema": (GOOD.replace("schema = 1", "schema = 7"),
               "versions.toml: schema: 7 is not a schema this crosslane reads (schema = 1)"),
}


@pytest.mark.parametrize("text,message", CASES.values(), ids=list(CASES))
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                      message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        config.load(path)
    assert raised.value.one_line().startswith(message)
    code = commands.run(lambda ctx: [], config_path=str(path))
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("crosslane: error: " + message)
    assert "Traceback" not in err


def test_debug_shows_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, CASES["wrong-type"][0])
    assert commands.run(lambda ctx: [], config_path=str(path), debug=True) == 2
    assert "Traceback" in capsys.readouterr().err


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        config.load(tmp_path / "nope.toml")


def test_find_config_walks_up(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert config.find_config(deep) == path
    with pytest.raises(ConfigError, match="not found"):
        config.find_config(Path("/"))


@pytest.mark.parametrize("edit,message", [
    (('toolchain = "gcc"\n[arches.amd64.profiles]', 'toolchain = "gc"\n[arches.amd64.profiles]'),
     "unknown toolchain 'gc'"),
    (('toolchain = "gcc"\n[arches.amd64.profiles]',
      'toolchain = "gcc"\ncomponents = ["canary"]\n[arches.amd64.profiles]'),
     "arches.amd64.components: an arch's job is every component whose arches list it"),
    (('family = "gcc"', 'family = "msvc"'), "unknown toolchain family 'msvc'"),
    (('kind = "tree"', 'kind = "tre"'), "did you mean 'tree'?"),
    (('path = "src"', 'path = "missing"'), "'missing' is not a folder"),
    (("[arches.amd64]\n", "[arches.amd64]\ndefault_profile = \"x\"\n"), "unknown profile 'x'"),
    (('arches = ["amd64", "riscv64"]', 'arches = ["amd64", "arm64"]'), "arch 'arm64' has no [arches.arm64] table"),
    (("[arches.amd64]\n", "[arches.amd64]\nemulator = \"qemu-new\"\n"),
     "arches.amd64.emulator: unknown tool root 'qemu-new'"),
], ids=["toolchain", "arch-components", "family", "source-kind", "missing-folder", "profile", "arch-table",
        "emulator"])
def test_reference_errors(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        config.load(write(tmp_path, GOOD.replace(*edit)))


def test_lanes_exemptions_floors_parse(tmp_path: Path) -> None:
    text = GOOD + ('[lanes.canary.riscv64]\nenabled = false\nreason = "slow"\n'
                   '[parity.exemptions]\n"riscv64:canary" = "not packaged"\n[floors]\nriscv64 = 2\n')
    cfg = config.load(write(tmp_path, text))
    lane = cfg.lanes[("canary", Arch.RISCV64)]
    assert (lane.enabled, lane.reason) == (False, "slow")
    assert cfg.parity_exemptions == {"riscv64:canary": "not packaged"}
    assert cfg.floors == {Arch.RISCV64: 2}


def test_bad_exemption_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match='expected "arch:distribution"'):
        config.load(write(tmp_path, GOOD + '[parity.exemptions]\n"riscv64" = "x"\n'))


def test_every_registry_entry_imports() -> None:
    from crosslane.features import rules
    from crosslane.registry import OPTIONS, RECIPES, SMOKES, SUITES

    for registry in (RECIPES, SMOKES, SUITES):
        for name in registry.names():
            assert callable(registry.load(name)), f"{registry.kind} {name}"
    for option in OPTIONS.names():
        assert callable(rules.option_rule(option))


def test_unknown_recipe_is_checked_against_the_registry(tmp_path: Path) -> None:
    text = GOOD + 'recipe = "cmak"\n'
    with pytest.raises(ConfigError, match="unknown recipe 'cmak'; did you mean 'cmake'"):
        config.load(write(tmp_path, text))


def test_provided_recipe_goes_with_sysroot_package_sources(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="recipe 'provided' and source kind 'tree' do not go together"):
        config.load(write(tmp_path, GOOD.replace('arches = ["amd64", "riscv64"]',
                                                 'arches = ["amd64", "riscv64"]\nrecipe = "provided"')))


@pytest.mark.parametrize("edit,message", [
    (('source = { kind = "tree", path = "src" }', 'source = { kind = "tree", path = "src" }\n'
      'smoke = { kind = "canari" }'), "components.canary.smoke.kind: unknown smoke kind 'canari'; did you mean "
                                       "'canary'?"),
    (('source = { kind = "tree", path = "src" }', 'source = { kind = "tree", path = "src" }\n'
      'smoke = { kind = "canary", timeout = 0 }'),
     "components.canary.smoke.timeout: 0 is not a number of seconds above 0"),
    (('vlen=128"', 'vlen=abc"'), "arches.riscv64.profiles.rvv128: vlen=abc in 'rv64,v=true,vlen=abc' is not a "
                                 "power of two >= 64"),
    (('vlen=128"', 'vlen=96"'), "is not a power of two >= 64"),
], ids=["smoke-kind", "smoke-timeout", "vlen-text", "vlen-96"])
def test_values_checked_on_load(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config.load(write(tmp_path, GOOD.replace(*edit)))
    assert message in raised.value.one_line()


@pytest.mark.parametrize("edit,message", [
    (('source = { kind = "tree", path = "src" }', 'source = { kind = "tree", path = "src" }\n'
      'patches = [{ path = "../versions.toml", sha256 = "' + "0" * 64 + '" }]'),
     "components.canary.patches[0].path: path '../versions.toml' escapes patches; use a path inside "),
    (('source = { kind = "tree", path = "src" }', 'source = { kind = "tree", path = "src" }\n'
      'mirrors = [{ kind = "tree", path = "src" }]'),
     "components.canary.mirrors[0].kind: a mirror must be pinned content (git, archive, debian), not 'tree'"),
], ids=["patch-outside-patches", "tree-mirror"])
def test_component_paths_and_mirrors(tmp_path: Path, edit: tuple[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        config.load(write(tmp_path, GOOD.replace(*edit)))
    assert message in raised.value.one_line()


def test_negative_floor(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"floors\.riscv64: -1 is not a count of components"):
        config.load(write(tmp_path, GOOD + "[floors]\nriscv64 = -1\n"))

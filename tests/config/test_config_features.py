"""The additive component keys: options, rust, rust_options, host_tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane_helpers import write_config, write_config_text


def test_feature_keys_parse(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"app": 'options = { xnnpack = "on" }\nrust = true\n'
                                         'rust_options = ["-DUSE_GUIDANCE=ON"]\nhost_tools = ["flatc", "protoc"]'})
    app = cfg.components["app"]
    assert dict(app.options) == {"xnnpack": "on"}
    assert app.rust and app.rust_options == ("-DUSE_GUIDANCE=ON",) and app.host_tools == ("flatc", "protoc")


def test_feature_keys_default_off(tmp_path: Path) -> None:
    app = write_config(tmp_path, {"app": ""}).components["app"]
    assert (dict(app.options), app.rust, app.rust_options, app.host_tools) == ({}, False, (), ())


@pytest.mark.parametrize(("extra", "expected"), [
    ('options = { xnnpak = "on" }', "components.app.options.xnnpak: unknown option 'xnnpak'; did you mean 'xnnpack'?"),
    ('options = { xnnpack = "yes" }', "components.app.options.xnnpack: 'yes' is not one of auto, on, off"),
    ("rust = 1", "components.app.rust: expected a boolean"),
], ids=["typo", "bad-value", "rust-not-bool"])
def test_feature_keys_rejected(tmp_path: Path, extra: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected.replace("(", r"\(").replace("?", r"\?")):
        write_config(tmp_path, {"app": extra})


def test_provenance_names_a_dependency(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, {"ort": "", "g": 'depends = ["ort"]\nprovenance = { ORT_HOME = "ort" }'})
    assert dict(cfg.components["g"].provenance) == {"ORT_HOME": "ort"}
    with pytest.raises(ConfigError, match=r"components\.g\.provenance\.ORT_HOME: 'cpuinfo' is not one of this "
                                          r"component's depends \(ort\)"):
        write_config(tmp_path, {"ort": "", "g": 'depends = ["ort"]\nprovenance = { ORT_HOME = "cpuinfo" }'})


PROVIDED = {"ort": "", "ort-src": "", "g": 'depends = ["ort"]\nprovenance = { ORT_HOME = "ort" }\n'
                                          'providers = { riscv64 = { ort = "ort-src" } }'}


def test_a_provider_stands_in_for_a_dependency_on_its_arch_only(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, PROVIDED)
    g = cfg.components["g"]
    assert g.dependencies(Arch.RISCV64) == ("ort-src",)
    assert g.dependencies(Arch.ARM64) == ("ort",)
    assert g.provider("ort", Arch.RISCV64) == "ort-src" and g.provider("ort", Arch.AMD64) == "ort"
    assert cfg.build_order(("g",), Arch.RISCV64) == ("ort-src", "g")
    assert cfg.build_order(("g",), Arch.ARM64) == ("ort", "g")
    assert dict(g.provenance) == {"ORT_HOME": "ort"}  # the role's name: the provider's folder on riscv64


@pytest.mark.parametrize(("providers", "expected"), [
    ('{ riscv64 = { cpuinfo = "ort-src" } }',
     r"components\.g\.providers\.riscv64\.cpuinfo: 'cpuinfo' is not one of this component's depends \(ort\)"),
    ('{ riscv64 = { ort = "ort-scr" } }',
     r"components\.g\.providers\.riscv64\.ort: unknown component 'ort-scr'; did you mean 'ort-src'\?"),
    ('{ riscv65 = { ort = "ort-src" } }', r"components\.g\.providers\.riscv65: unknown arch 'riscv65'"),
], ids=["not-a-dependency", "unknown-provider", "unknown-arch"])
def test_a_provider_is_checked_on_load(tmp_path: Path, providers: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        write_config(tmp_path, {"ort": "", "ort-src": "", "g": f'depends = ["ort"]\nproviders = {providers}'})


def test_a_provider_not_built_for_its_arch_is_refused(tmp_path: Path) -> None:
    (tmp_path / "components" / "ort").mkdir(parents=True)
    text = """
[components.ort]
source = { kind = "tree", path = "components/ort" }
arches = ["amd64", "riscv64"]
[components.ort-src]
source = { kind = "tree", path = "components/ort" }
arches = ["amd64"]
[components.g]
source = { kind = "tree", path = "components/ort" }
arches = ["riscv64"]
depends = ["ort"]
providers = { riscv64 = { ort = "ort-src" } }
"""
    with pytest.raises(ConfigError, match=r"components\.g\.providers\.riscv64\.ort: 'ort-src' is not built for "
                                          r"riscv64 \(components\.ort-src\.arches\)"):
        write_config_text(tmp_path, text)


def test_a_cycle_through_a_provider_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="dependency cycle"):
        write_config(tmp_path, {"ort": "", "ort-src": 'depends = ["g"]',
                                "g": 'depends = ["ort"]\nproviders = { riscv64 = { ort = "ort-src" } }'})


def test_a_components_sysroot_packages_join_its_arches_sysroot_only_while_it_is_declared(tmp_path: Path) -> None:
    ort = 'sysroot_packages = { riscv64 = ["libre2-dev", "libabsl-dev"] }'
    with_it = write_config(tmp_path, {"ort": ort, "app": ""}).sysroot
    assert with_it.packages_for(Arch.RISCV64)[-2:] == ("libre2-dev", "libabsl-dev")
    assert "libre2-dev" not in with_it.packages_for(Arch.ARM64)
    without = write_config(tmp_path, {"app": ""}).sysroot
    assert "libre2-dev" not in without.packages_for(Arch.RISCV64)
    with pytest.raises(ConfigError, match=r"components\.ort\.sysroot_packages\.riscv64"):
        write_config(tmp_path, {"ort": 'sysroot_packages = { riscv64 = ["--option"] }'})

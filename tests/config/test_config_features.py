"""The additive component keys: options, rust, rust_options, host_tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane.errors import ConfigError
from crosslane_helpers import write_config


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

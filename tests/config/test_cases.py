"""[cases.*]: ExecuTorch's RISC-V CI matrix as data — 17 jobs, the exclusions, runs per backend's profiles."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.errors import ConfigError
from crosslane_helpers import REPO, versions_header

UPSTREAM = """
[arches.riscv64.profiles]
novector = "rv64,v=false"
rvv128 = "rv64,v=true,vlen=128,elen=64,vext_spec=v1.0"
rvv256 = "rv64,v=true,vlen=256,elen=64,vext_spec=v1.0"
rvv512 = "rv64,v=true,vlen=512,elen=64,vext_spec=v1.0"
[cases.riscv-ci]
models = ["add", "mv2", "mobilebert", "llama2", "resnet18", "yolo26"]
backends = ["xnnpack", "portable"]
quantize = [true, false]
exclude = [{ backend = "portable", quantize = true }, { model = "yolo26", quantize = true }]
profiles = { xnnpack = [{xnn}], portable = ["novector"] }
default = ["add", "mv2"]
"""


def matrix(text: str) -> config_mod.Config:
    header = versions_header().split("[arches.riscv64.profiles]")[0]
    return config_mod.parse(header + text, Path("/x/versions.toml"))


def test_upstreams_17_jobs_and_39_runs() -> None:
    cfg = matrix(UPSTREAM.replace("{xnn}", '"rvv128", "rvv256", "rvv512"'))
    cases = cfg.cases["riscv-ci"].cases()
    assert len(cases) == 17
    assert not any(c.quantize and c.backend == "portable" for c in cases)
    assert not any(c.model == "yolo26" and c.quantize for c in cases)
    assert sum(len(c.profiles) for c in cases) == 39
    assert {c.name for c in cases} >= {"add-xnnpack-q8", "add-portable", "yolo26-xnnpack", "mv2-xnnpack-q8"}


def test_beyond_upstream_xnnpack_also_on_novector_and_the_default_subset() -> None:
    cfg = matrix(UPSTREAM.replace("{xnn}", '"novector", "rvv128", "rvv256", "rvv512"'))
    grid = cfg.cases["riscv-ci"]
    assert sum(len(c.profiles) for c in grid.cases()) == 11 * 4 + 6
    default = grid.cases(grid.default)
    assert [c.name for c in default] == ["add-xnnpack-q8", "add-xnnpack", "add-portable", "mv2-xnnpack-q8",
                                         "mv2-xnnpack", "mv2-portable"]


@pytest.mark.parametrize(("change", "words"), [
    (('backends = ["xnnpack", "portable"]', 'backends = ["xnnpack", "vulkan"]'), "unknown backend 'vulkan'"),
    (('portable = ["novector"]', 'portable = ["rvv1024"]'), "unknown CPU profile(s) rvv1024"),
    (('default = ["add", "mv2"]', 'default = ["add", "bert"]'), "'bert' is not in models"),
    (('quantize = [true, false]', 'quantize = ["yes"]'), "quantize[0]: expected true or false"),
    (("{ model = \"yolo26\", quantize = true }", "{ modle = \"yolo26\" }"), "names model, backend and/or quantize"),
    (('{ backend = "portable", quantize = true }', '{ backend = 5, quantize = true }'),
     "exclude[0].backend: expected a string, got integer 5"),
    (('{ backend = "portable", quantize = true }', '{ backend = "portable", quantize = "yes" }'),
     "exclude[0].quantize: expected a boolean, got string 'yes'"),
    (("{ model = \"yolo26\", quantize = true }", "{ model = \"yolo62\", quantize = true }"),
     "exclude[1].model: 'yolo62' is not in models"),
    (('{ backend = "portable", quantize = true }', '{ backend = "vulkan" }'),
     "exclude[0].backend: 'vulkan' is not in backends"),
    (('models = ["add", "mv2"', 'models = ["../add", "mv2"'), "models[0]: model name '../add' must be"),
], ids=["backend", "profile", "default", "quantize", "exclude", "exclude-type", "exclude-bool", "exclude-model",
        "exclude-backend", "model-as-path"])
def test_bad_matrices_name_the_key(change: tuple[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        matrix(UPSTREAM.replace("{xnn}", '"rvv128"').replace(*change))
    assert words in caught.value.message and "cases.riscv-ci" in caught.value.message


def test_an_executorch_smoke_without_a_matrix_is_a_config_error() -> None:
    repo = REPO / "versions.toml"
    text = repo.read_text().replace('smoke = { kind = "executorch", cases = "riscv-ci", timeout = 120 }',
                                    'smoke = { kind = "executorch", timeout = 120 }', 1)
    with pytest.raises(ConfigError) as caught:
        config_mod.parse(text, repo)
    message = caught.value.message
    assert "components.executorch-portable.smoke" in message and "missing required key 'cases'" in message

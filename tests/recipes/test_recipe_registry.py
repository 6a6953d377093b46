"""Adding a recipe is its module plus a registry entry: shown with a tiny recipe registered from this test."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config
from crosslane.archs import Arch
from crosslane.config import Registries
from crosslane.context import Context
from crosslane.contract import Outcome, Request
from crosslane.errors import ConfigError
from crosslane.log import Log
from crosslane.preflight import doctor
from crosslane.process.runner import Runner
from crosslane.recipes import Built, built
from crosslane.registry import RECIPES, Entry
from crosslane.report import Check, Row, Verdict
from crosslane.run import pipeline
from crosslane_helpers import versions_header

SEEN: list[Path] = []  # the sources the tiny recipe was handed


def tiny(request: Request) -> Outcome[Built]:
    """Writes one file into the install folder: what a recipe minimally is. Its source is prepared by the
    pipeline (a tree source: the folder as it is), since its entry says it needs one, and handed over."""
    assert request.source is not None
    SEEN.append(request.source.path)
    name, arch = request.component, request.arch
    install = request.ctx.component_dir(arch, name) / "install"
    install.mkdir(parents=True, exist_ok=True)
    (install / "made-by-tiny.txt").write_text(f"{name} {arch}\n")
    return built(Row(component=name, arch=arch, check=Check.BUILD, verdict=Verdict.PASS, reason="tiny"),
                 before=[Row(component=name, arch=arch, check=Check.SOURCE, verdict=Verdict.PASS, reason="none")])

TINY = '''
[components.tiny]
source = { kind = "tree", path = "src" }
arches = ["riscv64"]
recipe = "tiny"
'''


def write(root: Path) -> Path:
    (root / "src").mkdir()
    path = root / "versions.toml"
    path.write_text(versions_header(riscv64_toolchain="gcc") + TINY)
    return path


def test_an_unregistered_recipe_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"components\.tiny\.recipe: unknown recipe 'tiny'"):
        config.load(write(tmp_path))


def test_a_registered_recipe_runs_through_the_pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registries = Registries(recipes=RECIPES.with_entry("tiny", Entry(f"{__name__}:tiny", needs_source=True)))
    cfg = config.load(write(tmp_path), registries=registries)
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    # The doctor probes real tools; what is under test here is the dispatch, not the host.
    monkeypatch.setattr(doctor, "gate", lambda *args, **kwargs: [])
    rows = pipeline.build_components(Context(cfg, Runner(Log())), Arch.RISCV64, ["tiny"])
    assert [(r.check, r.reason) for r in rows] == [(Check.SOURCE, "none"), (Check.BUILD, "tiny")]
    assert (tmp_path / "build" / "riscv64" / "tiny" / "install" / "made-by-tiny.txt").read_text() == "tiny riscv64\n"
    assert SEEN[-1] == (tmp_path / "src").resolve()  # the pipeline prepared the source and handed it over

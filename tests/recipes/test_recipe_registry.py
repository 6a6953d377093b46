"""Adding a recipe is its module plus a registry entry: shown with a tiny recipe registered from this test."""

from __future__ import annotations

from pathlib import Path

import pytest

from crosslane import config, pipeline
from crosslane.archs import Arch
from crosslane.config import Component, Registries
from crosslane.context import Context
from crosslane.errors import ConfigError
from crosslane.features.probes import Probes
from crosslane.log import Log
from crosslane.preflight import doctor
from crosslane.process.runner import Runner
from crosslane.recipes import Built
from crosslane.registry import RECIPES
from crosslane.report import Check, Row, Verdict
from crosslane.sources.worktree import Prepared
from crosslane_helpers import versions_header


class TinyRecipe:
    """Writes one file into the install folder: what a recipe minimally is. Its source is prepared by the
    pipeline (a tree source: the folder as it is), and handed over."""

    needs_source = True

    def __init__(self) -> None:
        self.seen: list[Path] = []

    def run(self, ctx: Context, component: Component, arch: Arch, probes: Probes, source: Prepared | None, *,
            force: bool) -> Built:
        assert source is not None
        self.seen.append(source.path)
        install = ctx.component_dir(arch, component.name) / "install"
        install.mkdir(parents=True, exist_ok=True)
        (install / "made-by-tiny.txt").write_text(f"{component.name} {arch}\n")
        return Built(build=Row(component=component.name, arch=arch, check=Check.BUILD, verdict=Verdict.PASS,
                               reason="tiny"),
                     before=(Row(component=component.name, arch=arch, check=Check.SOURCE, verdict=Verdict.PASS,
                                 reason="none"),))


RECIPE = TinyRecipe()

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
    registries = Registries(recipes=RECIPES.with_entry("tiny", f"{__name__}:RECIPE"))
    cfg = config.load(write(tmp_path), registries=registries)
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    # The doctor probes real tools; what is under test here is the dispatch, not the host.
    monkeypatch.setattr(doctor, "gate", lambda *args, **kwargs: [])
    rows = pipeline.build_components(Context(cfg, Runner(Log())), Arch.RISCV64, ["tiny"])
    assert [(r.check, r.reason) for r in rows] == [(Check.SOURCE, "none"), (Check.BUILD, "tiny")]
    assert (tmp_path / "build" / "riscv64" / "tiny" / "install" / "made-by-tiny.txt").read_text() == "tiny riscv64\n"
    assert RECIPE.seen[-1] == (tmp_path / "src").resolve()  # the pipeline prepared the source and handed it over

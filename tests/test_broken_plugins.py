"""Installed plug-ins that misbehave, each case a real `invoke` process with a package installed as pip installs one
(a dist-info whose entry_points.txt names a module beside it, on the path): a plug-in versions.toml does not name is
never imported, so it cannot silence or hang a command; one it names that breaks on import or when run is one line
naming its package (exit 3), never a traceback or an exit of the plug-in's choosing; a smoke that gives no verdict
is a FAIL."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.errors import MissingPrerequisite
from crosslane.preflight import doctor
from crosslane.registry import Entry, Option
from crosslane.run import pipeline
from crosslane_helpers import COMPONENT, quiet_context, versions_header, write_config
from hostilekit import Sandbox

pytestmark = [pytest.mark.spawns]

# Each written against the documented contract (README: run(request) -> Outcome), and broken in one way.
PLUGIN = '''
import sys

from crosslane import contract
from crosslane.registry import Entry
from crosslane.report import Check, Row, Verdict

NUMBER = 5
ELSEWHERE = Entry("brokenplug_nowhere:run")


def text(request):
    return "PASS"


def listed(request):
    return [Row(component=request.component, arch=request.arch, check=Check.SMOKE, verdict=Verdict.PASS, reason="")]


def raises(request):
    raise RuntimeError("boom")


def exits(request):
    sys.exit(0)


def nothing(request):
    return contract.rows([])


def passes(request):
    return contract.rows([Row(component=request.component, arch=request.arch, check=Check.SMOKE,
                              verdict=Verdict.PASS, reason=f"plugged: {request.spec.name}")])
'''
RUNS = {"not-callable": "brokenplug:NUMBER", "elsewhere": "brokenplug:ELSEWHERE", "returns-text": "brokenplug:text",
        "returns-rows": "brokenplug:listed", "raises": "brokenplug:raises", "exits": "brokenplug:exits",
        "no-verdict": "brokenplug:nothing", "passes": "brokenplug:passes"}
# importplug: modules whose import ends the process with 0, never returns, declares an option of no known type.
IMPORTS = {"importplug_exits": "raise SystemExit(0)\n",
           "importplug_hangs": "import threading\nthreading.Event().wait()\n",
           "importplug_option": "from crosslane.registry import Entry, Option\n"
                                "ENTRY = Entry('importplug_option:run', options={'level': Option('integer')})\n"}
IMPORT_KINDS = {"exits-on-import": "importplug_exits:ENTRY", "hangs-on-import": "importplug_hangs:ENTRY",
                "unknown-option-type": "importplug_option:ENTRY"}


def install(site: Path, package: str, group: str, kinds: dict[str, str], modules: dict[str, str]) -> Path:
    """*package* 0.1 installed into *site* as pip installs one: its modules, and a dist-info declaring *kinds* under
    the entry-point *group*."""
    info = site / f"{package}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in kinds.items()))
    for module, text in modules.items():
        (site / f"{module}.py").write_text(text)
    return site


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    site = install(tmp_path / "site", "brokenplug", "crosslane.smokes", RUNS, {"brokenplug": PLUGIN})
    return Sandbox(tmp_path, env={"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])})


def config(box: Sandbox, smoke: str = "canary") -> Path:
    """A versions.toml whose one component, app, is smoked by *smoke*; app's install folder exists (built)."""
    (box.inputs / "components" / "app").mkdir(parents=True, exist_ok=True)
    path = box.inputs / "versions.toml"
    path.write_text(versions_header() + COMPONENT.format(name="app", extra=f'smoke = {{ kind = "{smoke}" }}'))
    (box.build / "riscv64" / "app" / "install").mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.hostile("plug-ins")
@pytest.mark.parametrize("kind", ["exits-on-import", "hangs-on-import"])
def test_a_plug_in_versions_toml_does_not_name_is_never_imported(box: Sandbox, kind: str) -> None:
    """One that exits 0 on import, one whose import never returns: installed, not named, harmless. (A hang in an
    import cannot be interrupted in-process; not importing what no file names keeps it from every command.)"""
    install(box.root / "site", "importplug", "crosslane.smokes", {kind: IMPORT_KINDS[kind]}, IMPORTS)
    done = box.invoke("matrix", "--config", str(config(box)), timeout=30)
    assert done.rc == 0, done.out
    assert "build=" in done.out and "Traceback" not in done.out


@pytest.mark.hostile("plug-ins")
@pytest.mark.parametrize(("kind", "words"), [
    ("exits-on-import", "entry point 'exits-on-import = importplug_exits:ENTRY' cannot be loaded (SystemExit: 0)"),
    ("unknown-option-type", "cannot be loaded (ValueError: option type 'integer' is not one crosslane reads"),
], ids=["exits", "option-type"])
def test_a_named_plug_in_that_cannot_be_loaded_is_one_line_naming_its_package(box: Sandbox, kind: str,
                                                                              words: str) -> None:
    install(box.root / "site", "importplug", "crosslane.smokes", IMPORT_KINDS, IMPORTS)
    done = box.refused(3, words, "matrix", "--config", str(config(box, kind)))
    assert done.errors[0].startswith("crosslane: error: importplug: its crosslane.smokes entry point"), done.out
    assert "repair or uninstall importplug" in done.errors[0]


@pytest.mark.hostile("plug-ins")
@pytest.mark.parametrize(("kind", "words"), [
    ("not-callable", "'not-callable = brokenplug:NUMBER' is an object of type int, not a smoke kind's "
                     "run(request) -> Outcome"),
    ("elsewhere", "names brokenplug_nowhere:run, which cannot be imported (ModuleNotFoundError: No module named "
                  "'brokenplug_nowhere')"),
    ("returns-text", "returned an object of type str, not a crosslane.contract.Outcome (rows, payload: None)"),
    ("returns-rows", "returned an object of type list, not a crosslane.contract.Outcome (rows, payload: None)"),
    ("raises", "'raises = brokenplug:raises' raised when run (RuntimeError: boom)"),
    ("exits", "'exits = brokenplug:exits' raised when run (SystemExit: 0)"),
], ids=["not-callable", "elsewhere", "returns-text", "returns-rows", "raises", "exits"])
def test_a_smoke_plug_in_that_breaks_when_run_is_one_line_naming_its_package(box: Sandbox, kind: str,
                                                                             words: str) -> None:
    done = box.refused(3, words, "smoke", "--arch", "riscv64", "--component", "app", "--config",
                       str(config(box, kind)))
    assert "brokenplug: its crosslane.smokes entry point" in done.errors[0], done.out


@pytest.mark.hostile("plug-ins")
def test_an_installed_smoke_plug_in_written_to_the_contract_passes(box: Sandbox) -> None:
    """Found through the real entry-point machinery, called by the smoke stage exactly as the built-in kinds are."""
    done = box.invoke("smoke", "--arch", "riscv64", "--component", "app", "--config", str(config(box, "passes")))
    assert done.rc == 0, done.out
    assert any(line.startswith("app ") and " PASS " in line and "plugged: app" in line
               for line in done.out.splitlines()), done.out


@pytest.mark.hostile("smokes without a verdict")
def test_a_smoke_that_returns_no_row_fails(box: Sandbox) -> None:
    done = box.invoke("smoke", "--arch", "riscv64", "--component", "app", "--config", str(config(box, "no-verdict")))
    assert done.rc == 1, done.out
    assert "Traceback" not in done.out
    failed = [line for line in done.out.splitlines() if line.startswith("app ") and " FAIL " in line]
    assert len(failed) == 1 and "smoke kind 'no-verdict' produced no verdict" in failed[0], done.out


@pytest.mark.hostile("smokes without a verdict")
def test_an_option_type_no_reader_knows_is_refused_when_the_entry_is_made() -> None:
    with pytest.raises(ValueError, match="option type 'integer' is not one crosslane reads"):
        Entry("x.smoke:run", options={"level": Option("integer")})


RECIPE_PLUGIN = """
from crosslane import contract


def wrong(request):
    return "built"


def raises(request):
    raise KeyError("CC")


def no_built(request):
    return contract.rows([])
"""


@pytest.mark.hostile("plug-ins")
@pytest.mark.parametrize(("name", "words"), [
    ("wrong", "'wrong = brokenplug_recipe:wrong' returned an object of type str, not a crosslane.contract.Outcome "
              "(rows, payload: Built)"),
    ("no-built", "'no-built = brokenplug_recipe:no_built' returned a payload of type NoneType, not Built"),
    ("raises", "'raises = brokenplug_recipe:raises' raised when run (KeyError: 'CC')"),
], ids=["returns-text", "no-built", "raises"])
def test_a_recipe_plug_in_that_breaks_when_run_is_one_line_naming_its_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, words: str) -> None:
    """A recipe found through the real import machinery (the dist-info on sys.path), run by the pipeline: what it
    raises or returns that is not an Outcome with a Built is the exit-3 line, not an AttributeError deep in the
    pipeline."""
    site = install(tmp_path / "site", "brokenplug", "crosslane.recipes",
                   {"raises": "brokenplug_recipe:raises", "wrong": "brokenplug_recipe:wrong",
                    "no-built": "brokenplug_recipe:no_built"},
                   {"brokenplug_recipe": RECIPE_PLUGIN})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    # The doctor probes the host's real tools; what is under test is what the pipeline makes of the recipe's run.
    monkeypatch.setattr(doctor, "gate", lambda *args, **kwargs: [])
    cfg = write_config(tmp_path, {"app": f'recipe = "{name}"'})
    with pytest.raises(MissingPrerequisite) as caught:
        pipeline.build_components(quiet_context(cfg), Arch.RISCV64, ["app"])
    assert caught.value.one_line().startswith("brokenplug: its crosslane.recipes entry point"), caught.value
    assert words in caught.value.one_line()

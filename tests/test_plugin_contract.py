"""One plug-in contract: what a kind reads is declared by its entry (registry.Entry / Option), so a plug-in kind gets
exactly what the built-in ones get, and nothing outside a kind's own module tests a kind's name."""

from __future__ import annotations

import ast
import inspect
import re
import typing
from pathlib import Path

import pytest

from crosslane import config, contract
from crosslane.archs import Arch
from crosslane.config.component_model import SmokeSpec, SuiteSpec
from crosslane.config.model import Registries
from crosslane.contract import Kind, Outcome, Request
from crosslane.errors import ConfigError, MissingPrerequisite
from crosslane.recipes import Built
from crosslane.registry import RECIPES, SMOKES, SUITES, Entry, Option, Registry
from crosslane.report import Check, Row, Verdict
from crosslane.run import pipeline
from crosslane.suites import SuiteCases, outcome, stage
from crosslane.suites.junit import Case
from crosslane.suites.junit import Outcome as CaseOutcome
from crosslane_helpers import COMPONENT, quiet_context, versions_header

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scripts" / "crosslane"
TEXT = (REPO / "versions.toml").read_text()
CANARY_SMOKE = 'smoke = { kind = "canary", timeout = 60 }'
# A kind's own module may read its own option names; these are the only places a kind's name is spelled.
KIND_HOMES = {"registry.py", "config/keys.py"}


def plugged(options: dict[str, Option], evidence: tuple[str, ...] = ()) -> Registries:
    entry = Entry("plugin.smoke:run", options=options, evidence=evidence)
    return Registries(smokes=SMOKES.with_entry("plugged", entry))


def with_smoke(smoke: str) -> str:
    assert CANARY_SMOKE in TEXT
    return TEXT.replace(CANARY_SMOKE, smoke, 1)


def canary_smoke(text: str, registries: Registries) -> SmokeSpec:
    smoke = config.parse(text, REPO / "versions.toml", registries=registries).components["canary"].smoke
    assert smoke is not None
    return smoke


def test_a_plug_in_option_naming_a_model_is_checked_and_followed_like_genai_s() -> None:
    registries = plugged({"weights": Option("string", refers="models")})
    smoke = canary_smoke(with_smoke('smoke = { kind = "plugged", weights = "smollm2" }'), registries)
    assert smoke.referred("models") == "smollm2" and smoke.text("weights") == "smollm2"
    with pytest.raises(ConfigError, match=r"components\.canary\.smoke\.weights: unknown model 'nope' \(known: "):
        canary_smoke(with_smoke('smoke = { kind = "plugged", weights = "nope" }'), registries)


def test_a_plug_in_guidance_option_is_read_as_genai_s_constrained_is() -> None:
    from crosslane.config import Constrained

    registries = plugged({"guide": Option("guidance")})
    smoke = canary_smoke(with_smoke('smoke = { kind = "plugged", guide = { kind = "regex", data = "[a-z]+", '
                                    'prompt = "p" } }'), registries)
    assert smoke.options["guide"] == Constrained(kind="regex", data="[a-z]+", prompt="p")


def test_a_plug_in_states_its_evidence_and_its_patterns_as_the_command_kind_does() -> None:
    registries = plugged({"line": Option("string", nonempty="an empty line proves nothing"),
                          "match": Option("regex", placeholders=("where",), evidence=True)},
                         evidence=("line", "match"))
    with pytest.raises(ConfigError, match='a plugged smoke names its evidence: line = "…" or match = "…"'):
        canary_smoke(with_smoke('smoke = { kind = "plugged" }'), registries)
    with pytest.raises(ConfigError, match=r"smoke\.line: an empty line proves nothing"):
        canary_smoke(with_smoke('smoke = { kind = "plugged", line = "" }'), registries)
    with pytest.raises(ConfigError, match=r"smoke.match: /\.\*/ matches an empty output"):
        canary_smoke(with_smoke('smoke = { kind = "plugged", match = ".*" }'), registries)
    smoke = canary_smoke(with_smoke('smoke = { kind = "plugged", match = "ran in {where}" }'), registries)
    assert smoke.options == {"match": "ran in {where}"}


def suite_plugged(options: dict[str, Option]) -> Registries:
    return Registries(suites=SUITES.with_entry("plugged", Entry("plugin.suite:run", options=options)))


SUITE_OPTIONS = {"shards": Option("number", doc="how many shards"),
                 "groups": Option("strings", nonempty="a plugged suite names its groups"),
                 "select": Option("regex", placeholders=("arch",), evidence=True),
                 "mode": Option("string", required=True, choices=("fast", "full"))}


def app_suite(tmp_path: Path, tests: str, registries: Registries) -> SuiteSpec:
    (tmp_path / "components" / "app").mkdir(parents=True, exist_ok=True)
    text = versions_header() + COMPONENT.format(name="app", extra=f"tests = {{ {tests} }}")
    spec = config.parse(text, tmp_path / "versions.toml", registries=registries).components["app"].tests
    assert spec is not None
    return spec


def test_a_plug_in_suite_kind_s_own_options_are_read_as_its_entry_declares(tmp_path: Path) -> None:
    registries = suite_plugged(SUITE_OPTIONS)
    spec = app_suite(tmp_path, 'kind = "plugged", mode = "fast", shards = 4, groups = ["a", "b"], '
                                'select = "on {arch}"', registries)
    assert (spec.kind, dict(spec.options)) == ("plugged", {"mode": "fast", "shards": 4, "groups": ("a", "b"),
                                                           "select": "on {arch}"})
    # What a built-in kind reads is its own fields: a plug-in's options are not among them.
    assert app_suite(tmp_path, 'kind = "ctest", label = "unit"', registries).options == {}


@pytest.mark.parametrize(("tests", "words"), [
    ('kind = "plugged"', "components.app.tests: missing required key 'mode'"),
    ('kind = "plugged", mode = "slow"', "tests.mode: 'slow' is not one of fast, full"),
    ('kind = "plugged", mode = "fast", shards = "x"', "tests.shards: expected a number, got string 'x'"),
    ('kind = "plugged", mode = "fast", groups = []', "tests.groups: a plugged suite names its groups"),
    ('kind = "plugged", mode = "fast", select = ".*"', "tests.select: /.*/ matches an empty output"),
    ('kind = "plugged", mode = "fast", shard = 2', "tests.shard: unknown key; did you mean 'shards'?"),
], ids=["required", "choices", "type", "nonempty", "evidence", "suggestion"])
def test_a_plug_in_suite_kind_s_options_are_checked_as_a_built_in_s(tmp_path: Path, tests: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        app_suite(tmp_path, tests, suite_plugged(SUITE_OPTIONS))


@pytest.mark.parametrize(("tests", "words"), [
    ('kind = "ctest", shards = 2', "tests.shards: 'shards' is read by kind = \"plugged\" only"),
    ('kind = "pytest", paths = ["t.py"], mode = "fast"', "tests.mode: 'mode' is read by kind = \"plugged\" only"),
    ('kind = "plugged", mode = "fast", paths = ["t.py"]', "tests.paths: 'paths' is read by kind = \"pytest\" only"),
    ('kind = "plugged", mode = "fast", label = "x"', "tests.label: 'label' is read by kind = \"ctest\" only"),
], ids=["on-ctest", "on-pytest", "pytest-s-on-plugged", "ctest-s-on-plugged"])
def test_a_suite_kind_s_options_are_refused_for_another_kind_a_plug_in_s_as_a_built_in_s(
        tmp_path: Path, tests: str, words: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(words)):
        app_suite(tmp_path, tests, suite_plugged(SUITE_OPTIONS))


def test_a_plug_in_suite_kind_may_read_a_built_in_kind_s_option_too(tmp_path: Path) -> None:
    registries = suite_plugged({"args": Option("strings")})
    assert app_suite(tmp_path, 'kind = "plugged", args = ["-v"]', registries).args == ("-v",)
    with pytest.raises(ConfigError, match=re.escape("'args' is read by kind = \"pytest\" or kind = \"plugged\" "
                                                    "only")):
        app_suite(tmp_path, 'kind = "ctest", args = ["-v"]', registries)


def test_a_built_in_suite_kind_s_options_are_of_the_type_its_fields_read() -> None:
    """ctest's and pytest's options are SuiteSpec fields (read and described there): their declared types agree."""
    from crosslane.config.component_model import suite_section
    from crosslane.config.keys import option_key

    section = suite_section(Registries())
    for kind, entry in SUITES.entries.items():
        assert entry.options, kind
        for name, option in entry.options.items():
            assert option_key(kind, option).type == section.keys[name].type, (kind, name)
            assert section.keys[name].doc == f"{kind}: {option.doc}", (kind, name)


def test_a_plug_in_suite_kind_s_options_are_in_its_schema() -> None:
    from crosslane.config import jsonschema
    from crosslane.config.document import declaration

    component = declaration(SMOKES, suites=suite_plugged(SUITE_OPTIONS).suites).keys["components"].section
    assert component is not None and component.names is not None and component.names.section is not None
    tests = component.names.section.keys["tests"].section
    assert tests is not None
    assert jsonschema.key_schema(tests.keys["shards"]) == {"type": "number", "description": "how many shards",
                                                           "maximum": jsonschema.FINITE}
    assert jsonschema.key_schema(tests.keys["mode"])["enum"] == ["fast", "full"]
    assert "shards" not in jsonschema.render(SMOKES)


def test_a_recipe_that_builds_wheels_says_so_in_its_entry() -> None:
    cfg = config.load(REPO / "versions.toml")
    assert pipeline.makes_wheels(cfg, "onnxruntime-genai") and not pipeline.makes_wheels(cfg, "canary")
    assert [name for name, entry in RECIPES.entries.items() if entry.wheels] == ["cmake-wheel"]


def names_a_kind(node: ast.expr) -> bool:
    """`recipe` or `….recipe`, or `….kind` of something called a smoke or spec (a file entry's kind is no
    plug-in's)."""
    if isinstance(node, ast.Name):
        return node.id == "recipe"
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value
    called = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
    return node.attr == "recipe" or (node.attr == "kind" and ("smoke" in called or "spec" in called))


def strings_in(node: ast.expr) -> list[str]:
    """The string constants *node* is or holds (a tuple, list or set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [value for item in node.elts for value in strings_in(item)]
    return []


def kind_name_tests(path: Path) -> list[str]:
    """Comparisons of a recipe's or smoke kind's name with a string, or of anything with a suite kind's name (its
    options say what a kind reads: `kind == "pytest"`, `read["kind"] == "ctest"`), in one module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(names_a_kind(s) for s in sides)
        literals = [value for s in sides for value in strings_in(s)]
        literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
        if (named and literal) or set(literals) & set(SUITES.names()):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_no_module_tests_a_recipe_smoke_or_suite_kind_by_its_name() -> None:
    """A kind's behaviour is its entry's declaration; a module that compared a kind's name would treat a plug-in
    with the same needs differently (suites test their own `kind` values, source kinds are not plug-ins)."""
    own = {"smokes", "recipes", "suites", "sources", "baremetal", "shipping", "localci"}
    tested = [hit for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] not in own
              and str(path.relative_to(PACKAGE)) not in KIND_HOMES for hit in kind_name_tests(path)]
    assert tested == []


def test_the_built_in_kinds_are_typed_as_the_contract_s_kind() -> None:
    """mypy checks these assignments: each built-in is a contract.Kind of its payload, as a typed plug-in is."""
    from crosslane.recipes import cmake, cmake_wheel, provided
    from crosslane.smokes import canary, command, cpuinfo, executorch, genai, ort
    from crosslane.suites import ctest, pytest_suite

    recipes: tuple[Kind[Built], ...] = (cmake.run, cmake_wheel.run, provided.run)
    smokes: tuple[Kind[None], ...] = (command.run, canary.run, cpuinfo.run, ort.run, genai.run, executorch.run)
    suites: tuple[Kind[SuiteCases], ...] = (ctest.run, pytest_suite.run)
    assert {RECIPES.load(n) for n in RECIPES.names()} == set(recipes)
    assert {SMOKES.load(n) for n in SMOKES.names()} == set(smokes)
    assert {SUITES.load(n) for n in SUITES.names()} == set(suites)


@pytest.mark.parametrize("registry", [RECIPES, SMOKES, SUITES], ids=lambda r: r.kind)
def test_every_built_in_kind_is_the_one_call_a_plug_in_makes(registry: Registry) -> None:
    """run(request: Request) -> Outcome[...]: the shape README documents for a plug-in, for each built-in entry."""
    for name in registry.names():
        implementation = registry.load(name)
        assert callable(implementation), name
        parameters = list(inspect.signature(implementation).parameters)
        hints = typing.get_type_hints(implementation)
        assert len(parameters) == 1 and hints[parameters[0]] is Request, (name, parameters)
        assert typing.get_origin(hints["return"]) is Outcome, (name, hints["return"])


SEEN: list[Request] = []  # what the plug-ins below were called with


def plugged_smoke(request: Request) -> Outcome[None]:
    """A smoke plug-in written against the documented contract, and nothing else."""
    SEEN.append(request)
    return contract.rows([Row(component=request.component, arch=request.arch, check=Check.SMOKE,
                              verdict=Verdict.PASS, reason=f"plugged on {len(request.profiles)} profiles")])


def plugged_suite(request: Request) -> Outcome[SuiteCases]:
    SEEN.append(request)
    return outcome(cases={p.name: (Case("a.works", CaseOutcome.PASSED, 0.1, ""),) for p in request.profiles})


def no_payload_suite(request: Request) -> Outcome[None]:
    return contract.rows([])


def plugged_recipe(request: Request) -> Outcome[Built]:
    return contract.Outcome(rows=(), payload=Built(build=Row(component=request.component, arch=request.arch,
                                                             check=Check.BUILD, verdict=Verdict.PASS, reason="")))


def app_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, registries: Registries) -> config.Config:
    """A versions.toml whose one component, app, says *extra*; app's install folder exists (built)."""
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    (tmp_path / "components" / "app").mkdir(parents=True)
    (tmp_path / "build" / "riscv64" / "app" / "install").mkdir(parents=True)
    path = tmp_path / "versions.toml"
    path.write_text(versions_header() + COMPONENT.format(name="app", extra=extra))
    return config.load(path, registries=registries)


def test_a_plug_in_smoke_runs_through_the_pipeline_as_the_built_ins_do(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    registries = Registries(smokes=SMOKES.with_entry("plugged", f"{__name__}:plugged_smoke"))
    cfg = app_config(tmp_path, monkeypatch, 'smoke = { kind = "plugged" }', registries)
    SEEN.clear()
    rows = pipeline.smoke_components(quiet_context(cfg), Arch.RISCV64, ["app"])
    profiles = cfg.arches[Arch.RISCV64].profiles
    assert [(r.check, r.verdict, r.reason) for r in rows] == [
        (Check.SMOKE, Verdict.PASS, f"plugged on {len(profiles)} profiles")]
    [request] = SEEN
    assert (request.component, request.arch, request.profiles) == ("app", Arch.RISCV64, tuple(profiles))
    assert request.spec is cfg.components["app"]


def test_a_plug_in_suite_runs_through_the_suite_stage_as_ctest_does(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    registries = Registries(suites=SUITES.with_entry("plugged", f"{__name__}:plugged_suite"))
    cfg = app_config(tmp_path, monkeypatch, 'tests = { kind = "plugged", control = false }', registries)
    SEEN.clear()
    profiles = cfg.arches[Arch.RISCV64].profiles[:2]
    rows = stage.run_component(quiet_context(cfg), Arch.RISCV64, "app", profiles)
    assert [(r.check, r.profile, r.verdict) for r in rows] == [(Check.TESTS, p.name, Verdict.PASS) for p in profiles]
    assert [r.component for r in SEEN] == ["app"]


def test_an_outcome_without_its_kind_s_payload_is_refused_naming_the_kind(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    registries = Registries(suites=SUITES.with_entry("plugged", f"{__name__}:no_payload_suite"))
    cfg = app_config(tmp_path, monkeypatch, 'tests = { kind = "plugged", control = false }', registries)
    words = (f"test suite kind 'plugged' ({__name__}:no_payload_suite) returned a payload of type NoneType, not "
             "SuiteCases")
    with pytest.raises(MissingPrerequisite, match=re.escape(words)):
        stage.run_component(quiet_context(cfg), Arch.RISCV64, "app", cfg.arches[Arch.RISCV64].profiles[:1])


def test_a_recipe_made_for_a_source_kind_is_its_default_and_only_its_own(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What ties 'provided' to sysroot-package sources is its entry's declaration, so a plug-in can say it too."""
    registries = Registries(recipes=RECIPES.with_entry("plugged", Entry(f"{__name__}:plugged_recipe",
                                                                        sources=("tree",))))
    cfg = app_config(tmp_path, monkeypatch, "", registries)
    assert cfg.components["app"].recipe == "plugged"
    with pytest.raises(ConfigError, match="recipe 'cmake' and source kind 'tree' do not go together: the 'plugged' "
                                          "recipe is exactly for tree sources"):
        config.parse(versions_header() + COMPONENT.format(name="app", extra='recipe = "cmake"'),
                     tmp_path / "versions.toml", registries=registries)

"""One plug-in contract: what a kind reads is declared by its entry (registry.Entry / Option), so a plug-in kind gets
exactly what the built-in ones get, and nothing outside a kind's own module tests a kind's name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from crosslane import config, pipeline
from crosslane.config.model import Registries, SmokeSpec
from crosslane.errors import ConfigError
from crosslane.registry import RECIPES, SMOKES, Entry, Option

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


def test_a_recipe_that_builds_wheels_says_so_in_its_entry() -> None:
    cfg = config.load(REPO / "versions.toml")
    assert pipeline.makes_wheels(cfg, "onnxruntime-genai") and not pipeline.makes_wheels(cfg, "canary")
    assert [name for name, entry in RECIPES.entries.items() if entry.wheels] == ["cmake-wheel"]


def names_a_kind(node: ast.expr) -> bool:
    """`….recipe`, or `….kind` of something called a smoke or spec (a file entry's kind is no plug-in's)."""
    if not isinstance(node, ast.Attribute):
        return False
    owner = node.value
    called = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
    return node.attr == "recipe" or (node.attr == "kind" and ("smoke" in called or "spec" in called))


def kind_name_tests(path: Path) -> list[str]:
    """Comparisons of a recipe's or smoke kind's name with a string, in one module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(names_a_kind(s) for s in sides)
        literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides)
        if named and literal:
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_no_module_tests_a_recipe_or_smoke_kind_by_its_name() -> None:
    """A kind's behaviour is its entry's declaration; a module that compared a kind's name would treat a plug-in
    with the same needs differently (suites test their own `kind` values, source kinds are not plug-ins)."""
    own = {"smokes", "recipes", "suites", "sources", "baremetal", "shipping", "localci"}
    tested = [hit for path in sorted(PACKAGE.rglob("*.py")) if path.relative_to(PACKAGE).parts[0] not in own
              and str(path.relative_to(PACKAGE)) not in KIND_HOMES for hit in kind_name_tests(path)]
    assert tested == []

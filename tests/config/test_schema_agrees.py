"""The JSON Schema (config/jsonschema.py, generated from config/keys.py) and the loader agree on what versions.toml
may be: a document the schema accepts the loader loads, or refuses for a reason no JSON Schema can state (a name
that refers to another table, a folder that must exist, a nan); a document the schema refuses the loader refuses.

Documents come from the schema itself (hypothesis-jsonschema, spliced into the repository's file) and from the
repository's file with one value dropped or replaced at a random key path. Each runs through the real loader
(config.parse, what config.load calls with the file's text). Derandomized, so the default tier is repeatable;
`nox -s reliability` (CROSSLANE_FUZZ_FACTOR=20) runs twenty times as many examples.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import jsonschema as jsonschema_lib  # type: ignore[import-untyped]
import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from crosslane import config
from crosslane.archs import KNOWN_ARCHS
from crosslane.config import jsonschema, keys
from crosslane.errors import ConfigError
from crosslane.registry import SMOKES

pytestmark = [pytest.mark.hostile("versions.toml")]

ROUNDS = int(os.environ.get("CROSSLANE_FUZZ_FACTOR", "1"))
REPO = Path(__file__).resolve().parents[2]
FILE = REPO / "versions.toml"
DATA = tomllib.loads(FILE.read_text(encoding="utf-8"))
SCHEMA = jsonschema.schema(SMOKES)
BUDGET = settings(deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])

# The loader's refusals no JSON Schema can state, each with the reason: what the schema accepts and the loader
# refuses must be one of these.
INEXPRESSIBLE = {
    # a name that must be declared elsewhere in the file, or a list that must agree with another
    r"unknown (toolchain|tool root|profile|CPU profile|component|dependency|model|case matrix|host venv)": "reference",
    r"has no \[arches\.": "reference",
    r"is not one of this component's depends|is not built for|no model of \[cases|"
    r"is not a component with a (source of its own|pinned git source)|a CPython of pythons|only for a library the "
    r"wheel bundles|substitutes only a submodule listed": "reference",
    r"dependency cycle": "the dependency graph",
    r"is not a folder|escapes|an empty path would mean": "the file system",
    r"is not a finite number": "nan: JSON has none, and it compares with nothing",
    r"beyond TOML's 64-bit range": "2**64 and 1.8e19 are the same number to JSON Schema",
    r"matches an empty output|with its placeholders filled": "what a regular expression matches",
    r"not a regular expression": "a constrained smoke's data is a regex when its kind says so",
    r"source_of and source exclude|do not go together|is read by the cmake-wheel recipe only|crates are pinned in "
    r"the tool root|needs rust = true|a tool root's compilers|a tool root serves|is read by kind": "two keys together",
    r"enables the vector unit without vlen|is not a power of two|is not an rv(32|64)": "inside a -cpu string",
    r"is listed twice|is named twice": "unique items",
    r"unknown argument group": "reference",
}
# Rules JSON Schema could state that keys.py does not declare yet (the field readers' patterns in fields.py and
# components.py, a component's source or source_of): each a deletion candidate once its key declares it.
KNOWN_GAPS = {
    r"is not a URL \(|is not an http\(s\) or file: URL": "fields.url: a scheme (any case) and a host",
    r"missing required key 'source'; add source =": "a component's source or source_of",
    r"must be 1–64 letters": "fields.path_name: NAME, and no '..' (a not of a pattern)",
    r"is not symbol@VERSION|is not a crate as Cargo.lock|is not a git tag name|is not a Debian architecture|"
    r"a FetchContent name is|a link is a plain name|a feature name and the C symbol": "a pattern of components.py",
    r"is not a test file inside|is not a relative path inside|must stay inside the source tree|must be a relative "
    r"path inside the wheel": "a relative path: no leading /, no '..' (a not of a pattern)",
    r"an exemption (is a test id|states why)|no qemu CPU profile|no build;|expected \"arch:distribution\"":
        "a reason's length, a table not empty (minProperties), a name's pattern",
}
INEXPRESSIBLE_RE = re.compile("|".join(f"(?:{pattern})" for pattern in [*INEXPRESSIBLE, *KNOWN_GAPS]))


def _ecma_pattern(validator: object, pattern: str, instance: object, schema: object) -> Iterator[object]:
    """JSON Schema's patterns are ECMA-262 regular expressions, whose $ is the end of the string (Python's \\Z:
    re.search's $ also matches before a final newline)."""
    if isinstance(instance, str) and not re.search(re.sub(r"(?<!\\)\$$", r"\\Z", pattern), instance):
        yield jsonschema_lib.ValidationError(f"{instance!r} does not match {pattern!r}")


CHECKER = jsonschema_lib.validators.extend(jsonschema_lib.Draft7Validator, {"pattern": _ecma_pattern})(
    SCHEMA, format_checker=jsonschema_lib.FormatChecker(formats=["regex"]))


def toml_value(value: object) -> str:
    """*value* as a TOML inline value (tables inline, strings basic with every control character escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's (ensure_ascii would write a surrogate pair, which TOML refuses), but for DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    assert isinstance(value, dict), value
    return "{" + ", ".join(f"{toml_value(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_text(data: Mapping[str, object]) -> str:
    return "".join(f"{toml_value(key)} = {toml_value(value)}\n" for key, value in data.items())


def loader_refusal(data: Mapping[str, object]) -> str | None:
    try:
        config.parse(toml_text(data), FILE)
    except ConfigError as exc:
        return exc.message
    return None


def check_agreement(data: Mapping[str, object]) -> None:
    refusal = loader_refusal(data)
    errors = [error.message for error in CHECKER.iter_errors(data)]
    if refusal is not None and not errors:
        assert INEXPRESSIBLE_RE.search(refusal), f"the schema accepts what the loader refuses: {refusal}"
    if refusal is None:
        assert not errors, f"the schema refuses what the loader loads: {errors[:3]}"


def representable(value: object) -> bool:
    """TOML holds no lone surrogate (the text is UTF-8)."""
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return all(representable(item) for item in value)
    if isinstance(value, dict):
        return all(representable(k) and representable(v) for k, v in value.items())
    return True


def test_the_repository_file_round_trips_and_both_accept_it() -> None:
    assert tomllib.loads(toml_text(DATA)) == DATA
    assert loader_refusal(DATA) is None
    assert not list(CHECKER.iter_errors(DATA))


# (a) from the schema: a table generated from its own part of the schema, in the repository's file.
CANARY = DATA["components"]["canary"]
COMPONENT = SCHEMA["properties"]["components"]["additionalProperties"]["else"]  # type: ignore[index]
SPLICED = {"smoke": 8, "source": 4}


@pytest.mark.parametrize("key", list(SPLICED))
def test_a_table_the_schema_generates_is_loaded_or_refused_by_both(key: str) -> None:
    @settings(BUDGET, max_examples=SPLICED[key] * ROUNDS)
    @given(from_schema(COMPONENT["properties"][key]).filter(representable))
    def check(value: object) -> None:
        data = copy.deepcopy(DATA)
        data["components"]["canary"][key] = value
        check_agreement(data)

    check()


# (b) the repository's file, mutated: a value dropped or replaced at a random key path.
def key_paths(value: object, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    children: list[tuple[str | int, object]] = list(value.items()) if isinstance(value, dict) else \
        list(enumerate(value)) if isinstance(value, list) else []
    for key, child in children:
        yield (*path, key)
        yield from key_paths(child, (*path, key))


def strings_of(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield key
            yield from strings_of(child)
    elif isinstance(value, list):
        for child in value:
            yield from strings_of(child)


PATHS = list(key_paths(DATA))
NEAR = sorted({*strings_of(DATA), *KNOWN_ARCHS, *keys.SIGNALS, "", "(", "RISCV64", "SIGFOO", "1BAD", "a\0b",
               "0" * 40, "A" * 40, "3.31", "3.31.6\n", "../x", "x y", "-o", "a..b"})
SCALARS = st.one_of(st.sampled_from(NEAR), st.text(max_size=8).filter(representable), st.booleans(),
                    st.integers(-(2 ** 65), 2 ** 65), st.floats(), st.sampled_from([0, 1, -1, 0.5, 86400, 86401]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(NEAR) | st.text(max_size=6).filter(representable), inner, max_size=3), max_leaves=6)


@settings(BUDGET, max_examples=30 * ROUNDS)
@given(st.sampled_from(PATHS), st.booleans(), VALUES)
def test_the_repository_file_with_one_value_changed_is_loaded_or_refused_by_both(
        path: tuple[str | int, ...], drop: bool, value: object) -> None:
    data = copy.deepcopy(DATA)
    parent: object = data
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    if drop:
        del parent[path[-1]]  # type: ignore[attr-defined]
    else:
        parent[path[-1]] = value  # type: ignore[index]
    check_agreement(data)


# The ten the schema used to accept, as the loader refuses them, each at a path of the repository's file.
COMMAND = {"kind": "command", "argv": ["{install}/bin/x"], "sentinel": "ok"}
CASES = {
    "expect-value": ({**COMMAND, "expect": {"novector": "SIGFOO"}}, "is not a signal a run dies of"),
    "env-name": ({**COMMAND, "env": {"1BAD": "x"}}, "not an environment variable name"),
    "empty-sentinel": ({**COMMAND, "sentinel": ""}, "an empty line is no evidence"),
    "no-evidence": ({"kind": "command", "argv": ["x"]}, "a command smoke names its evidence"),
    "empty-argv": ({**COMMAND, "argv": []}, "an empty list; name the program"),
    "pattern-does-not-compile": ({**COMMAND, "pattern": "("}, "not a regular expression"),
    "tolerance-inf": ({**COMMAND, "compare": "stdout", "tolerance": {"rel": math.inf}}, "inf is not a finite number"),
}


def with_smoke(smoke: object) -> dict[str, object]:
    data = copy.deepcopy(DATA)
    data["components"]["canary"]["smoke"] = smoke
    return data


def with_value(path: tuple[str, ...], value: object) -> dict[str, object]:
    data = copy.deepcopy(DATA)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return data


EXAMPLES = [
    *(pytest.param(with_smoke(smoke), words, id=name) for name, (smoke, words) in CASES.items()),
    pytest.param(with_value(("components", "canary", "arches"), ["RISCV64"]), "unknown arch 'RISCV64'",
                 id="arch-name"),
    pytest.param(with_value(("components", "executorch-xnnpack-novector", "arch_cmake_args"), {"RISCV64": []}),
                 "unknown arch 'RISCV64'", id="arch-name-in-a-variant"),
    pytest.param(with_value(("cases", "riscv-ci", "models"), []), "no models", id="case-matrix-of-no-models"),
    pytest.param(with_value(("components", "canary", "source", "path"), "components/can\0ary"),
                 "a string with a NUL character", id="nul-in-a-string"),
]


@pytest.mark.parametrize(("data", "words"), EXAMPLES)
def test_what_the_loader_refuses_the_schema_refuses(data: dict[str, object], words: str) -> None:
    refusal = loader_refusal(data)
    assert refusal is not None and words in refusal
    assert list(CHECKER.iter_errors(data)), refusal


def test_nan_is_refused_by_the_loader_and_by_no_json_schema() -> None:
    """JSON has no nan, and a checker's comparisons with it are all false: the one of the ten no schema refuses."""
    data = with_smoke({**COMMAND, "compare": "stdout", "tolerance": {"rel": math.nan}})
    assert "nan is not a finite number" in (loader_refusal(data) or "")
    assert not list(CHECKER.iter_errors(data))

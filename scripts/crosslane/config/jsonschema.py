"""versions.toml's JSON Schema (draft-07, what taplo and Even Better TOML read), generated from its declaration
(keys.py); committed beside it and checked current by `invoke consistency`, rewritten by `invoke schema --write`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from crosslane.config.document import declaration
from crosslane.config.keys import NO_NUL, REQUIRED, Key, Section
from crosslane.files import atomic
from crosslane.registry import SMOKES, Registry

SCHEMA_PATH = "scripts/crosslane/config/versions.schema.json"  # in the repository (versions.toml's #:schema line)
SCHEMA_ID = "https://crosslane.invalid/versions.schema.json"  # an id, not a download: editors read the file
_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "array": "array",
          "table": "object"}
# The reader takes finite numbers only (Table.number). JSON has no inf or nan to refuse, but a checker comparing the
# TOML's inf (taplo, check-jsonschema) refuses it above the largest finite number; nan compares with nothing, so no
# JSON Schema refuses it.
FINITE = sys.float_info.max
# What tomllib reads but no key can hold, refused anywhere in the file (load._check_scalars): a NUL in a string or a
# key. (Its other refusal, an integer beyond 64 bits, JSON Schema cannot tell from a float such as 1e300.)
_TEXT = {"anyOf": [
    {"type": "string", "pattern": NO_NUL},
    {"type": ["number", "boolean"]},
    {"type": "array", "items": {"$ref": "#/definitions/text"}},
    {"type": "object", "propertyNames": {"pattern": NO_NUL}, "additionalProperties": {"$ref": "#/definitions/text"}},
]}


def section_schema(section: Section) -> dict[str, object]:
    out: dict[str, object] = {"type": "object"}
    if section.doc:
        out["description"] = section.doc
    if section.keys:
        out["properties"] = {name: key_schema(key) for name, key in section.keys.items()}
        required = [name for name, key in section.keys.items() if key.required]
        if required:
            out["required"] = required
    if section.names is not None:
        out["additionalProperties"] = key_schema(section.names)
        if section.name_choices:
            out["propertyNames"] = {"enum": list(section.name_choices)}
        elif section.name_pattern:
            out["propertyNames"] = {"pattern": section.name_pattern}
    else:
        out["additionalProperties"] = False
    if section.variants:
        out["allOf"] = [_variant(kind, allowed, section.variant_required.get(kind, ()),
                                 section.variant_any.get(kind, ((), ""))[0])
                        for kind, allowed in section.variants.items()]
    if "extends" in section.keys:
        # A table that extends another states only what differs: what it must have comes from the other.
        return {"if": {"type": "object", "required": ["extends"]}, "then": _relaxed(out), "else": out}
    return out


def _relaxed(schema: object) -> object:
    """*schema* without a required key anywhere below it (nor a kind-specific one)."""
    if isinstance(schema, list):
        return [_relaxed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {k: v if k in ("if", "default", "enum", "propertyNames") else _relaxed(v)
            for k, v in schema.items() if k != "required" and not (k == "anyOf" and _requires_only(v))}


def _requires_only(schemas: object) -> bool:
    """An anyOf of required keys (a variant's "one of these"): what an extending table need not state."""
    return isinstance(schemas, list) and all(isinstance(s, dict) and set(s) == {"required"} for s in schemas)


def _variant(kind: str, allowed: tuple[str, ...], required: tuple[str, ...],
             one_of: tuple[str, ...]) -> dict[str, object]:
    then: dict[str, object] = {"propertyNames": {"enum": list(allowed)}}
    if required:
        then["required"] = list(required)
    if one_of:
        then["anyOf"] = [{"required": [name]} for name in one_of]
    return {"if": {"properties": {"kind": {"const": kind}}, "required": ["kind"]}, "then": then}


def key_schema(key: Key) -> dict[str, object]:
    if not key.also:
        return _form(key)
    out: dict[str, object] = {"anyOf": [_form(key), *(_form(other) for other in key.also)]}
    if key.doc:
        out["description"] = key.doc
    return out


def _form(key: Key) -> dict[str, object]:
    out: dict[str, object] = {"type": _TYPES[key.type]}
    if key.doc:
        out["description"] = key.doc
    if key.default is not None and key.default is not REQUIRED:
        out["default"] = list(key.default) if isinstance(key.default, tuple) else key.default
    if key.choices:
        out["enum"] = list(key.choices)
    if key.pattern:
        out["pattern"] = key.pattern
    if key.format:
        out["format"] = key.format  # checked by a checker that asserts formats (check-jsonschema does)
    if key.empty:
        out["minLength" if key.type == "string" else "minItems"] = 1
    if key.minimum is not None:
        out["exclusiveMinimum" if key.above else "minimum"] = key.minimum
    if key.maximum is not None:
        out["maximum"] = key.maximum
    elif key.type == "number":
        out["maximum"] = FINITE
    if key.type == "array":
        out["items"] = key_schema(key.items) if key.items is not None else {}
    if key.type == "table" and key.section is not None:
        out.update({k: v for k, v in section_schema(key.section).items() if k != "description" or not key.doc})
    return out


def schema(smokes: Registry) -> dict[str, object]:
    top = section_schema(declaration(smokes))
    assert "allOf" not in top and "definitions" not in top
    return {"$schema": "http://json-schema.org/draft-07/schema#", "$id": SCHEMA_ID,
            "title": "crosslane versions.toml", **top, "allOf": [{"$ref": "#/definitions/text"}],
            "definitions": {"text": _TEXT}}


def render(smokes: Registry) -> str:
    return json.dumps(schema(smokes), indent=1, ensure_ascii=False) + "\n"


def stale(root: Path, smokes: Registry = SMOKES) -> str | None:
    """Why the committed schema is not what the declaration generates with *smokes* (the smoke kinds installed:
    crosslane's and plug-ins'), None when it is."""
    path = root / SCHEMA_PATH
    try:
        committed = path.read_text(encoding="utf-8")
    except OSError as exc:
        return f"{SCHEMA_PATH}: cannot be read ({exc.strerror}); run invoke schema --write"
    if committed != render(smokes):
        return f"{SCHEMA_PATH} is not what config/keys.py declares; run invoke schema --write and commit it"
    return None


def write(root: Path, smokes: Registry = SMOKES) -> Path:
    path = root / SCHEMA_PATH
    atomic.write_text(path, render(smokes))
    return path

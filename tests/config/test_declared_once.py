"""A components.<c> or components.<c>.wheel key is declared once, as the model field it lands in: the schema, the
reader and its errors all come from that field (config/declare.py)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import pytest

from crosslane.config import jsonschema, keys
from crosslane.config.component_model import Component, WheelSpec
from crosslane.config.declare import declared, key, per_arch_keys, read_into, section_of
from crosslane.config.document import declaration
from crosslane.config.model import ArchConfig, Lane, ModelSpec, Registries, Toolchain, ToolRootSpec
from crosslane.config.reader import Table
from crosslane.errors import ConfigError
from crosslane.registry import SMOKES


def test_the_component_and_wheel_tables_are_their_dataclasses_fields() -> None:
    top = declaration(SMOKES)
    component = top.keys["components"].section
    assert component is not None and component.names is not None and component.names.section is not None
    written = list(component.names.section.keys)
    from_fields = [name for f, decl in declared(Component) for name in (decl.keys if "" not in decl.keys
                                                                        else [f.name])]
    assert written == ["extends", *from_fields]
    wheel = component.names.section.keys["wheel"].section
    assert wheel is not None and list(wheel.keys) == [f.name for f in fields(WheelSpec)]
    assert not hasattr(keys, "WHEEL") and not hasattr(keys, "component_section")


def test_the_per_arch_keys_a_variant_narrows_are_the_fields_marked_so() -> None:
    assert per_arch_keys(Component) == ("arch_cmake_args", "toolchain", "cpu_extensions")


@dataclass(frozen=True, kw_only=True)
class Scratch:
    """A table of one key, declared the way the model declares its keys."""

    summary: str = key(keys.string("one line about it", "", pattern=r"^[^\n]*$", shape="one line"))


def scratch(data: dict[str, object]) -> Scratch:
    table = Table(data, "versions.toml", "components.x", section_of(Scratch, doc="scratch"))
    found = read_into(Scratch, table, None, {})
    table.finish()
    return found


def test_one_field_is_the_key_s_schema_reader_default_and_errors() -> None:
    schema = jsonschema.section_schema(section_of(Scratch, doc="scratch"))
    assert schema["properties"] == {"summary": {"type": "string", "description": "one line about it", "default": "",
                                                "pattern": r"^[^\n]*$"}}
    assert scratch({}) == Scratch(summary="")
    assert scratch({"summary": "fine"}).summary == "fine"
    with pytest.raises(ConfigError, match=r"^versions.toml: components.x.summary: expected a string, got integer 7$"):
        scratch({"summary": 7})
    with pytest.raises(ConfigError, match=r"^versions.toml: components.x.summary: 'a\\nb' is not one line$"):
        scratch({"summary": "a\nb"})
    with pytest.raises(ConfigError,
                       match=r"^versions.toml: components.x.sumary: unknown key; did you mean 'summary'\?$"):
        scratch({"sumary": "x"})


def test_a_derived_field_without_its_reader_is_a_bug_named_at_once() -> None:
    table = Table({}, "versions.toml", "components.x", section_of(Component, Registries(), doc=""))
    with pytest.raises(AssertionError, match=r"Component\.sources is derived"):
        read_into(Component, table, None, {"name": "x"})


@pytest.mark.parametrize(("table", "model"), [("toolchains", Toolchain), ("toolroots", ToolRootSpec),
                                              ("models", ModelSpec), ("arches", ArchConfig), ("lanes", Lane)])
def test_a_named_table_s_keys_are_its_dataclass_s_declared_fields(table: str, model: type) -> None:
    """[toolchains.*], [toolroots.*], [models.*], [arches.*] and [lanes.*.*] are declared once, by their model's
    fields: the schema's keys are those fields in their order, and keys.py holds no hand-written copy."""
    entries = declaration(SMOKES).keys[table].section
    assert entries is not None and entries.names is not None
    if table == "lanes":  # component -> arch -> its lane
        assert entries.names.section is not None and entries.names.section.names is not None
        entries = entries.names.section
    assert entries.names is not None and entries.names.section is not None
    from_fields = [name or f.name for f, decl in declared(model) for name in decl.keys]
    assert list(entries.names.section.keys) == from_fields
    # every field versions.toml does not write is given by the loader (the entry's name) or filled after reading
    unread = {f.name for f in fields(model)} - {f.name for f, _ in declared(model)}
    assert unread <= {"name", "arch", "components", "component"}
    assert not any(hasattr(keys, old) for old in ("TOOLCHAIN", "TOOLROOT", "MODEL", "ARCH", "LANE"))

"""The whole of versions.toml declared: the top-level tables, each a keys.py Section or one derived from the model's
fields (declare.section_of), with the smoke kinds, recipes and suite kinds of the registries (plug-ins included).
The loader reads through it and jsonschema.py writes it out."""

from __future__ import annotations

from crosslane.archs import KNOWN_ARCHS
from crosslane.config.component_model import Component
from crosslane.config.declare import section_of
from crosslane.config.keys import (
    BAREMETAL,
    CASES,
    HOSTENV,
    NAME,
    PARITY,
    REQUIRED,
    SCHEMA_VERSION,
    STRINGS,
    Key,
    Section,
    named,
    packages,
    per_arch,
    string,
    table,
)
from crosslane.config.model import ArchConfig, Lane, ModelSpec, Registries, SysrootSpec, Toolchain, ToolRootSpec, Tools
from crosslane.registry import RECIPES, SUITES, Registry

EXTENDS = string("another component this one starts from (resolved before anything reads it)")


def component_section(kinds: Registries) -> Section:
    # `extends` is resolved on the parsed file (inherit.py) before the model is read, so no field holds it.
    return section_of(Component, kinds, doc="a component: where its source comes from, how it is built and smoked",
                      first={"extends": EXTENDS})


def declaration(smokes: Registry, recipes: Registry = RECIPES, suites: Registry = SUITES) -> Section:
    """The whole of versions.toml (schema 1)."""
    kinds = Registries(recipes=recipes, smokes=smokes, suites=suites)
    return Section({
        "schema": Key("integer", "the file's schema version (1)", REQUIRED, minimum=SCHEMA_VERSION,
                      maximum=SCHEMA_VERSION, bounds=f"a schema this crosslane reads (schema = {SCHEMA_VERSION})"),
        "tools": table("build tools from PyPI", section_of(Tools, doc=""), REQUIRED),
        "host": table("the build machine", Section({"packages": packages("host packages every lane needs")})),
        "sysroot": table("the target sysroots: a Debian suite", section_of(SysrootSpec, doc=""), REQUIRED),
        "toolchains": named("compilers by name", table("", section_of(Toolchain, doc="")), NAME),
        "toolroots": named("host tools newer than the host's: a Debian root made with mmdebstrap",
                           table("", section_of(ToolRootSpec, doc="")), NAME),
        "arches": table("the target arches", Section(names=table("", section_of(ArchConfig, doc="")),
                                                     name_choices=KNOWN_ARCHS), REQUIRED),
        "components": named("what is built", table("", component_section(kinds)), NAME),
        "args": named("named argument lists, spliced into cmake_args as \"@name\"", STRINGS),
        "pins": named("distribution -> version, for bare names in requirements", string("")),
        "hostenvs": named("host venvs a build or smoke runs", table("", HOSTENV), NAME),
        "models": named("models the smokes load", table("", section_of(ModelSpec, doc="")), NAME),
        "lanes": named("component -> arch -> its lane", per_arch("", table("", section_of(Lane, doc="")))),
        "cases": named("ExecuTorch case matrices", table("", CASES)),
        "floors": per_arch("components that must pass their smoke, per arch", Key(
            "integer", "", 0, minimum=0, bounds="a count of components, 0 or more")),
        "parity": table("ARCH-PARITY", PARITY),
        "baremetal": named("RISC-V machines without an OS", table("", BAREMETAL), NAME),
    }, doc="crosslane's versions.toml")

"""The name tables: every name versions.toml may use for an implementation, where it lives and what it declares.

This module is the only place that knows both sides. versions.toml is validated against the names and what each
entry declares (a smoke kind's own options, whether it compares with the amd64 control, the host venvs its runs
need), and a run imports only the entries it uses (`Registry.load`): config never imports the code it names (the
layers stay acyclic: tests/test_layers.py). A registry is a value, not module state: a test extends one with
`with_entry`; other packages add recipes, smoke kinds and suite kinds through entry points (the groups
`crosslane.recipes`, `crosslane.smokes`, `crosslane.suites`, as pytest and nox plugins are found), each entry's
target the one call of contract.py, a built-in's too. `discovered()`
lists their names without importing anything; a plug-in is imported only once versions.toml names its kind
(`Registry.named`), so one broken package breaks the files that use it, not every command (an import that never
returns cannot be interrupted in-process: not importing it is the only cure). What a plug-in's import or call raises,
SystemExit included, is the exit-3 line naming its package (`Registry.contained`). stdlib only: the noxfile's
session plan reads the smoke table.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from types import MappingProxyType

from crosslane.errors import CrosslaneError, MissingPrerequisite

# The option types a smoke kind may declare (config/components.py reads each): a string, a list of strings, a
# regular expression, a number, a table of strings, a tolerance table ({rel, abs}), a table of profile -> signal,
# an environment (variable name -> value), a guidance table (what a generation must match: kind, data, prompt).
OPTION_TYPES = ("string", "strings", "regex", "number", "table", "tolerance", "signals", "environment", "guidance")
# The top-level tables an option's value may name (Option.refers), with what an entry of each is called.
REFERABLE = MappingProxyType({"models": "model", "cases": "case matrix"})


def suggestion(value: str, known: list[str] | tuple[str, ...]) -> str:
    """"; did you mean 'x'?" for a near miss, else " (known: a, b)": appended to an unknown-name error."""
    hint = difflib.get_close_matches(value, list(known), n=1)
    return f"; did you mean '{hint[0]}'?" if hint else f" (known: {', '.join(known) or 'none'})"


@dataclass(frozen=True)
class Option:
    """A key a smoke kind reads from its `smoke` table, with its type, and the values it may take (empty: any)."""

    type: str
    required: bool = False
    choices: tuple[str, ...] = ()
    doc: str = ""
    # A string that names an entry of this top-level table (REFERABLE): the loader checks it is there, and what the
    # entry brings (a model's host requirements, a case matrix's exemptions) follows the component.
    refers: str = ""
    # A string or list option: why an empty one is refused (a sentinel line with no text is no evidence); "": allowed.
    nonempty: str = ""
    # A regex option: the {placeholders} the kind fills per run (compiled with them filled), and whether it is
    # evidence, so a pattern matching an empty output is refused.
    placeholders: tuple[str, ...] = ()
    evidence: bool = False

    def __post_init__(self) -> None:
        # A type no reader knows would be read as a string, silently (components.smoke_option's last case).
        if self.type not in OPTION_TYPES:
            raise ValueError(f"option type '{self.type}' is not one crosslane reads"
                             f"{suggestion(self.type, OPTION_TYPES)}")
        if self.refers and (self.type != "string" or self.refers not in REFERABLE):
            raise ValueError(f"option refers to '{self.refers}': a string option may name an entry of "
                             f"{', '.join(REFERABLE)}")


@dataclass(frozen=True)
class Entry:
    """One name: the "package.module:attribute" that implements it, and what versions.toml may say of it."""

    target: str
    # smoke and suite kinds: the keys of its own beyond those every kind has (kind, timeout, profiles…)
    options: Mapping[str, Option] = field(default_factory=dict)
    # smoke kinds: whether it compares with the amd64 control (so the control builds the component); a string
    # names the option whose presence makes it compare
    controlled: bool | str = False
    # host venvs ([hostenvs.<name>]) its runs need, made by `invoke sources` with the rest
    hostenvs: tuple[str, ...] = ()
    # smoke kinds: the options one of which each smoke must set, its evidence (an exit status alone is never a PASS)
    evidence: tuple[str, ...] = ()
    # recipes: whether it compiles (False: its build records what the sysroot ships, so a plan shows no cmake line
    # and an unpacked pack of it is recorded again on this machine)
    compiles: bool = True
    # recipes: whether its builds are Python wheels (it reads the component's [wheel] table, --build selects among
    # them, `invoke index` collects them)
    wheels: bool = False
    # recipes: whether the pipeline prepares the component's source (fetch, working copy, patches) before its run
    needs_source: bool = False
    # recipes: the source kinds it is exactly for: a component whose source is of one gets it by default, and it
    # takes no other
    sources: tuple[str, ...] = ()
    doc: str = ""

    def __post_init__(self) -> None:
        module, colon, attribute = self.target.partition(":")
        if not (module and colon and attribute):
            raise ValueError(f"Entry target '{self.target}' is not \"package.module:attribute\"")
        wrong = [key for key, option in self.options.items() if not isinstance(option, Option)]
        if wrong:
            raise ValueError(f"Entry options {', '.join(wrong)}: each is a crosslane.registry.Option")


def _no_plugins() -> Mapping[str, metadata.EntryPoint]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Registry:
    """A name table: names config may use, each to the entry that implements it."""

    kind: str  # what the names are, for messages: "recipe", "smoke kind", "option"
    entries: Mapping[str, Entry]
    # The names installed packages declare (entry points): imported by `named`, once versions.toml names them.
    plugins: Mapping[str, metadata.EntryPoint] = field(default_factory=_no_plugins)

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def unknown(self, name: str) -> str:
        return f"unknown {self.kind} '{name}'{suggestion(name, tuple(dict.fromkeys([*self.names(), *self.plugins])))}"

    def named(self, names: Iterable[str]) -> Registry:
        """This registry with the plug-ins among *names* imported: their declarations read, their names usable."""
        wanted = [name for name in dict.fromkeys(names) if name in self.plugins and name not in self.entries]
        if not wanted:
            return self
        found = {**self.entries, **{name: self._declared(name) for name in wanted}}
        return dataclasses.replace(self, entries=MappingProxyType(found))

    def _declared(self, name: str) -> Entry:
        """The Entry an entry point names, or one whose target is the entry point itself (the implementation)."""
        point = self.plugins[name]
        with self.contained(name, "cannot be loaded"):
            declared = point.load()
            return declared if isinstance(declared, Entry) else Entry(point.value)

    def load(self, name: str) -> object:
        module, _, attribute = self.entries[name].target.partition(":")
        with self.contained(name, f"names {self.entries[name].target}, which cannot be imported"):
            return getattr(importlib.import_module(module), attribute)

    def broken(self, name: str, what: str) -> MissingPrerequisite:
        """The one line for an implementation that is not what its kind must be: a plug-in's names its package."""
        point = self.plugins.get(name)
        if point is None:
            return MissingPrerequisite(f"{self.kind} '{name}' ({self.entries[name].target}) {what}",
                                       fix="report this crosslane defect")
        package = point.dist.name if point.dist is not None else "an installed package"
        group = PLUGIN_GROUPS.get(self.kind, "")
        return MissingPrerequisite(f"{package}: its {group} entry point '{point.name} = {point.value}' {what}",
                                   fix=f"repair or uninstall {package} (pip uninstall)")

    @contextmanager
    def contained(self, name: str, what: str = "failed") -> Iterator[None]:
        """Run a plug-in's code (its import, its run): what it raises, SystemExit included (a package must not end
        crosslane's run with an exit code of its choosing, 0 among them), is the exit-3 line naming the package.
        crosslane's own errors (a command the plug-in ran through the runner failed) pass as they are; so does a
        built-in's defect, a traceback with --debug."""
        if name not in self.plugins:
            yield
            return
        try:
            yield
        except CrosslaneError:
            raise
        except (Exception, SystemExit) as exc:  # an installed package's defect: whatever its code raises
            raise self.broken(name, f"{what} ({type(exc).__name__}: {exc})") from None

    def with_entry(self, name: str, target: str | Entry) -> Registry:
        entry = target if isinstance(target, Entry) else Entry(target)
        return dataclasses.replace(self, entries=MappingProxyType({**self.entries, name: entry}))

    def compares_with_control(self, kind: object, options: Mapping[str, object]) -> bool:
        """Whether a smoke of *kind* with these *options* compares with the amd64 control."""
        entry = self.entries.get(kind) if isinstance(kind, str) else None
        if entry is None:
            return False
        return entry.controlled if isinstance(entry.controlled, bool) else entry.controlled in options


def _entries(table: Mapping[str, str | Entry]) -> Mapping[str, Entry]:
    return MappingProxyType({name: value if isinstance(value, Entry) else Entry(value)
                             for name, value in table.items()})


# Every entry below names a `run(request: contract.Request) -> contract.Outcome[payload]`, a plug-in's too.

# How a component becomes an install folder (versions.toml `recipe`): the payload is a recipes.Built.
RECIPES = Registry("recipe", _entries({
    "cmake": Entry("crosslane.recipes.cmake:run", needs_source=True),
    "cmake-wheel": Entry("crosslane.recipes.cmake_wheel:run", needs_source=True, wheels=True),
    "provided": Entry("crosslane.recipes.provided:run", compiles=False, sources=("sysroot-package",)),
}))
DEFAULT_RECIPE = "cmake"  # a component's recipe when it names none and its source kind claims none

# What the command smoke fills into its argv, env and pattern per run (smokes/command.py's values()).
COMMAND_PLACEHOLDERS = ("install", "profile", "vlen", "vector", "output", "arch")
COMMAND_OPTIONS = MappingProxyType({
    "argv": Option("strings", required=True, doc="the program and its arguments; {install}, {profile}, {vlen}, "
                                                 "{vector}, {output}, {arch} are filled per run"),
    "sentinel": Option("string", doc="a line the program prints only when it checked its result",
                       nonempty="an empty line is no evidence; name the line the program prints when it passed"),
    "pattern": Option("regex", doc="a regular expression its output must match (with {vector} etc. filled)",
                      placeholders=COMMAND_PLACEHOLDERS, evidence=True),
    "compare": Option("string", choices=("stdout", "json"),
                      doc="what is compared with the amd64 control: the whole stdout, or the JSON it writes to "
                          "{output}"),
    "tolerance": Option("tolerance", doc="{ rel = …, abs = … } for the numbers compared; exact without it"),
    "expect": Option("signals", doc="profile -> the signal the run must die of there (SIGILL: V code, no V)"),
    "env": Option("environment", doc="variables the program gets"),
})

# Smokes by kind (versions.toml `smoke.kind`): no payload, the rows are the verdict.
SMOKES = Registry("smoke kind", _entries({
    "command": Entry("crosslane.smokes.command:run", options=COMMAND_OPTIONS, controlled="compare",
                     evidence=("sentinel", "pattern"),
                     doc="a declared program under qemu on every profile: its sentinel or pattern, its outputs "
                         "against the control, expected failures per profile"),
    "canary": Entry("crosslane.smokes.canary:run", controlled=True),
    "cpuinfo-isa": Entry("crosslane.smokes.cpuinfo:run"),
    "ort": Entry("crosslane.smokes.ort:run", controlled=True),
    "genai": Entry("crosslane.smokes.genai:run", controlled=True,
                   options=MappingProxyType({"model": Option("string", refers="models"),
                                             "constrained": Option("guidance", doc="constrained decoding: what the "
                                                                                   "generation must match")})),
    "executorch": Entry("crosslane.smokes.executorch:run", hostenvs=("executorch-aot",),
                        options=MappingProxyType({"cases": Option("string", required=True, refers="cases")})),
}))

# Upstream test suites by kind (versions.toml `tests.kind`): the payload is a suites.SuiteCases.
# A suite kind's options are the keys of components.<c>.tests it alone reads (another kind's are refused); those the
# model has a field for (config/model.SuiteSpec) are read and described there, a plug-in's others as smoke options.
SUITES = Registry("test suite kind", _entries({
    "ctest": Entry("crosslane.suites.ctest:run", options=MappingProxyType({
        "cmake_args": Option("strings", doc="configure options of the test build"),
        "targets": Option("strings", doc="the targets to build"),
        "regex": Option("regex", doc="the tests to run (-R)"),
        "label": Option("string", doc="the label to run (-L)"),
    })),
    "pytest": Entry("crosslane.suites.pytest_suite:run", options=MappingProxyType({
        "paths": Option("strings", doc="the test files, inside the source",
                        nonempty="a pytest suite names its test files (paths = [\"test/python/test_x.py\"])"),
        "args": Option("strings", doc="extra arguments"),
        "requirements": Option("strings", doc="what the target venv installs (bare names pinned in [pins])"),
        "packages": Option("strings", doc="Debian packages the board needs"),
        "arch_packages": Option("table", doc="per-arch Debian packages"),
    })),
}))

# Per-component feature options (components.<name>.options) and the rule (features/rules.py) that decides each.
OPTIONS = Registry("option", _entries({"xnnpack": "crosslane.features.rules:xnnpack_for"}))

# versions.toml's [models.*].converter → the program (a file of crosslane/models/) that does the conversion; it
# runs in a host venv, so it is named by file, not imported.
CONVERTERS: Mapping[str, str] = MappingProxyType({"gguf-to-genai": "gguf_to_genai.py"})
MODEL_PRECISIONS = ("fp32", "int4")

PLUGIN_GROUPS = {"recipe": "crosslane.recipes", "smoke kind": "crosslane.smokes", "test suite kind": "crosslane.suites"}


def discovered(registry: Registry) -> Registry:
    """*registry* with the names installed packages declare under its entry-point group, none imported yet
    (`Registry.named` imports those versions.toml uses): the entry point's name is the versions.toml name; its value
    names either an `Entry` (the declaration: its target, and for a smoke kind its options, controlled, hostenvs) or
    the implementation itself. A plug-in never replaces a built-in name."""
    group = PLUGIN_GROUPS.get(registry.kind)
    if group is None:
        return registry
    points: dict[str, metadata.EntryPoint] = {}
    for point in sorted(metadata.entry_points(group=group), key=lambda p: p.name):
        if point.name not in registry.entries:
            points.setdefault(point.name, point)
    return dataclasses.replace(registry, plugins=MappingProxyType(points))


def kinds_named(components: Mapping[str, object], key: str) -> list[str]:
    """The names the [components.*] tables give under *key* ("recipe", "smoke.kind", "tests.kind") as written: a
    variant's inherited kind is named in its parent's table, so the raw tables name every kind a file uses."""
    table, _, inner = key.partition(".")
    found = []
    for component in components.values():
        value = component.get(table) if isinstance(component, Mapping) else None
        if inner:
            value = value.get(inner) if isinstance(value, Mapping) else None
        if isinstance(value, str):
            found.append(value)
    return found

"""Every versions.toml key, declared once: its type, default, documentation and the table it may appear in.

The loader (reader.Table) reads through this declaration: a key it reads must be declared here with the type it
reads, its default and whether it is required come from here, and what a value alone may be (a set of values, a
pattern, not empty, a regular expression, a range) is checked here, with the refusal's words; what needs more than
the value (a profile exists, a path is a folder) stays with the code that builds the model. The JSON
Schema editors use (taplo, Even Better TOML) is generated from the same declaration (jsonschema.py), the way
scikit-build-core generates its settings schema from its settings model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from crosslane.archs import KNOWN_ARCHS
from crosslane.registry import Option, Registry

# sysroot-package: the component is a Debian package already in the target sysroot; nothing is built.
SOURCE_KINDS = ("tree", "git", "archive", "debian", "sysroot-package")
TOOLCHAIN_FAMILIES = ("gcc", "clang", "zig")
# The values a per-component feature option (components.<name>.options, registry.OPTIONS) may take.
OPTION_VALUES = ("auto", "on", "off")
KeyType = Literal["string", "integer", "number", "boolean", "array", "table"]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()  # a key without a default: it must be written


@dataclass(frozen=True)
class Key:
    """One key: what it holds and what it means. *default* None means "absent" (the code decides, the doc says)."""

    type: KeyType
    doc: str
    default: object = None
    items: Key | None = None  # an array's items
    section: Section | None = None  # a table's keys
    choices: tuple[str, ...] = ()
    pattern: str | None = None  # for editors (JSON Schema); the loader checks it when shape or refusal says why
    shape: str = ""  # the pattern's values in words; set, the loader checks the pattern: "'x' is not <shape>"
    # The words of a refusal of the value (its pattern, its choices or its format), in place of the default ones:
    # str.format'ed with value, key (the key's name), hint (the difflib suggestion among choices), error (re.error).
    refusal: str = ""
    empty: str = ""  # set: an empty string or array is refused with these words (JSON Schema minLength/minItems 1)
    format: Literal["", "regex"] = ""  # regex: a Python regular expression that compiles (JSON Schema format)
    minimum: float | None = None
    maximum: float | None = None
    above: bool = False  # the minimum itself is excluded (a timeout of 0 s)
    also: tuple[Key, ...] = ()  # other forms the value may take (JSON Schema anyOf)
    what: str = ""  # what a value names, for "unknown <what> 'x'" (default: "'x' is not one of …")
    bounds: str = ""  # the range in words, for "<value> is not <bounds>" (default: from minimum and maximum)

    def bounds_text(self) -> str:
        if self.bounds:
            return self.bounds
        if self.minimum is not None and self.maximum is not None:
            return f"between {self.minimum:g} and {self.maximum:g}"
        return f"at least {self.minimum:g}" if self.minimum is not None else f"at most {self.maximum:g}"

    def in_bounds(self, value: float) -> bool:
        if self.minimum is not None and (value <= self.minimum if self.above else value < self.minimum):
            return False
        return self.maximum is None or value <= self.maximum

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class Section:
    """A table's keys; *names*: the table maps free names (components, profiles) to values of one declaration;
    *variants*: the keys allowed for each value of *kind* (a source, a smoke)."""

    keys: Mapping[str, Key] = field(default_factory=dict)
    names: Key | None = None
    name_choices: tuple[str, ...] = ()
    name_pattern: str | None = None
    name_refusal: str = ""  # set, the loader checks name_pattern with these words (else the reader's caller does)
    variants: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    variant_required: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # kind -> keys it must have
    # kind -> (keys, why): a value of that kind has at least one of the keys (JSON Schema anyOf of required)
    variant_any: Mapping[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    # kind -> the options its entry declares (registry.Entry.options), the keys that kind alone reads: the loader
    # refuses them for another kind, which the JSON Schema does not state (a suite's tests table).
    kind_options: Mapping[str, Mapping[str, Option]] = field(default_factory=dict)
    doc: str = ""

    def key(self, name: str) -> Key | None:
        return self.keys.get(name) or self.names


def string(doc: str, default: object = None, *, choices: tuple[str, ...] = (), pattern: str | None = None,
       what: str = "", shape: str = "", refusal: str = "") -> Key:
    return Key("string", doc, default, choices=choices, pattern=pattern, what=what, shape=shape, refusal=refusal)


# Both end up in mmdebstrap's and apt's arguments and sources.list lines: neither may read as an option or a
# second line.
DEBIAN_SUITE = r"^[a-z0-9][a-z0-9.+-]{0,63}$"
SUITE_SHAPE = "a Debian suite name (lower-case letters, digits, '.', '+', '-': trixie, bookworm-backports)"
ABSOLUTE_PATH = r"^/[^\x00-\x1f]*$"
NO_NUL = r"^[^\x00]*$"  # no name, path, argument or URL carries a NUL (load._check_scalars refuses one anywhere)


def suite(doc: str, default: object = None) -> Key:
    return string(doc, default, pattern=DEBIAN_SUITE, shape=SUITE_SHAPE)


def array(doc: str, default: object = None, item: Key | None = None) -> Key:
    return Key("array", doc, default, items=item or Key("string", ""))


def table(doc: str, section: Section, default: object = None) -> Key:
    return Key("table", doc, default, section=section)


def per_arch(doc: str, value: Key) -> Key:
    return table(doc, Section(names=value, name_choices=KNOWN_ARCHS))


def named(doc: str, value: Key, pattern: str | None = None) -> Key:
    return table(doc, Section(names=value, name_pattern=pattern))


NAME = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$"  # fields.PATH_NAME_RE: names that become folder names
# An item of a list of arches (fields.read_arch checks it, naming the known ones).
ARCH_NAME = string("", choices=KNOWN_ARCHS)
ISA_EXTENSION = r"^[a-z][a-z0-9]{0,31}$"  # as the RISC-V ISA string writes it: zfh, zvfh, zba
# A timeout in versions.toml: a day at most (threading.Timer dies on 1e300 and the run would have none).
MAX_TIMEOUT = 86400
COMMIT = r"^[0-9a-f]{40}$"
NOT_A_COMMIT = "'{value}' is not a full 40-hex commit"
SHA256 = r"^[0-9a-f]{64}$"
STRINGS = array("")
# Debian's names and versions, which become apt's and dpkg's arguments (fields.py checks them, naming the key)
PACKAGE = r"^[a-z0-9][a-z0-9+.-]+(?::[a-z0-9]+)?$"
DEBIAN_VERSION = r"^(?:[0-9]+:)?[0-9][A-Za-z0-9.+~-]*$"
PACKAGES = array("", (), string("", pattern=PACKAGE))
PYTHON = r"^3\.[0-9]{1,2}$"  # a CPython a wheel is built for: 3.14
LIBRARY = r"^lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)*$"  # a shared library's file name: libfoo.so, libfoo.so.1.2


def packages(doc: str) -> Key:
    return array(doc, (), string("", pattern=PACKAGE))

SUBSTITUTE = table("a submodule taken at another commit than its gitlink, with the reason", Section({
    "commit": string("the commit used instead (40 hex digits)", REQUIRED, pattern=COMMIT, refusal=NOT_A_COMMIT),
    "reason": string("why: measured, in words", REQUIRED),
}))
SOURCE = Section({
    "kind": string("where the source comes from", REQUIRED, choices=SOURCE_KINDS, what="source kind"),
    "path": string("tree: a folder of this repository"),
    "url": string("git: the repository; archive: the file's URL"),
    "commit": string("git: the pinned commit (40 hex digits)", pattern=COMMIT,
                 refusal=f"{NOT_A_COMMIT}; pin the full hash"),
    "tag": string("git: the tag that names the commit (checked against it)"),
    "absent_ok": array("git: paths (fnmatch) a snapshot may lack; no build reads them", ()),
    "submodules": array("git: submodule paths checked out at the superproject's gitlinks", ()),
    "substitutes": named("git: submodule path -> a substitute commit", SUBSTITUTE),
    "sha256": string("archive: the file's sha256", pattern=SHA256),
    "package": string("debian, sysroot-package: the Debian package", pattern=PACKAGE),
    "version": string("debian: the source package's version", pattern=DEBIAN_VERSION),
    "mirror": string("debian: the archive (default: the sysroot's)"),
    "suite": suite("debian: the suite to look in (default: the sysroot's)"),
}, variants=MappingProxyType({
    "tree": ("kind", "path"),
    "git": ("kind", "url", "commit", "tag", "absent_ok", "submodules", "substitutes"),
    "archive": ("kind", "url", "sha256"),
    "debian": ("kind", "package", "version", "mirror", "suite"),
    "sysroot-package": ("kind", "package"),
}), variant_required=MappingProxyType({
    "tree": ("path",), "git": ("url", "commit"), "archive": ("url", "sha256"), "debian": ("package", "version"),
    "sysroot-package": ("package",),
}), doc="a source: { kind = \"git\", url = …, commit = … } and so on")
SOURCE_KEY = table("the component's source", SOURCE)
MIRRORS = array("other pinned copies of the same content (git, archive, debian), tried in order", (),
                Key("table", "", section=SOURCE))
PATCH = Key("table", "", section=Section({
    "path": string("the patch file, under patches/", REQUIRED),
    "sha256": string("the patch file's sha256", REQUIRED, pattern=SHA256),
    "strip": Key("integer", "patch -p level: 0 or 1", 1, minimum=0, maximum=1),
    "when": table("when it applies", Section({"arch": array("the arches it applies to (default: all)",
                                                             item=ARCH_NAME)})),
}))
PATCHES = array("patches applied in order, each checked reverse then forward (idempotent)", (), PATCH)
FETCHCONTENT = named("CMake FetchContent name -> its pinned source (no download at configure time)",
                      table("", Section({"source": table("the pinned source CMake would have downloaded", SOURCE,
                                                           REQUIRED), "mirrors": MIRRORS, "patches": PATCHES})),
                      r"^[A-Za-z0-9_]+$")


# What a run may die of where a command smoke expects it to (expect = { profile = "SIGILL" }).
SIGNALS = ("SIGILL", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGABRT", "SIGTRAP", "SIGKILL")


def option_key(name: str, option: Option, *, required: bool | None = None, what: str = "smoke kind") -> Key:
    """A smoke or suite kind's option (registry.Option) as a declared key; *required*: whether the key must be written
    (default: the option's own; smoke_section passes False, its kind's variant requires it)."""
    doc = option.doc or f"read by this {what} ({name})"
    default = REQUIRED if (option.required if required is None else required) else None
    match option.type:
        case "strings":
            # a required list names something (a program): an empty one is refused
            return Key("array", doc, default, items=Key("string", ""),
                       empty="an empty list; name the program and its arguments" if option.required else "")
        case "number":
            return Key("number", doc, default)
        case "tolerance":
            return table(doc, Section({"rel": Key("number", "relative", minimum=0),
                                        "abs": Key("number", "absolute", minimum=0)}), default)
        case "signals":
            return table(doc, Section(names=string("", choices=SIGNALS,
                                                refusal="'{value}' is not a signal a run dies of{hint}")), default)
        case "table":
            return table(doc, Section(names=string("")), default)
        case "environment":
            return table(doc, Section(names=string(""), name_pattern=ENV_NAME, name_refusal=(
                "not an environment variable name (letters, digits, '_', not first a digit)")), default)
        case "guidance":
            return table(doc, CONSTRAINED, default)
        case "regex":
            return Key("string", doc, default, choices=option.choices, format="regex",
                       refusal="not a regular expression: {error}")
        case _:
            return Key("string", doc, default, choices=option.choices, empty=option.nonempty)


def either(first: Key, other: Key) -> Key:
    """One name two smoke kinds declare (a plug-in's and crosslane's): either form is read; each kind's own reader
    checks its values."""
    if other.type == first.type and other.choices == first.choices and other.section == first.section:
        return first
    forms = [first, *first.also]
    if all(f.type != other.type for f in forms):
        forms.append(other)
    top = forms[0]
    both = tuple(dict.fromkeys([*first.choices, *other.choices])) if first.choices and other.choices else ()
    return Key(top.type, top.doc, items=top.items, section=top.section, also=tuple(forms[1:]), choices=both)


CONSTRAINED = Section({
    "kind": string("what genai's set_guidance is given", REQUIRED, choices=("regex", "json_schema", "lark_grammar"),
               what="guidance kind"),
    "data": string("the regex, schema or grammar", REQUIRED),
    "prompt": string("the prompt", REQUIRED),
    "new_tokens": Key("integer", "tokens to generate", 32, minimum=1, maximum=512),
})
COMMON_SMOKE = ("kind", "timeout", "profiles")  # the keys of every smoke kind; the others are its options
SMOKE_TIMEOUT = 120.0  # seconds per run under qemu, when versions.toml states none
ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


def smoke_section(smokes: Registry) -> Section:
    """components.<c>.smoke: the keys every kind has and those each kind declares (registry.Entry.options)."""
    keys: dict[str, Key] = {
        "kind": string("the smoke kind (registry: built in, or a plug-in's entry point)", REQUIRED,
                   choices=tuple(smokes.entries), what=smokes.kind),
        "timeout": Key("number", "seconds per run under qemu", SMOKE_TIMEOUT, minimum=0, maximum=MAX_TIMEOUT,
                       above=True, bounds=f"a number of seconds above 0 and at most {MAX_TIMEOUT}"),
        "profiles": array("the CPU profiles it runs on (default: the arch's)", ()),
    }
    for name, entry in smokes.entries.items():
        for key, option in entry.options.items():
            # required by its kind only (variant_required): the key itself is optional among all kinds' keys
            declared = option_key(name, option, required=False)
            keys[key] = declared if key not in keys else either(keys[key], declared)
    variants = {name: (*COMMON_SMOKE, *entry.options) for name, entry in smokes.entries.items()}
    required = {name: tuple(k for k, option in entry.options.items() if option.required)
                for name, entry in smokes.entries.items()}
    # An expected signal on some profiles is no evidence for the others, so each run needs evidence of its own.
    evidence = {kind: (entry.evidence, f"a {kind} smoke names its evidence: "
                       + " or ".join(f'{key} = "…"' for key in entry.evidence)
                       + " (an exit status alone is never a PASS)")
                for kind, entry in smokes.entries.items() if entry.evidence}
    return Section(keys, variants=MappingProxyType(variants), variant_required=MappingProxyType(required),
                   variant_any=MappingProxyType(evidence), doc="how the component is smoked under qemu")


EXEMPT = named("test id or pattern -> why it fails today (measured, in words)", string(""))
SCHEMA_VERSION = 1
# The ExecuTorch backends a case matrix may name (cases.py reads them from here)
CASE_BACKENDS = ("portable", "xnnpack")


PROFILES = Section(names=string("the -cpu string (rv64,v=true,vlen=128,…)"), name_pattern=NAME)
BUILD = Section({
    "march": string("-march of this build", REQUIRED),
    "profiles": array("profiles it runs on", ()),
    "traps": array("profiles where it must end in a named illegal-instruction trap", ()),
    "exempt": named("case -> why it cannot run here, measured", string("")),
})
CASES = Section({
    "models": Key("array", "the models of the matrix", REQUIRED, items=Key("string", ""),
                  empty="no models; list at least one"),
    "backends": array("portable, xnnpack", CASE_BACKENDS, string("", choices=CASE_BACKENDS, what="backend")),
    "quantize": Key("array", "quantized or not", (False,), items=Key("boolean", "")),
    "exclude": array("rules that drop cases", (), Key("table", "", section=Section({
        "model": string("the model it drops"), "backend": string("the backend it drops"),
        "quantize": Key("boolean", "quantized or not")}))),
    "profiles": table("backend -> the profiles its cases run on", Section(names=STRINGS, name_choices=CASE_BACKENDS)),
    "default": array("the cases a smoke runs by default (default: every model)"),
    "exempt": named("model -> why it cannot run, measured", string("")),
})


VERSION = r"^\d+(\.\d+){1,3}$"
# a PyPI version pin for cmake/ninja (3.31.6), checked here rather than found broken by pip or preflight
NOT_A_VERSION = "'{value}' is not a version such as 3.31.6 (crosslane installs {key}=={value} from PyPI)"
HOSTENV = Section({
    "extends": string("another venv whose requirements it starts from"),
    "requirements": array("requirements (bare names pinned in [pins])", ()),
})
BAREMETAL = Section({
    "toolroot": string("the [toolroots] name with the bare-metal toolchain and qemu-system", REQUIRED),
    "qemu": string("the system emulator", REQUIRED, choices=("qemu-system-riscv32", "qemu-system-riscv64"),
               what="bare-metal emulator"),
    "abi": string("-mabi", REQUIRED),
    "source": string("the component whose source it builds", REQUIRED),
    "cases": string("a [cases] name", REQUIRED),
    "timeout": Key("number", "seconds per image run", 120.0, minimum=1, maximum=MAX_TIMEOUT,
                   bounds=f"a number of seconds between 1 and {MAX_TIMEOUT}"),
    "cmake_args": array("configure options", ()),
    "profiles": table("name -> qemu -cpu string", PROFILES, REQUIRED),
    "builds": table("one -march each", Section(names=table("", BUILD), name_pattern=NAME), REQUIRED),
})
PARITY = Section({"exemptions": named("arch[:component] -> why a distribution is not installed there", string(""))})

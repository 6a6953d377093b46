"""Consistency lint: pins, toggles and arch lists repeated in workflows, the noxfile and README tables agree
with versions.toml. Intentional differences need an entry in consistency-allow.toml with a reason.

What is recognized (line by line, so every finding has a line number):
  pins       `cmake==3.31.6`, `cmake-version: 3.31.6`, `CMAKE_VERSION=3.31.6`, `cmake = "3.31.6"`,
             README rows `| cmake | 3.31.6 |`; `clang-19` / `lld-19` against the clang toolchain version;
             `<distribution>==X` against a component's pinned tag or version.
  arch lists `[amd64, arm64]`, `("amd64", "riscv64")`, YAML block lists (`- amd64` lines under a key): any
             list of two or more known arch names must name exactly versions.toml's arches.
  toggles    `lanes.<component>.<arch>.enabled = true|false` anywhere, and README tables whose header is
             `| component | <arch> | … |` with yes/no cells.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from crosslane import sessions
from crosslane.archs import KNOWN_ARCHS, Arch
from crosslane.config import Config, jsonschema, tomlcompat, version_of
from crosslane.config.reader import Table
from crosslane.errors import ConfigError
from crosslane.process import contain
from crosslane.registry import Registry
from crosslane.report import Check, Row, Scope, Verdict

ALLOWLIST = "consistency-allow.toml"
SCANNED = (".github/workflows/*.yml", ".github/workflows/*.yaml", "noxfile.py", "README.md", "docs/*.md")
STEP = "consistency"
VERSION = r"v?(\d+(?:\.\d+)+)"
ON_CELLS = {"yes", "y", "on", "true", "✓", "✔", "x"}
OFF_CELLS = {"no", "n", "off", "false", "✗", "✘", "-", "—", ""}
LIST_RE = re.compile(r"[\[(]([^\[\]()]*)[\])]")
LANE_RE = re.compile(r"lanes\.([A-Za-z0-9_-]+)\.([a-z0-9]+)\.enabled\s*[:=]\s*(true|false)", re.IGNORECASE)
BLOCK_ITEM_RE = re.compile(r"^\s*-\s*['\"]?([A-Za-z0-9_-]+)['\"]?\s*(#.*)?$")


@dataclass(frozen=True, kw_only=True)
class Finding:
    file: str
    line: int
    found: str
    expected: str
    source: str

    def message(self) -> str:
        return f"{self.file}:{self.line}: found {self.found}, versions.toml says {self.expected} ({self.source})"


@dataclass(frozen=True)
class Allow:
    file: str
    value: str
    reason: str

    def matches(self, finding: Finding) -> bool:
        return fnmatch.fnmatchcase(finding.file, self.file) and self.value in finding.found


@dataclass(frozen=True)
class Pin:
    pattern: re.Pattern[str]
    expected: str
    shown: str
    source: str


def pins(cfg: Config) -> list[Pin]:
    result = []
    for tool in ("cmake", "ninja"):
        version = getattr(cfg.tools, tool)
        name = re.escape(tool)
        forms = (rf"(?<![\w-]){name}\s*(?:==|~=)\s*{VERSION}",
                 rf"(?<![\w-]){name}[-_]version\s*[:=]\s*['\"]?{VERSION}",
                 rf"(?<![\w-]){name}\s*=\s*['\"]{VERSION}['\"]",
                 rf"^\s*\|\s*{name}\s*\|\s*`?{VERSION}`?\s*\|")
        for form in forms:
            result.append(Pin(re.compile(form, re.IGNORECASE), version, f"{tool} {version}", f"tools.{tool}"))
    for chain in cfg.toolchains.values():
        if chain.family == "clang" and chain.version:
            for tool in ("clang", "lld"):
                result.append(Pin(re.compile(rf"(?<![\w-]){tool}-(\d+)(?![\w.])"), str(chain.version),
                                  f"{tool}-{chain.version}", f"toolchains.{chain.name}.version"))
    for name, component in cfg.components.items():
        pinned = version_of(component.sources[0])
        if component.distribution and pinned:
            version = pinned.removeprefix("v")
            dist = re.escape(component.distribution).replace(r"\-", "[-_]")
            result.append(Pin(re.compile(rf"(?<![\w-]){dist}\s*==\s*{VERSION}", re.IGNORECASE), version,
                              f"{component.distribution}=={version}", f"components.{name}.source"))
    return result


def _arch_items(text: str) -> list[str] | None:
    items = [i.strip().strip("'\"") for i in text.split(",")]
    items = [i for i in items if i]
    if len(items) >= 2 and all(i in KNOWN_ARCHS for i in items):
        return items
    return None


def _arch_lists(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    for number, line in enumerate(lines, 1):
        for match in LIST_RE.finditer(line):
            items = _arch_items(match.group(1))
            if items:
                yield number, items
    block: list[str] = []
    start = 0
    for number, line in enumerate([*lines, ""], 1):
        item = BLOCK_ITEM_RE.match(line)
        if item and item.group(1) in KNOWN_ARCHS:
            if not block:
                start = number
            block.append(item.group(1))
            continue
        if len(block) >= 2:
            yield start, block
        block = []


def _lane_on(cfg: Config, component: str, arch: Arch) -> bool:
    lane = cfg.lanes.get((component, arch))
    return cfg.components[component].job and cfg.builds(component, arch) and (lane is None or lane.enabled)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _readme_tables(cfg: Config, file: str, lines: list[str]) -> Iterator[Finding]:
    header: list[str] | None = None
    for number, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells if cells[0].lower() == "component" and any(c in KNOWN_ARCHS for c in cells[1:]) else []
            continue
        if not header or set(line.replace("|", "").strip()) <= set("-: "):
            continue
        name = cells[0].strip("`")
        if name not in cfg.components:
            yield Finding(file=file, line=number, found=f"component '{name}'",
                          expected=f"one of {', '.join(cfg.components)}", source="components")
            continue
        for title, cell in zip(header[1:], cells[1:], strict=False):
            if title not in KNOWN_ARCHS:
                continue
            value = cell.lower()
            if value not in ON_CELLS | OFF_CELLS:
                continue
            want = _lane_on(cfg, name, Arch(title))
            if (value in ON_CELLS) != want:
                yield Finding(file=file, line=number, found=f"{name} on {title}: '{cell}'",
                              expected="on" if want else "off",
                              source=f"components.{name}.arches / lanes.{name}.{title}")


def lint_text(cfg: Config, file: str, text: str) -> list[Finding]:
    lines = text.splitlines()
    findings: list[Finding] = []
    for pin in pins(cfg):
        for number, line in enumerate(lines, 1):
            for match in pin.pattern.finditer(line):
                if match.group(1) != pin.expected:
                    findings.append(Finding(file=file, line=number, found=match.group(0).strip(" |"),
                                            expected=pin.shown, source=pin.source))
    want = sorted(a.value for a in cfg.arches)
    for number, items in _arch_lists(lines):
        if sorted(set(items)) != want:
            findings.append(Finding(file=file, line=number, found=f"arch list [{', '.join(items)}]",
                                    expected=f"[{', '.join(want)}]",
                                    source="[arches.*]"))
    for number, line in enumerate(lines, 1):
        for match in LANE_RE.finditer(line):
            component, arch, value = match.group(1), match.group(2), match.group(3).lower()
            if component not in cfg.components or arch not in KNOWN_ARCHS:
                findings.append(Finding(file=file, line=number, found=match.group(0),
                                        expected="a known component and arch", source="lanes"))
                continue
            want_on = _lane_on(cfg, component, Arch(arch))
            if (value == "true") != want_on:
                findings.append(Finding(file=file, line=number, found=match.group(0),
                                        expected=f"enabled = {str(want_on).lower()}",
                                        source=f"lanes.{component}.{arch}"))
    if file.endswith(".md"):
        findings += _readme_tables(cfg, file, lines)
    return sorted(findings, key=lambda f: (f.file, f.line))


def load_allowlist(root: Path) -> list[Allow]:
    path = root / ALLOWLIST
    if not path.is_file():
        return []
    try:
        data = tomlcompat.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomlcompat.TOMLDecodeError) as exc:
        raise ConfigError(f"{ALLOWLIST}: cannot read ({exc}); fix the file") from exc
    top = Table(data, ALLOWLIST)
    result = []
    for entry in top.tables("allow"):
        allow = Allow(entry.string("file", required=True), entry.string("value", required=True),
                      entry.string("reason", required=True))
        if not allow.reason.strip():
            entry.fail("reason", "empty; say why this difference is intentional")
        entry.finish()
        result.append(allow)
    top.finish()
    return result


def scanned_files(root: Path) -> list[Path]:
    return sorted({p for pattern in SCANNED for p in root.glob(pattern) if p.is_file()})


def expected_sessions(cfg: Config) -> set[str]:
    """build-/smoke-/tests- sessions versions.toml implies (crosslane.sessions' plan, which the noxfile registers)."""
    return {s.name for s in sessions.plan(cfg)}


def registered_sessions(noxfile: Path) -> set[str] | None:
    """The sessions nox really lists for the noxfile (`nox -l`: its `* name` and `- name` lines; --json lists
    only the selected ones), or None without a noxfile."""
    if not noxfile.is_file():
        return None
    listed = contain.run([sys.executable, "-m", "nox", "-f", str(noxfile), "-l"], timeout=120)
    if listed.returncode != 0:
        why = listed.stderr.decode(errors="replace").strip()[-300:]
        raise ConfigError(f"{noxfile.name}: nox cannot list its sessions: {why}", fix="run nox -l to see why")
    text = listed.stdout.decode(errors="replace")
    return {line[2:].split(" ", 1)[0] for line in text.splitlines() if line[:2] in ("* ", "- ")}


def session_findings(cfg: Config, root: Path) -> list[Finding]:
    found = registered_sessions(root / "noxfile.py")
    if found is None:
        return []
    # The planned ones: build-/smoke-/repro- per arch and component, tests-<arch>-<component> (not `tests-slow`).
    prefixes = ("build-", "smoke-", "repro-", *(f"tests-{arch}-" for arch in cfg.arches))
    per_job = {n for n in found if n.startswith(prefixes)}
    want = expected_sessions(cfg)
    return ([Finding(file="noxfile.py", line=0, found=f"no session {n}", expected="one per arch × component it lists",
                     source="[components.*]")
             for n in sorted(want - per_job)] +
            [Finding(file="noxfile.py", line=0, found=f"session {n}", expected="no such arch × component",
                     source="[components.*]")
             for n in sorted(per_job - want)])


def lint_sessions(cfg: Config, root: Path) -> list[Row]:
    """The noxfile's build-/smoke- sessions against versions.toml (runs `nox -l`)."""
    found = session_findings(cfg, root)
    rows = [Row(component=f.file, arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.FAIL, reason=f.message(),
                subject=STEP) for f in found]
    count = len(expected_sessions(cfg))
    return rows or [Row(component="sessions", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.PASS,
                        reason=f"noxfile.py has the {count} sessions versions.toml implies", subject=STEP)]


def lint_schema(root: Path, smokes: Registry) -> list[Row]:
    """The committed JSON Schema of versions.toml is what config/keys.py declares (with the smoke kinds installed)."""
    problem = jsonschema.stale(root, smokes)
    if problem is not None:
        return [Row(component="schema", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.FAIL, reason=problem,
                    subject=STEP)]
    return [Row(component="schema", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.PASS,
                reason=f"{jsonschema.SCHEMA_PATH} is what config/keys.py declares", subject=STEP)]


def lint(cfg: Config, root: Path) -> list[Row]:
    allow = load_allowlist(root)
    used: set[Allow] = set()
    rows: list[Row] = []
    files = scanned_files(root)
    for path in files:
        rel = path.relative_to(root).as_posix()
        for finding in lint_text(cfg, rel, path.read_text(encoding="utf-8", errors="replace")):
            entry = next((a for a in allow if a.matches(finding)), None)
            if entry is not None:
                used.add(entry)
                continue
            rows.append(Row(component=f"{finding.file}:{finding.line}", arch=Scope.ALL, check=Check.POLICY,
                            verdict=Verdict.FAIL, reason=finding.message(), subject=STEP))
    rows += [Row(component=ALLOWLIST, arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.FAIL,
                 reason=f"stale allow entry file={a.file!r} value={a.value!r}: matches nothing; delete it",
                 subject=STEP)
             for a in allow if a not in used]
    if not rows:
        rows.append(Row(component="consistency", arch=Scope.ALL, check=Check.POLICY, verdict=Verdict.PASS,
                        reason=f"{len(files)} files agree with versions.toml ({', '.join(p.name for p in files)})",
                        subject=STEP))
    return rows

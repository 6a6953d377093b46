"""The verdict every step returns: a Row (component × arch × step → PASS/FAIL/SKIP and the reason), read back
from a report as the same Row. How rows are shown and written is reports/summary.py."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from crosslane.archs import Arch


class Check(enum.StrEnum):
    """What kind of check a row reports: floors count SMOKE rows, parity compares PARITY rows, a failed BUILD is
    an external command that failed (exit 5). A closed set: code that dispatches on it matches every member."""

    SETUP = "setup"
    SYSROOT = "sysroot"
    SOURCE = "source"  # subject: which source served ("" the component's own; else a dependency's name)
    PATCH = "patch"
    BUILD = "build"
    ARTIFACT = "artifact"  # subject: "pack" or "unpack"; a bare-metal image's case, published with its papers
    GATE = "gate"  # subject: the gate's name; "" for the summary of a component's gates
    INSTALL = "install"
    SMOKE = "smoke"  # subject: what ran (a payload, a case); profile: where
    PROVENANCE = "provenance"  # subject: the claim ("ort-loaded")
    PARITY = "parity"  # an output compared with the amd64 control's
    TESTS = "tests"  # an upstream test suite on one profile (crosslane/suites/)
    PREFLIGHT = "preflight"  # subject: the check
    POLICY = "policy"  # subject: "arch-parity" or "consistency"
    FLOOR = "floor"  # subject: "" the floor itself, "record", "floor-change"
    INDEX = "index"  # the PEP 503 index `invoke index` wrote
    REPRO = "repro"  # subject: what a reproducibility check compared (a build's outputs, the second build)
    WORKFLOW = "workflow"  # a job of the CI workflow run by an Actions engine (invoke actions); subject: its id


# Checks whose label names the subject after the check ("gate:elf-arch"); the others show the subject alone.
PREFIXED = frozenset({Check.SOURCE, Check.GATE, Check.PREFLIGHT, Check.PROVENANCE})
REPORT_FIX = "pass a report crosslane wrote (--json FILE, build/reports/report-<arch>.json), unedited"


class Verdict(enum.StrEnum):
    """The one verdict enum. A row is PASS, FAIL or SKIP; a preflight finding may also be a NOTICE (a passing
    check with a decision to state) or a WARN (passing, with a risk to state), which its row reports as PASS."""

    PASS = "PASS"
    NOTICE = "NOTICE"
    WARN = "WARN"
    SKIP = "SKIP"
    FAIL = "FAIL"


ROW_VERDICTS = (Verdict.PASS, Verdict.FAIL, Verdict.SKIP)


def printable(text: str) -> str:
    """*text* with what UTF-8 cannot encode (lone surrogates) written as backslash escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True)
class Scope:
    """Where a row belongs when it is no one Linux arch: ALL (the repository, every arch at once: a policy, the
    floors' record), NO_ARCH (what no arch owns: a source served once, the index), or a lane that names itself (a
    bare-metal target, a CI leg, the arches one setup served). Written in a report as its name."""

    name: str
    ALL: ClassVar[Scope]
    NO_ARCH: ClassVar[Scope]

    def __post_init__(self) -> None:
        if self.name in set(Arch):
            raise ValueError(f"scope {self.name!r} is an arch: use Arch({self.name!r})")
        if not self.name.isascii():  # a report read back may carry any text (see Row)
            object.__setattr__(self, "name", printable(self.name))

    def __str__(self) -> str:
        return self.name

    @classmethod
    def of(cls, name: str) -> Arch | Scope:
        """A report's arch text as a row's arch: the Arch of that name, else the scope."""
        return Arch(name) if name in set(Arch) else cls(name)


Scope.ALL = Scope("all")
Scope.NO_ARCH = Scope("-")


@dataclass(frozen=True, kw_only=True)
class Row:
    """One verdict. Every field is data: nothing reads a row by parsing its label."""

    component: str
    arch: Arch | Scope
    check: Check
    verdict: Verdict
    reason: str = ""
    subject: str = ""
    profile: str = ""  # the CPU profile a smoke or parity row ran on
    control: bool = False  # ran on the amd64 control, for comparison
    # Markdown a reader wants beside the summary (e.g. an op-timing table): shown under the table, kept in JSON.
    detail: str = dataclasses.field(default="", compare=False)
    # What making the row cost (costs.py): wall seconds and CPU seconds, children included; 0 when not measured.
    # Not part of the row's identity: the same verdict in another run is the same row.
    wall: float = dataclasses.field(default=0.0, compare=False)
    cpu: float = dataclasses.field(default=0.0, compare=False)

    def __post_init__(self) -> None:
        # A reason quotes hostile input (an SBOM's "\ud800" parses to a lone surrogate), a report read back may
        # carry any text: none may break the summary's print or the files written from it.
        for name in ("component", "reason", "subject", "profile", "detail"):
            text = getattr(self, name)
            if isinstance(text, str) and not text.isascii():
                object.__setattr__(self, name, printable(text))

    @property
    def time(self) -> str:
        """The time column: wall/CPU seconds to one decimal ("<wall>s/<cpu>s"), "" when not measured."""
        return f"{self.wall:.1f}s/{self.cpu:.1f}s" if self.wall or self.cpu else ""

    @property
    def label(self) -> str:
        """The step column of the summary ("gate:elf-arch", "genai@rvv128", "control:ort@x86-64-v2"): display
        only, derived from the fields."""
        if self.check is Check.GATE and not self.subject:
            text = "gates"
        elif self.check in PREFIXED and self.subject:
            text = f"{self.check.value}:{self.subject}"
        else:
            text = self.subject or self.check.value
        if self.profile:
            text = f"{text}@{self.profile}"
        return f"control:{text}" if self.control else text

    @classmethod
    def from_dict(cls, data: object, index: int = 0) -> Row:
        """One entry of a --json report; ValueError names the entry and what is wrong with it."""
        fields = ("component", "arch", "check", "verdict")
        if not isinstance(data, dict) or not all(isinstance(data.get(f), str) for f in fields):
            raise ValueError(f"entry {index} lacks the text fields {', '.join(fields)}")
        try:
            check, verdict = Check(data["check"]), Verdict(data["verdict"])
        except ValueError as exc:
            raise ValueError(f"entry {index}: {exc}") from None
        if verdict not in ROW_VERDICTS:
            raise ValueError(f"entry {index}: a row's verdict is PASS, FAIL or SKIP, not {verdict.value}")
        return cls(component=data["component"], arch=Scope.of(data["arch"]), check=check, verdict=verdict,
                   reason=str(data.get("reason", "")), subject=str(data.get("subject", "")),
                   profile=str(data.get("profile", "")),
                   control=data.get("control") is True, detail=str(data.get("detail", "")),
                   wall=_seconds(data.get("wall")), cpu=_seconds(data.get("cpu")))


def _seconds(value: object) -> float:
    """A report's time field: a finite number of seconds from 0 to a week, else 0 (a report that crossed a job may
    say anything)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 7 * 86400:
        return 0.0
    return float(value)


def timed(rows: Iterable[Row], wall: float, cpu: float) -> list[Row]:
    """*rows* with the time of the work that made them, where they carry none of their own."""
    return [r if r.wall or r.cpu else dataclasses.replace(r, wall=round(wall, 3), cpu=round(cpu, 3)) for r in rows]


def rows_from(data: object, where: object) -> list[Row]:
    """The rows of a parsed --json report; ValueError names *where* and the entry that is not a row."""
    if not isinstance(data, list):
        raise ValueError(f"{where}: a report is a JSON list of rows")
    try:
        return [Row.from_dict(entry, index) for index, entry in enumerate(data)]
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None

"""Test results from JUnit XML: ctest's --output-junit, googletest's --gtest_output=xml, pytest's --junitxml.

The files are written inside an emulated target by the programs under test: input that may be truncated (a crash
mid-write), huge or malformed, or a link a program made to a file it should not show. A file that cannot be read,
a link among them, is a ValueError naming it, never a crash; results are never scraped from text output.

A failed case keeps the last lines of the output the file holds for it (ctest's <system-out>): ctest's own label
("Failed", "SEGFAULT") says nothing of why, the output does (`version 'GLIBC_2.43' not found`). When qemu itself
failed (its own assertion or fatal error) that line is kept instead, marked as the emulator's: the program did not
fail, the emulator under it did. "qemu: uncaught target signal" is the guest program's own death, not qemu's.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import defusedxml
import defusedxml.ElementTree

from crosslane.archs import ARCHS
from crosslane.errors import StepFailed
from crosslane.files import bounded

XML_LIMIT = 64 * 1024 * 1024
MESSAGE_LIMIT = 300
DETAIL_LIMIT = 8192
ID_LIMIT = 400  # characters: a longer id is cut, and named by a digest of the whole so ids stay distinct
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
LOCATION = re.compile(r"\S+:[0-9]+")
OUTPUT_LINES = 3  # of a failed case's output, the last ones
OUTPUT_LIMIT = 240  # characters of them kept (their end: the last line is the likeliest reason)
# qemu's own failures: a glibc assertion or message prefixed by qemu's program name (qemu-riscv64[-static]: …),
# cpu_abort's "qemu: fatal:", and GLib's assertions naming qemu's sources. Not "qemu: uncaught target signal".
QEMU_NAMES = "|".join(sorted({re.escape(a.qemu_binary.removesuffix("-static")) for a in ARCHS.values()}))
EMULATOR_FAULT = re.compile(rf"(?:^|/)(?:{QEMU_NAMES})(?:-static)?: .*|^qemu: fatal: .*"
                            r"|^(?:Bail out! )?ERROR:\S*(?:accel/tcg|tcg|target/[a-z0-9]+|linux-user)/\S+:\d+:.*")
EMULATOR = "emulator crash (qemu's own, not the program's)"


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # a failed assertion, a crash, a timeout, an error in a fixture
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Case:
    """One upstream test case: its id (stable across runs and profiles), outcome, seconds and first message line."""

    id: str
    outcome: Outcome
    seconds: float
    message: str = ""
    # The failure's whole text (bounded), for deciding why it failed; not part of the recorded result.
    detail: str = dataclasses.field(default="", compare=False, repr=False)
    # A failed case's last output lines (or qemu's own failure, marked EMULATOR): what its label does not say.
    output: str = dataclasses.field(default="", compare=False)

    @property
    def why(self) -> str:
        """The message with the output that explains it: "Failed: …/libfoo.so.1: cannot open shared object file"."""
        return ": ".join(part for part in (self.message, self.output) if part)

    @property
    def emulator_crash(self) -> bool:
        return self.output.startswith(EMULATOR)

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "outcome": self.outcome.value, "seconds": self.seconds,
                **({"message": self.message} if self.message else {}),
                **({"output": self.output} if self.output else {})}


def _root(path: Path) -> ET.Element:
    try:
        data = bounded.read_bytes(path, limit=XML_LIMIT, error=StepFailed, fix="", links=False)
    except StepFailed as exc:
        raise ValueError(exc.message) from None
    try:
        # defusedxml refuses a document type declaration in whatever encoding the file declares (a byte search
        # for "<!DOCTYPE" misses UTF-16), and with it every entity: nothing can expand.
        root: ET.Element = defusedxml.ElementTree.fromstring(data, forbid_dtd=True, forbid_entities=True,
                                                             forbid_external=True)
        return root
    except defusedxml.DefusedXmlException as exc:
        raise ValueError(f"{path}: {type(exc).__name__}: JUnit XML declares no document type or entity "
                         "(refused: entity expansion)") from None
    except (ET.ParseError, UnicodeError, LookupError) as exc:
        raise ValueError(f"{path}: not well-formed XML ({exc})") from None


# ctest's completion status of a test that skipped itself (cmCTestRunTest): the only "notrun" that is a skip
CTEST_SKIPS = ("SKIP_RETURN_CODE", "SKIP_REGULAR_EXPRESSION_MATCHED")

def clean(text: str, limit: int) -> str:
    """A value from a target's report as crosslane keeps it: control characters (a newline would forge a line of
    output) as escapes, at most *limit* characters (a longer one cut and named by a digest of the whole)."""
    text = CONTROL.sub(lambda m: repr(m.group(0))[1:-1], text)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}…{hashlib.sha256(text.encode(errors='replace')).hexdigest()[:16]}"


def _seconds(value: str | None) -> float:
    try:
        seconds = float(value or 0)
    except ValueError:
        return 0.0
    # nan, inf and negative times are no times: a report of them would not be JSON the next reader takes
    return round(seconds, 3) if math.isfinite(seconds) and seconds >= 0 else 0.0


def _message(element: ET.Element) -> str:
    text = element.get("message") or (element.text or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and LOCATION.fullmatch(lines[0]):  # googletest: "path/init.cc:301" then what was expected
        return clean(f"{lines[0].rsplit('/', 1)[-1]}: {lines[1]}", MESSAGE_LIMIT)
    return clean(lines[0] if lines else "", MESSAGE_LIMIT)


def output_tail(text: str, message: str = "") -> str:
    """What a failed case's output says of why: qemu's own failure when there is one (EMULATOR), else its last
    lines; "" when it says nothing the message does not."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    fault = next((line for line in reversed(lines) if EMULATOR_FAULT.search(line)), None)
    if fault is not None:
        return clean(f"{EMULATOR}: {fault}", MESSAGE_LIMIT)
    kept: list[str] = []
    for line in reversed([line for line in lines[-OUTPUT_LINES:] if line != message]):
        # the last line whole where it fits; an earlier one only beside it (a line of binary noise would crowd it out)
        if kept and len(" | ".join([line, *kept])) > OUTPUT_LIMIT:
            break
        kept.insert(0, line)
    tail = " | ".join(kept)
    return clean(tail if len(tail) <= OUTPUT_LIMIT else f"…{tail[-OUTPUT_LIMIT:]}", MESSAGE_LIMIT)


def _output(element: ET.Element) -> str:
    return "\n".join(element.findtext(tag) or "" for tag in ("system-out", "system-err"))


def _case(element: ET.Element, prefix: str, separator: str, ctest: bool) -> Case:
    classname, name = element.get("classname") or "", element.get("name") or ""
    # pytest: classname is the module (test_file or pkg.test_file.Class); googletest: the suite; ctest: the name.
    ident = name if not classname or classname == name else f"{classname}{separator}{name}"
    ident = clean(f"{prefix}{ident}", ID_LIMIT)
    seconds = _seconds(element.get("time"))
    for tag in ("failure", "error"):
        found = element.find(tag)
        if found is not None:
            text = f"{found.get('message') or ''}\n{found.text or ''}"[:DETAIL_LIMIT]
            message = _message(found) or tag
            return Case(ident, Outcome.FAILED, seconds, message, text, output_tail(_output(element), message))
    skipped = element.find("skipped")
    message = _message(skipped) if skipped is not None else "not run"
    # ctest's "notrun" is a skip only when the test asked for it (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION); else it
    # is a test ctest could not start (a missing executable, a failed fixture, missing files): ctest fails it too
    if ctest and element.get("status") == "notrun" and not message.startswith(CTEST_SKIPS):
        return Case(ident, Outcome.FAILED, seconds, message, message, output_tail(_output(element), message))
    # googletest marks a skipped or disabled case with result="skipped"/status="notrun"; ctest a disabled test with
    # status="disabled".
    if skipped is not None or element.get("result") == "skipped" or element.get("status") in ("notrun", "disabled"):
        return Case(ident, Outcome.SKIPPED, seconds, message)
    return Case(ident, Outcome.PASSED, seconds)


def read(path: Path, prefix: str = "", separator: str = "::", *, ctest: bool = False) -> list[Case]:
    """Every <testcase> of a JUnit file, its id "<prefix><class><separator><name>": pytest's own (module::test);
    googletest's is "<program>/Suite.case" (its --gtest_filter name, in one id space for every program of a ctest
    run); *ctest*: ctest's own file. ValueError names a file that is no JUnit report."""
    root = _root(path)
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"{path}: root element <{root.tag}>, not <testsuites> or <testsuite>")
    return [_case(element, prefix, separator, ctest) for element in root.iter("testcase")]


def counts(cases: list[Case]) -> dict[Outcome, int]:
    return {outcome: sum(1 for c in cases if c.outcome is outcome) for outcome in Outcome}

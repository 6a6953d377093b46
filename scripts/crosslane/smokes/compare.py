"""Cross-arch output parity: named outputs per (arch, profile) compared with the amd64 control.

Any payload can take part: it puts a JSON object in its sentinel detail whose "outputs" member maps
output names to JSON values (numbers, strings, nested lists). Each output is declared with a tolerance:
exact (the values are equal, NaN equal to NaN) or relative (every number b of the arch against the
control's a: |a - b| <= max(rel * max(|a|, |b|), abs)). Shapes, strings and booleans always compare
exactly. An output the control has but an arch lacks is a FAIL, so is an output nobody declared. A note says what
was compared (how many numbers, strings…); a comparison of nothing (empty in both runs, no outputs at all) is a
FAIL, never a match.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from crosslane.archs import Arch
from crosslane.report import Check, Row, Verdict


@dataclass(frozen=True)
class Tolerance:
    rel: float = 0.0
    abs: float = 0.0

    @property
    def exact(self) -> bool:
        return self.rel == 0.0 and self.abs == 0.0

    def describe(self) -> str:
        if self.exact:
            return "exact"
        return f"rel {self.rel:g}" + (f", abs {self.abs:g}" if self.abs else "")


EXACT = Tolerance()


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One run's outputs: *label* names the run (arch@profile)."""

    arch: Arch
    profile: str
    outputs: Mapping[str, object]

    @property
    def label(self) -> str:
        return f"{self.arch}@{self.profile}"

    def first(self, count: int) -> Sample:
        """These outputs with every list cut to its first *count* items: what a run that made only its first
        *count* tokens is held to."""
        return dataclasses.replace(self, outputs={name: value[:count] if isinstance(value, list) else value
                                                  for name, value in self.outputs.items()})


@dataclass(frozen=True, kw_only=True)
class Comparison:
    sample: Sample
    output: str
    tolerance: Tolerance
    ok: bool
    note: str


def outputs_from_detail(detail: str) -> Mapping[str, object] | None:
    """The "outputs" object of a sentinel detail that is (or ends in) a JSON object; None otherwise."""
    start = detail.find("{")
    if start < 0:
        return None
    try:
        data = json.loads(detail[start:])
    except (ValueError, RecursionError):
        return None
    outputs = data.get("outputs") if isinstance(data, dict) else None
    return outputs if isinstance(outputs, dict) else None


Number = int | float
# What a comparison found equal besides numbers, by kind ("string": 2): a count says what was compared.
Others = Counter[str]


def _leaf_kind(value: object) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "string" if isinstance(value, str) else None


@dataclass(frozen=True, kw_only=True)
class Paired:
    """Two values walked side by side: the numbers in matching positions and the other values found equal (counted
    by kind), or the first structural difference (*problem*; then nothing else)."""

    numbers: tuple[tuple[Number, Number], ...] = ()
    others: Others = dataclasses.field(default_factory=Counter)
    problem: str | None = None


def _numbers(value: object, control: object, path: str) -> Paired:
    kind = _leaf_kind(value) or _leaf_kind(control)
    if kind is not None:
        if value == control and type(value) is type(control):
            return Paired(others=Counter([kind]))
        return Paired(problem=f"{path}: {value!r} != {control!r}")
    if isinstance(value, (int, float)) and isinstance(control, (int, float)):
        return Paired(numbers=((value, control),))  # as they are: two integers compare exactly, however large
    if isinstance(value, list) and isinstance(control, list):
        if len(value) != len(control):
            return Paired(problem=f"{path}: length {len(value)} != control's {len(control)}")
        items = [(a, b, f"{path}[{index}]") for index, (a, b) in enumerate(zip(value, control, strict=True))]
    elif isinstance(value, dict) and isinstance(control, dict):
        if sorted(value) != sorted(control):
            return Paired(problem=f"{path}: keys {sorted(value)} != control's {sorted(control)}")
        items = [(value[key], control[key], f"{path}.{key}") for key in sorted(value)]
    else:
        return Paired(problem=f"{path}: {type(value).__name__} where the control has {type(control).__name__}")
    numbers: list[tuple[Number, Number]] = []
    others: Others = Counter()
    for a, b, where in items:
        found = _numbers(a, b, where)
        if found.problem:
            return Paired(problem=found.problem)
        numbers += found.numbers
        others += found.others
    return Paired(numbers=tuple(numbers), others=others)


def _finite(number: Number) -> bool:
    return isinstance(number, int) or math.isfinite(number)


def _as_float(number: float | Fraction) -> float:
    try:
        return float(number)
    except OverflowError:
        return math.inf


def _counted(count: int, what: str) -> str:
    return f"{count} {what if count == 1 else what + 's'}"


def _kinds(others: Others) -> str:
    return " and ".join(_counted(count, kind) for kind, count in sorted(others.items()))


def compare_text(value: str, control: str) -> tuple[bool, str]:
    """Two texts (a program's stdout): identical, or the first line that differs. Empty in both is no evidence."""
    if value == control:
        if not value.strip():
            return False, "nothing compared: the output is empty in both runs"
        return True, (f"identical text: {_counted(len(value.splitlines()), 'line')}, "
                      f"{_counted(len(value), 'character')} (exact)")
    ours, theirs = value.splitlines(), control.splitlines()
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    mine = ours[at][:100] if at < len(ours) else "(no line)"
    other = theirs[at][:100] if at < len(theirs) else "(no line)"
    return False, f"line {at + 1}: {mine!r} != control's {other!r} ({len(ours)} lines against {len(theirs)})"


def compare_value(value: object, control: object, tolerance: Tolerance, name: str = "") -> tuple[bool, str]:
    if isinstance(value, str) and isinstance(control, str):
        return compare_text(value, control)
    paired = _numbers(value, control, name)
    pairs, others = paired.numbers, paired.others
    if paired.problem:
        return False, paired.problem
    if not pairs and not others:
        return False, f"nothing compared: {json.dumps(control)[:60]} in both runs, no value in it"
    worst_rel, worst_abs, bad = 0.0, 0.0, 0
    for got, want in pairs:
        if not (_finite(got) and _finite(want)):
            # NaN matches NaN only, an infinity only itself: no tolerance bridges the gap to a number
            same = (got != got and want != want) or got == want
            bad += 0 if same else 1
            worst_abs, worst_rel = (worst_abs, worst_rel) if same else (math.inf, math.inf)
            continue
        if isinstance(got, float) and isinstance(want, float):
            diff: float | Fraction = abs(got - want)
            scale: float | Fraction = max(abs(got), abs(want))
            allowed: float | Fraction = max(tolerance.rel * scale, tolerance.abs)
        else:  # an integer: Fractions, exact at any size (a float would round 2**53 + 1, or overflow)
            diff = abs(Fraction(got) - Fraction(want))
            scale = max(abs(Fraction(got)), abs(Fraction(want)))
            allowed = max(Fraction(tolerance.rel) * scale, Fraction(tolerance.abs))
        worst_abs = max(worst_abs, _as_float(diff))
        if scale:
            worst_rel = max(worst_rel, _as_float(diff / scale))
        if diff > allowed:
            bad += 1
    if bad:
        summary = f"{len(pairs)} values, max abs diff {worst_abs:.3g}, max rel diff {worst_rel:.3g}"
        return False, f"{bad} of {len(pairs)} values differ beyond {tolerance.describe()} ({summary})"
    also = f"{' and ' if pairs else ''}{_kinds(others)}" if others else ""
    if tolerance.exact or not pairs:
        return True, f"{_counted(len(pairs), 'value') if pairs else ''}{also} identical ({tolerance.describe()})"
    summary = f"{len(pairs)} values, max abs diff {worst_abs:.3g}, max rel diff {worst_rel:.3g}"
    return True, f"{summary}{f'; {_kinds(others)} identical' if others else ''} ({tolerance.describe()})"


def compare(samples: Iterable[Sample], control: Sample, tolerances: Mapping[str, Tolerance]) -> list[Comparison]:
    """Every declared output of every sample against the control."""
    found: list[Comparison] = []
    for sample in samples:
        names = sorted(set(tolerances) | set(sample.outputs))
        if not names:
            found.append(Comparison(sample=sample, output="(outputs)", tolerance=EXACT, ok=False,
                                    note="nothing compared: no output declared and none reported"))
        for name in names:
            tolerance = tolerances.get(name)
            if tolerance is None:
                found.append(Comparison(sample=sample, output=name, tolerance=EXACT, ok=False,
                                        note="output not declared (no tolerance stated)"))
            elif name not in control.outputs:
                found.append(Comparison(sample=sample, output=name, tolerance=tolerance, ok=False,
                                        note=f"the control {control.label} lacks it"))
            elif name not in sample.outputs:
                found.append(Comparison(sample=sample, output=name, tolerance=tolerance, ok=False,
                                        note="missing from this run"))
            else:
                ok, note = compare_value(sample.outputs[name], control.outputs[name], tolerance, name)
                found.append(Comparison(sample=sample, output=name, tolerance=tolerance, ok=ok, note=note))
    return found


def table(comparisons: Sequence[Comparison], control: Sample) -> str:
    """A plain-text comparison table: run × output → verdict and how close it came."""
    header = ("run", "output", "tolerance", "vs control", "verdict", "note")
    cells = [header] + [(c.sample.label, c.output, c.tolerance.describe(), control.label,
                         "PASS" if c.ok else "FAIL", c.note) for c in comparisons]
    widths = [max(len(cell[i]) for cell in cells) for i in range(len(header) - 1)]
    lines = ["  ".join(v.ljust(w) for v, w in zip(cell[:-1], widths, strict=True)) + "  " + cell[-1]
             for cell in cells]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ----")
    return "\n".join(line.rstrip() for line in lines)


def rows(component: str, comparisons: Sequence[Comparison]) -> list[Row]:
    """One report row per run: PASS when all its outputs match the control."""
    by_run: dict[str, list[Comparison]] = {}
    for comparison in comparisons:
        by_run.setdefault(comparison.sample.label, []).append(comparison)
    result = []
    for found in by_run.values():
        sample = found[0].sample
        failed = [c for c in found if not c.ok]
        shown = failed or found
        reason = "; ".join(f"{c.output}: {c.note}" for c in shown)
        result.append(Row(component=component, arch=sample.arch, check=Check.PARITY,
                          verdict=Verdict.FAIL if failed else Verdict.PASS,
                          reason=("= control: " if not failed else "") + reason, profile=sample.profile))
    return result

"""Comments and docstrings in scripts/ give reasons, not measurements: no dates, no timings; and records name their
fields: a row, a plan or a result is a keyword-only dataclass, built by keyword.

A figure belongs, with its date and the command it came from, in docs/findings.md (upstream code and tools) or
bench/README.md (crosslane's own speed); the code keeps the reason in a sentence. A number of seconds that is a
limit the code sets (a timeout, a budget, a bound) is no measurement and may be named.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
# The day something was measured (the zip format's 1980-01-01 is a constant of the format, not such a day).
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
# A number of time units: "2477 s", "~70 µs", "1.0 s", "20-40 ms", "35.2 minutes", "5s".
TIMING = re.compile(r"(?<![\w.])~?\d+(?:[.,]\d+)?(?:\s?[–-]\s?\d+(?:[.,]\d+)?)?\s?"
                    r"(?:µs|us|ms|s|secs?|seconds?|mins?|minutes?|h|hours?)\b")
# A word before the number, in its clause, that makes it a limit the code sets rather than a figure it measured.
LIMIT = re.compile(r"\b(?:timeouts?|limits?|budgets?|bound(?:ed|s)?|deadlines?|at most|within|no more than|"
                   r"never (?:before|after))\b|[≤<]", re.IGNORECASE)
CLAUSE_END = re.compile(r"[;:()\"`]|\.\s")


def prose(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every string statement (docstrings, attribute docstrings) of *source*."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for offset, line in enumerate(node.value.value.splitlines()):
                yield node.value.lineno + offset, line


def is_limit(text: str, start: int) -> bool:
    """Whether the timing at *start* of *text* is a limit: a limit word earlier in its clause."""
    clause = CLAUSE_END.split(text[:start])[-1]
    return LIMIT.search(clause) is not None


def narration(path: Path) -> list[str]:
    """'file:line: what' for every date and every timing that is not a limit in *path*'s comments and docstrings."""
    found = []
    for line, text in prose(path.read_text(encoding="utf-8")):
        what = [f"date {m.group()}" for m in DATE.finditer(text)]
        what += [f"timing {m.group()!r}" for m in TIMING.finditer(text) if not is_limit(text, m.start())]
        found += [f"{path}:{line}: {w}: {text.strip()}" for w in what]
    return sorted(found)


def test_no_comment_in_scripts_narrates_a_date_or_a_timing() -> None:
    found = [hit for path in sorted(SCRIPTS.rglob("*.py")) for hit in narration(path)]
    assert not found, ("move each figure, with its date and command, to docs/findings.md or bench/README.md and "
                       "keep the reason:\n" + "\n".join(found))


def test_a_planted_date_and_timing_are_named_and_a_timeout_is_not(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text('"""The step.\n\nIt took 2477 s (measured 2026-12-06)."""\n\n'
                       "LIMIT = 5.0  # a run stops after a timeout of 5 s\n"
                       "WAIT = 2  # never before 2 s; every case within 10 minutes\n"
                       "FAST = True  # ~70 µs a symbol\n", encoding="utf-8")
    assert narration(planted) == [
        f"{planted}:3: date 2026-12-06: It took 2477 s (measured 2026-12-06).",
        f"{planted}:3: timing '2477 s': It took 2477 s (measured 2026-12-06).",
        f"{planted}:7: timing '~70 µs': # ~70 µs a symbol",
    ]


def test_a_limit_word_counts_only_in_the_timing_s_own_clause() -> None:
    assert is_limit("stops at a timeout of 120 s", len("stops at a timeout of "))
    assert not is_limit("the timeout is long; the build took 40 s", len("the timeout is long; the build took "))


# Records a reader meets as a row, a plan or a result, besides those a name ending below marks as one.
RECORD_ENDINGS = ("Row", "Plan", "Result", "Outcome", "Finding", "Defect", "Decision", "Attempt", "Comparison")
RECORDS = {"Run", "Ran", "Judged", "SuiteCases", "Built", "Fetched", "FetchedGit", "Prepared", "Timed", "Observation",
           "Merged", "Paired", "Reaped", "WheelName", "Proof", "Analysis", "Sample", "ElfDefect", "BuildTools",
           "Contents", "Claims", "BuildOutline", "Staged", "Wiring"}


def dataclasses_of(path: Path) -> Iterator[tuple[str, bool]]:
    """(name, keyword-only) of every class *path* decorates with @dataclass."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if ast.unparse(target).rpartition(".")[2] == "dataclass":
                keywords = decorator.keywords if isinstance(decorator, ast.Call) else []
                yield node.name, any(k.arg == "kw_only" and ast.unparse(k.value) == "True" for k in keywords)


def is_record(name: str) -> bool:
    return name in RECORDS or name.endswith(RECORD_ENDINGS)


def test_rows_plans_and_results_are_keyword_only_dataclasses() -> None:
    positional = [f"{path.relative_to(SCRIPTS)}: {name}" for path in sorted(SCRIPTS.rglob("*.py"))
                  for name, keyword_only in dataclasses_of(path)
                  if not keyword_only and is_record(name)]
    assert not positional, "give these @dataclass(..., kw_only=True):\n" + "\n".join(positional)


def positional_calls(path: Path, names: set[str]) -> list[str]:
    """'file:line: Name' for every call of one of *names* (bare or as an attribute) with a positional argument, but
    for a call that shows the refusal on purpose (its line ignores mypy's call-arg error)."""
    found = []
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args and "type: ignore[call-arg]" not in lines[node.lineno - 1]:
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in names:
                found.append(f"{path}:{node.lineno}: {called}")
    return found


def test_rows_and_build_plans_are_built_by_keyword() -> None:
    tests = Path(__file__).resolve().parent
    found = [hit for folder in (SCRIPTS, tests) for path in sorted(folder.rglob("*.py"))
             for hit in positional_calls(path, {"Row", "BuildPlan", "RunPlan", "Result"})]
    assert not found, "name each field: Row(component=..., arch=..., check=..., verdict=...):\n" + "\n".join(found)


def test_a_positional_row_and_a_positional_record_are_named(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass LegPlan:\n"
                       "    name: str\n\n\n@dataclass(frozen=True, kw_only=True)\nclass Ran:\n    code: int\n\n\n"
                       "ROW = report.Row('canary', Arch.RISCV64, Check.GATE, Verdict.PASS)\n"
                       "KEYWORDS = Row(component='canary', arch=Arch.RISCV64, check=Check.GATE, verdict=Verdict.PASS)\n"
                       "REFUSED = Row('canary')  # type: ignore[call-arg]\n", encoding="utf-8")
    assert list(dataclasses_of(planted)) == [("LegPlan", False), ("Ran", True)]
    assert [is_record(name) for name in ("LegPlan", "Ran", "Tolerance")] == [True, True, False]
    assert positional_calls(planted, {"Row"}) == [f"{planted}:14: Row"]

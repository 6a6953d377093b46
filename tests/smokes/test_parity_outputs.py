"""Cross-arch output parity: exact and tolerance comparisons, missing and undeclared outputs, the table."""

from __future__ import annotations

import math

import pytest

from crosslane.archs import Arch
from crosslane.report import Verdict
from crosslane.smokes.compare import EXACT, Sample, Tolerance, compare, compare_value, outputs_from_detail, rows, table

REL = Tolerance(rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(("value", "control", "tolerance", "ok", "words"), [
    ([[1.0, 2.5]], [[1.0, 2.5]], EXACT, True, "2 values identical"),
    ([[1.0, 2.5000001]], [[1.0, 2.5]], EXACT, False, "1 of 2 values differ beyond exact"),
    ([1.0, 2.50001], [1.0, 2.5], REL, True, "max rel diff"),
    ([1.0, 2.6], [1.0, 2.5], REL, False, "1 of 2 values differ beyond rel 1e-05, abs 1e-06"),
    ([0.0, 5e-7], [0.0, 0.0], REL, True, "max abs diff 5e-07"),
    ([1.0], [1.0, 2.0], EXACT, False, "length 1 != control's 2"),
    ("abc", "abc", EXACT, True, "identical text: 1 line, 3 characters (exact)"),
    ("abc", "abd", EXACT, False, "line 1: 'abc' != control's 'abd'"),
    ("sum 1\nok\n", "sum 1\nok\n", REL, True, "identical text: 2 lines, 9 characters (exact)"),
    ("sum 1\nok\n", "sum 1\nbad\n", EXACT, False, "line 2: 'ok' != control's 'bad' (2 lines against 2)"),
    ("", "", EXACT, False, "nothing compared: the output is empty in both runs"),
    ([], [], EXACT, False, "nothing compared: [] in both runs"),
    ({"a": [], "b": {}}, {"a": [], "b": {}}, REL, False, "nothing compared"),
    ({"n": [1.0], "s": "x", "t": True}, {"n": [1.0], "s": "x", "t": True}, EXACT, True,
     "1 value and 1 boolean and 1 string identical (exact)"),
    ({"n": [1.0, 2.0], "s": "x"}, {"n": [1.0, 2.0], "s": "x"}, REL, True, "max rel diff 0; 1 string identical"),
    ({"s": "x"}, {"s": "y"}, REL, False, ".s: 'x' != 'y'"),
    ([None], [None], EXACT, True, "1 null identical"),
    ([math.nan], [math.nan], EXACT, True, "identical"),
    ([math.nan], [1.0], REL, False, "differ"),
    ({"a": [1]}, {"b": [1]}, EXACT, False, "keys"),
    ([1, 2], [1.0, 2.0], EXACT, True, "identical"),
    (True, 1, EXACT, False, "True != 1"),
    ([math.inf], [1.0], EXACT, False, "1 of 1 values differ"),
    ([math.inf], [1e308], Tolerance(rel=1.0), False, "1 of 1 values differ"),
    ([math.inf], [math.inf], EXACT, True, "identical"),
    ([-math.inf], [math.inf], Tolerance(abs=1e300), False, "differ"),
    ([2**53 + 1], [2**53], EXACT, False, "1 of 1 values differ beyond exact"),
    ([10**400], [10**400], EXACT, True, "identical"),
    ([10**400], [1.0], REL, False, "differ"),
], ids=["exact-equal", "exact-ulp", "rel-within", "rel-beyond", "abs-floor", "shape", "string", "string-differs",
        "text", "text-line-differs", "text-empty", "empty-list", "empty-structures", "mixed-exact", "mixed-rel",
        "string-member-differs", "null",
        "nan-nan", "nan-number", "keys", "int-float", "bool-int", "inf-number", "inf-number-rel", "inf-inf",
        "inf-minus-inf", "int-past-float", "huge-int", "huge-int-float"])
def test_compare_value(value: object, control: object, tolerance: Tolerance, ok: bool, words: str) -> None:
    got_ok, note = compare_value(value, control, tolerance)
    assert got_ok is ok
    assert words in note


def test_outputs_from_detail() -> None:
    assert outputs_from_detail('{"onnxruntime": "1.21", "outputs": {"add": [1]}}') == {"add": [1]}
    assert outputs_from_detail("prefix {\"outputs\": {\"x\": 1}}") == {"x": 1}
    assert outputs_from_detail("not json") is None
    assert outputs_from_detail('{"outputs": [1]}') is None
    assert outputs_from_detail("{broken") is None


def test_compare_rows_and_table() -> None:
    control = Sample(arch=Arch.AMD64, profile="max", outputs={"add": [1.0], "mlp": [1.0]})
    samples = [Sample(arch=Arch.RISCV64, profile="rvv128", outputs={"add": [1.0], "mlp": [1.000001]}),
               Sample(arch=Arch.RISCV64, profile="rvv512", outputs={"add": [1.5], "extra": 1}),
               ]
    comparisons = compare(samples, control, {"add": EXACT, "mlp": REL})
    notes = {(c.sample.profile, c.output): (c.ok, c.note) for c in comparisons}
    assert notes[("rvv128", "add")][0] and notes[("rvv128", "mlp")][0]
    assert notes[("rvv512", "add")][0] is False
    assert notes[("rvv512", "mlp")] == (False, "missing from this run")
    assert notes[("rvv512", "extra")] == (False, "output not declared (no tolerance stated)")
    verdicts = {r.label: r.verdict for r in rows("onnxruntime", comparisons)}
    assert verdicts == {"parity@rvv128": Verdict.PASS, "parity@rvv512": Verdict.FAIL}
    text = table(comparisons, control)
    assert text.splitlines()[0].split() == ["run", "output", "tolerance", "vs", "control", "verdict", "note"]
    assert "riscv64@rvv512  add" in text and "amd64@max" in text


def test_control_lacking_an_output() -> None:
    control = Sample(arch=Arch.AMD64, profile="max", outputs={})
    (comparison,) = compare([Sample(arch=Arch.ARM64, profile="max", outputs={"add": [1]})], control, {"add": EXACT})
    assert not comparison.ok and "control amd64@max lacks it" in comparison.note


def test_a_run_with_no_outputs_at_all_is_no_match() -> None:
    control = Sample(arch=Arch.AMD64, profile="max", outputs={})
    (comparison,) = compare([Sample(arch=Arch.RISCV64, profile="rvv128", outputs={})], control, {})
    assert not comparison.ok and comparison.note == "nothing compared: no output declared and none reported"
    [row] = rows("demo", [comparison])
    assert row.verdict is Verdict.FAIL

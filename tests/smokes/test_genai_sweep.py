"""The genai smoke's VLEN sweep: which profiles run the payload in full, which its short form, and what the short
runs are held to (the reference's first tokens, the default profile's first guided tokens, the control's first)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.gates.vector_code import VectorCode
from crosslane.log import Log
from crosslane.process.runner import Result, Runner
from crosslane.report import Verdict
from crosslane.smokes import genai, payload, sentinel, wheel_install

CFG = config_mod.load(Path(__file__).resolve().parents[2] / "versions.toml")
RISCV = CFG.arches[Arch.RISCV64]
ARMED = {"GENAI_EXPECTED_TOKENS": json.dumps(list(range(10, 26))), "GENAI_NEW_TOKENS": "16",
         "GENAI_CONSTRAINED": json.dumps({"kind": "regex", "data": "x", "prompt": "p", "max_tokens": 20})}
SCALAR = [VectorCode(Path("libonnxruntime-genai.so")), VectorCode(Path("libonnxruntime.so.1.23"))]


def names(profiles: Sequence[Profile]) -> list[str]:
    return [p.name for p in profiles]


def test_scalar_code_runs_the_wider_vlens_short_and_the_default_and_novector_in_full() -> None:
    sweep = genai.plan_sweep(Arch.RISCV64, RISCV, RISCV.profiles, ARMED, SCALAR)
    assert names(sweep.full) == ["novector", "rvv128"] and names(sweep.short) == ["rvv256", "rvv512"]
    assert sweep.evidence == "no RVV instruction in the 2 ELF files of its site"


@pytest.mark.parametrize("scanned", [
    [VectorCode(Path("a.so")), VectorCode(Path("b.so"), instructions=4)],
    [VectorCode(Path("a.so")), VectorCode(Path("b.so"), scanned=False, why="corrupt ELF (ELFError)")],
    [VectorCode(Path("x86.so"), scanned=False, why="not RISC-V")],
    [],
], ids=["vector-code", "unreadable", "not-risc-v", "nothing-scanned"])
def test_every_profile_runs_in_full_without_proof_that_the_code_is_scalar(scanned: list[VectorCode]) -> None:
    sweep = genai.plan_sweep(Arch.RISCV64, RISCV, RISCV.profiles, ARMED, scanned)
    assert names(sweep.full) == names(RISCV.profiles) and sweep.short == () and sweep.evidence == ""


def test_every_profile_runs_in_full_without_a_reference_or_the_default_profile() -> None:
    unarmed = genai.plan_sweep(Arch.RISCV64, RISCV, RISCV.profiles, {}, SCALAR)
    assert unarmed.short == ()
    chosen = [p for p in RISCV.profiles if p.name in ("rvv256", "rvv512")]  # --cpu: no full run to meet
    assert genai.plan_sweep(Arch.RISCV64, RISCV, chosen, ARMED, SCALAR).short == ()
    amd64 = CFG.arches[Arch.AMD64]
    assert genai.plan_sweep(Arch.AMD64, amd64, amd64.profiles, ARMED, SCALAR).short == ()


def attempt(profile: Profile, verdict: Verdict, outputs: dict[str, object]) -> payload.Attempt:
    outcome = sentinel.Outcome(verdict=verdict, reason="", state="OK", detail=json.dumps({"outputs": outputs}))
    return payload.Attempt(arch=Arch.RISCV64, profile=profile, outcome=outcome,
                           result=Result(argv=("q",), returncode=0, output="", seconds=1.0), timeout=9.0)


def run_sweep(monkeypatch: pytest.MonkeyPatch, default_verdict: Verdict, guided: object
              ) -> tuple[list[payload.Attempt], list[payload.Attempt], list[tuple[list[str], dict[str, str]]]]:
    seen: list[tuple[list[str], dict[str, str]]] = []

    def fake(ctx: Context, arch: Arch, profiles: Sequence[Profile], program: payload.Payload, *,
             base_timeout: float, parallel: bool = True) -> list[payload.Attempt]:
        seen.append((names(profiles), dict(program.env)))
        return [attempt(p, default_verdict if p.name == RISCV.default_profile else Verdict.PASS,
                        {"new_tokens": [1], "constrained_tokens": guided}) for p in profiles]

    monkeypatch.setattr(payload, "run_profiles", fake)
    ctx = Context(CFG, Runner(Log(io.StringIO())))
    sweep = genai.plan_sweep(Arch.RISCV64, RISCV, RISCV.profiles, ARMED, SCALAR)
    program = payload.Payload("GENAI", text="pass", env=dict(ARMED))
    full, short = genai.sweep_runs(ctx, Arch.RISCV64, sweep, program, ARMED, 60.0)
    return full, short, seen


def test_the_short_runs_meet_the_references_and_the_default_profiles_first_tokens(
        monkeypatch: pytest.MonkeyPatch) -> None:
    full, short, seen = run_sweep(monkeypatch, Verdict.PASS, [7, 8, 9, 10, 11, 12])
    assert names([a.profile for a in full]) == ["novector", "rvv128"]
    assert names([a.profile for a in short]) == ["rvv256", "rvv512"]
    (first, whole), (second, shortened) = seen
    assert (first, second) == (["novector", "rvv128"], ["rvv256", "rvv512"])
    assert whole == ARMED
    assert json.loads(shortened["GENAI_EXPECTED_TOKENS"]) == [10, 11]
    assert shortened["GENAI_NEW_TOKENS"] == str(wheel_install.SHORT_TOKENS)
    assert json.loads(shortened["GENAI_CONSTRAINED"])["expected_tokens"] == [7, 8]


@pytest.mark.parametrize(("verdict", "guided"), [(Verdict.FAIL, [7, 8, 9, 10]), (Verdict.PASS, [7, "8"])],
                         ids=["default-failed", "no-token-ids"])
def test_without_the_default_profiles_tokens_the_wider_vlens_run_in_full(
        monkeypatch: pytest.MonkeyPatch, verdict: Verdict, guided: object) -> None:
    full, short, seen = run_sweep(monkeypatch, verdict, guided)
    assert short == [] and names([a.profile for a in full]) == names(RISCV.profiles)
    assert [env for _, env in seen] == [ARMED, ARMED]


def test_a_short_run_is_compared_with_the_controls_first_tokens() -> None:
    ctx = Context(CFG, Runner(Log(io.StringIO())))
    rvv256 = RISCV.profile("rvv256")
    control = payload.Attempt(arch=Arch.AMD64, profile=CFG.arches[Arch.AMD64].profiles[0],
                              outcome=sentinel.Outcome(verdict=Verdict.PASS, reason="", state="OK", detail=json.dumps(
                                  {"outputs": {"new_tokens": [1, 2, 3, 4, 5, 6], "constrained_tokens": [7, 8, 9]}})),
                              result=Result(argv=("q",), returncode=0, output="", seconds=1.0), timeout=9.0)
    tolerances = genai.TOLERANCES
    same = attempt(rvv256, Verdict.PASS, {"new_tokens": [1, 2], "constrained_tokens": [7, 8]})
    [row] = payload.parity(ctx, "g", [same], control, tolerances, first=2)
    assert row.verdict is Verdict.PASS and "against the control's first 2 (a short run)" in row.reason
    other = attempt(rvv256, Verdict.PASS, {"new_tokens": [1, 9], "constrained_tokens": [7, 8]})
    assert payload.parity(ctx, "g", [other], control, tolerances, first=2)[0].verdict is Verdict.FAIL
    longer = attempt(rvv256, Verdict.PASS, {"new_tokens": [1, 2, 3], "constrained_tokens": [7, 8]})
    assert payload.parity(ctx, "g", [longer], control, tolerances, first=2)[0].verdict is Verdict.FAIL
    assert payload.parity(ctx, "g", [same], control, tolerances)[0].verdict is Verdict.FAIL  # the whole control


def test_the_smoke_marks_the_short_runs_and_holds_only_them_to_the_controls_first_tokens(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """genai.run's wiring: the short rows say so, and only their parity rows meet the control's first tokens."""
    from crosslane.gates import compiled, vector_code
    from crosslane.recipes import cmake_wheel
    from crosslane.report import Check, Row
    from crosslane.shipping import folder as shipping_folder
    from crosslane.smokes.genai import Prepared

    ctx = Context(CFG, Runner(Log(io.StringIO())))
    monkeypatch.setattr(genai, "lane_wheel", lambda ctx, arch, component: tmp_path / "w.whl")
    monkeypatch.setattr(genai, "install_site", lambda ctx, arch, component, wheel: Prepared(
        row=Row(component="onnxruntime-genai", arch=arch, check=Check.INSTALL, verdict=Verdict.PASS,
                reason="unpacked"), site=tmp_path, version="0.15.2"))
    monkeypatch.setattr(genai, "generation_env",
                        lambda ctx, model, constrained=None: {**ARMED, "GENAI_MODEL_DIR": str(tmp_path)})
    monkeypatch.setattr(shipping_folder, "elf_files", lambda folder: [Path(v.path) for v in SCALAR])
    monkeypatch.setattr(vector_code, "scan", lambda path: VectorCode(path))
    tokens = {"new_tokens": list(range(10, 26)), "constrained_tokens": [7, 8, 9, 10, 11]}

    def runs(ctx: Context, arch: Arch, profiles: Sequence[Profile], program: payload.Payload, *,
             base_timeout: float, parallel: bool = True) -> list[payload.Attempt]:
        count = int(program.env["GENAI_NEW_TOKENS"])
        return [attempt(p, Verdict.PASS, {k: v[:count] for k, v in tokens.items()}) for p in profiles]

    monkeypatch.setattr(payload, "run_profiles", runs)
    control = payload.Attempt(arch=Arch.AMD64, profile=CFG.arches[Arch.AMD64].profiles[0], outcome=sentinel.Outcome(
        verdict=Verdict.PASS, reason="", state="OK", detail=json.dumps({"outputs": tokens})),
        result=Result(argv=("q",), returncode=0, output="", seconds=1.0), timeout=9.0)
    monkeypatch.setattr(payload, "run", lambda ctx, arch, profile, program, base_timeout: control)
    monkeypatch.setattr(wheel_install, "run", lambda *args, **kwargs: [])
    monkeypatch.setattr(cmake_wheel, "wheels", lambda folder: [])
    monkeypatch.setattr(genai, "loaded_ort", lambda *args, **kwargs: [])
    monkeypatch.setattr(compiled, "parity", lambda *args, **kwargs: [])

    rows = genai.smoke(ctx, Arch.RISCV64, "onnxruntime-genai", RISCV.profiles)
    smoke = {r.profile: r.reason for r in rows if r.check is Check.SMOKE and not r.control}
    parity = {r.profile: r for r in rows if r.check is Check.PARITY}
    assert list(smoke) == list(parity) == ["novector", "rvv128", "rvv256", "rvv512"]
    for name in ("rvv256", "rvv512"):
        assert "the short form (2 tokens against the reference's first, 2 guided against rvv128's full run's)" \
            in smoke[name]
        assert parity[name].verdict is Verdict.PASS and "control's first 2 (a short run)" in parity[name].reason
    for name in ("novector", "rvv128"):
        assert "short form" not in smoke[name] and "short run" not in parity[name].reason
        assert parity[name].verdict is Verdict.PASS and "16 values identical" in parity[name].reason

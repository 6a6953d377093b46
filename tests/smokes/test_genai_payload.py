"""Each tier's decision logic of payloads/genai_payload.py on the host's CPython, with small stand-ins."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

import numpy as np
import pytest

from crosslane.smokes.payloads import genai_payload as gp


def no_metadata(name: str) -> str:
    raise importlib.metadata.PackageNotFoundError(name)


# Tier 1
@pytest.mark.parametrize(("module", "pin", "kind", "words"), [
    (SimpleNamespace(__version__="0.18.0"), "0.18.0", "PROVEN", "== pin"),
    (SimpleNamespace(__version__="0.17.1"), "0.18.0", "DEFECT", "!= pin 0.18.0"),
    (SimpleNamespace(__version__="0.18.0"), "", "UNPROVEN", "NOT ASSERTED"),
    (SimpleNamespace(), "0.18.0", "PROVEN", "(importlib.metadata) == pin"),
], ids=["equal", "differs", "empty-pin", "metadata-fallback"])
def test_tier_version(module: object, pin: str, kind: str, words: str) -> None:
    line = gp.tier_version(module, pin, lambda name: "0.18.0")
    assert line.kind == kind and words in line.text


def test_tier_version_without_any_version() -> None:
    assert gp.tier_version(SimpleNamespace(), "0.18.0", no_metadata).kind == "DEFECT"


# Tier 2
def elf_header(machine: int, order: Literal["little", "big"] = "little") -> bytes:
    data = 1 if order == "little" else 2
    return b"\x7fELF" + bytes([2, data, 1]) + bytes(9) + (3).to_bytes(2, order) + machine.to_bytes(2, order)


@pytest.mark.parametrize(("content", "expected", "kind", "words"), [
    (elf_header(183), 183, "PROVEN", "e_machine 183"),
    (elf_header(62), 183, "DEFECT", "e_machine 62 of"),
    (elf_header(243, "big"), 243, "PROVEN", "e_machine 243"),
    (b"#!/bin/sh\n" + bytes(20), 183, "DEFECT", "not an ELF file"),
    (b"\x7fELF", 183, "DEFECT", "not an ELF file"),
    (elf_header(183), None, "UNPROVEN", "no expected value"),
], ids=["aarch64", "x86-64-on-arm64", "big-endian", "script", "truncated", "no-expectation"])
def test_tier_elf(tmp_path: Path, content: bytes, expected: int | None, kind: str, words: str) -> None:
    path = tmp_path / "ext.so"
    path.write_bytes(content)
    line = gp.tier_elf(str(path), expected)
    assert line.kind == kind and words in line.text


def test_tier_elf_oserror_is_a_defect_line(tmp_path: Path) -> None:
    line = gp.tier_elf(str(tmp_path / "gone.so"), 183)
    assert line.kind == "DEFECT" and "cannot read" in line.text


def test_tier_elf_nothing_loaded() -> None:
    assert gp.tier_elf(None, 183).kind == "DEFECT"


def test_loaded_extension_picks_the_loaded_extension_file() -> None:
    modules = {"onnxruntime_genai": SimpleNamespace(__file__="/s/onnxruntime_genai/__init__.py"),
               "onnxruntime_genai.onnxruntime_genai": SimpleNamespace(
                   __file__="/s/onnxruntime_genai/onnxruntime_genai.cpython-313-aarch64-linux-gnu.so"),
               "other": SimpleNamespace(__file__="/s/other.cpython-313-aarch64-linux-gnu.so")}
    found = gp.loaded_extension(modules, suffixes=(".cpython-313-aarch64-linux-gnu.so", ".so"))
    assert found == "/s/onnxruntime_genai/onnxruntime_genai.cpython-313-aarch64-linux-gnu.so"
    assert gp.loaded_extension({"onnxruntime_genai": SimpleNamespace(__file__="/s/x/__init__.py")}) is None


# Tier 3
class LibraryError(RuntimeError):
    pass


class GoodTensor:
    def __init__(self, array: Any) -> None:
        self.array = np.array(array, copy=True)

    def as_numpy(self) -> Any:
        return self.array

    def shape(self) -> list[int]:
        return list(self.array.shape)


class LossyTensor(GoodTensor):
    def as_numpy(self) -> Any:
        return self.array.astype(np.float16).astype(np.float32)


def config_raising(exc: Exception) -> Any:
    def config(path: str) -> None:
        raise exc
    return config


def stand_in(**overrides: object) -> SimpleNamespace:
    api: dict[str, object] = dict.fromkeys(gp.API, object)
    api.update(Tensor=GoodTensor, Config=config_raising(LibraryError("Error opening /x/genai_config.json")),
               is_cuda_available=lambda: False, is_qnn_available=lambda: True)
    api.update(overrides)
    return SimpleNamespace(**api)


def kinds(lines: list[gp.Line]) -> list[str]:
    return [line.kind for line in lines]


def test_tier_native_all_proven() -> None:
    lines = gp.tier_native(stand_in(), np, "/tmp/not-a-model")
    assert kinds(lines) == ["PROVEN"] * 4
    assert "is_cuda_available=False is_qnn_available=True" in lines[1].text
    assert "rejected by the library: LibraryError" in lines[3].text


@pytest.mark.parametrize(("overrides", "words"), [
    ({"Config": config_raising(TypeError("incompatible constructor arguments"))}, "refused by the binding itself"),
    ({"Config": config_raising(AttributeError("no attribute"))}, "refused by the binding itself"),
    ({"Config": lambda path: None}, "holds no model"),
    ({"Tensor": LossyTensor}, "changed the buffer"),
    ({"Tensor": config_raising(RuntimeError("native crash"))}, "round-trip raised RuntimeError"),
    ({"is_cuda_available": lambda: 1}, "returned 1, not a bool"),
    ({"is_cuda_available": config_raising(RuntimeError("dlopen"))}, "is_cuda_available() raised"),
], ids=["config-typeerror", "config-attributeerror", "config-accepts", "tensor-lossy", "tensor-raises",
        "predicate-not-bool", "predicate-raises"])
def test_tier_native_defects(overrides: dict[str, object], words: str) -> None:
    lines = gp.tier_native(stand_in(**overrides), np, "/tmp/not-a-model")
    assert any(line.kind == "DEFECT" and words in line.text for line in lines), lines


def test_tier_native_missing_api_stops_early() -> None:
    og = stand_in()
    del og.Tokenizer
    lines = gp.tier_native(og, np, "/tmp/x")
    assert kinds(lines) == ["DEFECT"] and "Tokenizer" in lines[0].text


def test_no_predicates_is_a_defect() -> None:
    og = stand_in()
    del og.is_cuda_available, og.is_qnn_available
    assert kinds(gp.check_predicates(og)) == ["DEFECT"]


# Tier 4
@pytest.mark.parametrize(("prompt", "sequence", "kind", "words"), [
    ([1, 2, 3], [1, 2, 3, 9, 4, 7], "PROVEN", "3 new tokens [9, 4, 7]"),
    ([1, 2, 3], [1, 2, 3], "DEFECT", "no new tokens"),
    ([1, 2, 3], [1, 2, 3, 5, 5, 5, 5], "DEFECT", "all 4 new tokens are token 5"),
    ([1, 2], [1, 2, 8], "PROVEN", "1 new tokens [8]"),
], ids=["varied", "zero-new", "one-repeated", "single-token"])
def test_decide_generation(prompt: list[int], sequence: list[int], kind: str, words: str) -> None:
    line = gp.decide_generation(prompt, sequence)
    assert line.kind == kind and words in line.text


@pytest.mark.parametrize(("new", "expected", "kind", "words"), [
    ([9, 4, 7], [9, 4, 7], "PROVEN", "equal to the host reference"),
    ([9, 4, 7], [9, 4, 8], "DEFECT", "from step 2"),
    ([9, 4], [9, 4, 7], "DEFECT", "from step 2"),
    ([3, 4, 7], [9, 4, 7], "DEFECT", "from step 0"),
], ids=["equal", "last-differs", "short", "first-differs"])
def test_decide_generation_against_the_reference(new: list[int], expected: list[int], kind: str,
                                                 words: str) -> None:
    line = gp.decide_generation([1, 2], [1, 2, *new], expected)
    assert line.kind == kind and words in line.text


def test_generation_from_environ() -> None:
    ask = gp.Generation.from_environ({"GENAI_MODEL_DIR": "/m", "GENAI_PROMPT": "Hi", "GENAI_EXPECTED_TOKENS": "[5, 6]"})
    assert (ask.model_dir, ask.prompt, ask.max_new, ask.expected) == ("/m", "Hi", 2, [5, 6])
    plain = gp.Generation.from_environ({"GENAI_MODEL_DIR": "", "GENAI_NEW_TOKENS": "4"})
    assert (plain.model_dir, plain.prompt, plain.max_new, plain.expected) == (None, gp.PROMPT, 4, None)


def test_tier_generate_unarmed_says_so() -> None:
    line, tokens = gp.tier_generate(stand_in(), gp.Generation(None))
    assert line.kind == "SKIP" and "not armed" in line.text and tokens == []


def test_tier_generate_armed_passes_prompt_and_count() -> None:
    seen: list[object] = []

    def run(og: object, folder: str, prompt: str, count: int) -> tuple[list[int], list[int]]:
        seen.extend([folder, prompt, count])
        return [1, 2], [1, 2, 3, 4]
    line, tokens = gp.tier_generate(stand_in(), gp.Generation("/models/m", "Hello", 2), run=run)
    assert line.kind == "PROVEN" and tokens == [3, 4] and seen == ["/models/m", "Hello", 2]


def test_tier_generate_repeated_fails() -> None:
    line, _ = gp.tier_generate(stand_in(), gp.Generation("/models/m"), run=lambda og, d, p, n: ([1], [1, 7, 7, 7]))
    assert line.kind == "DEFECT" and "#594" in line.text


def test_tier_generate_raising_is_a_defect() -> None:
    def broken(og: object, model_dir: str, prompt: str, count: int) -> tuple[list[int], list[int]]:
        raise RuntimeError("Error opening genai_config.json")
    line, _ = gp.tier_generate(stand_in(), gp.Generation("/models/m"), run=broken)
    assert line.kind == "DEFECT" and "raised RuntimeError" in line.text


def test_generate_drives_the_api_in_order() -> None:
    calls: list[str] = []

    class Generator:
        def __init__(self, model: object, params: object) -> None:
            self.steps = 0
            self.tokens: list[int] = []

        def append_tokens(self, tokens: list[int]) -> None:
            self.tokens += tokens

        def is_done(self) -> bool:
            return self.steps >= 3

        def generate_next_token(self) -> None:
            self.steps += 1
            self.tokens.append(100 + self.steps)

        def get_sequence(self, index: int) -> list[int]:
            return self.tokens

    class Params:
        def __init__(self, model: object) -> None:
            pass

        def set_search_options(self, **options: object) -> None:
            calls.append(f"max_length={options['max_length']}")

    og = SimpleNamespace(Model=lambda d: "model", Tokenizer=lambda m: SimpleNamespace(encode=lambda p: [5, 6]),
                         GeneratorParams=Params, Generator=Generator)
    prompt, sequence = gp.generate(og, "/m", max_new=3)
    assert (prompt, sequence, calls) == ([5, 6], [5, 6, 101, 102, 103], ["max_length=5"])


# Verdict and the whole program
def test_verdict() -> None:
    assert gp.verdict([gp.Line("PROVEN", "a"), gp.Line("SKIP", "b")]) == ("OK", "")
    assert gp.verdict([gp.Line("PROVEN", "a"), gp.Line("DEFECT", "b"), gp.Line("DEFECT", "c")]) == ("FAIL", "b; c")


def test_main_when_not_installed_is_skip(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        importlib.metadata.version("onnxruntime-genai")
        pytest.skip("onnxruntime-genai is installed on this host")
    except importlib.metadata.PackageNotFoundError:
        pass
    assert gp.main({}) == 3
    assert capsys.readouterr().out.splitlines()[-1].startswith("GENAI-BIND SKIP: distribution onnxruntime-genai")


MAPS = """\
7f0000000000-7f0000001000 r--p 00000000 08:01 123 /usr/lib/riscv64-linux-gnu/libonnxruntime.so.1.23.2
7f0000001000-7f0000002000 r-xp 00001000 08:01 123 /usr/lib/riscv64-linux-gnu/libonnxruntime.so.1.23.2
7f0000003000-7f0000004000 r--p 00000000 08:01 124 /site/onnxruntime_genai/libonnxruntime-genai.so
7f0000005000-7f0000006000 rw-p 00000000 00:00 0
"""


def test_mapped_libraries_name_the_ort_that_was_loaded() -> None:
    assert gp.mapped_libraries(MAPS) == ["/usr/lib/riscv64-linux-gnu/libonnxruntime.so.1.23.2"]
    assert gp.mapped_libraries("") == []


REGEX = gp.Constrained("regex", r" \(\d{3}\) \d{3}-\d{4}", "My phone number is", 24)


@pytest.mark.parametrize(("text", "kind"), [(" (123) 456-7890", "PROVEN"), (" 1234567890.", "DEFECT")],
                         ids=["satisfied", "ignored-guidance"])
def test_tier5_passes_only_when_the_output_satisfies_the_constraint(text: str, kind: str) -> None:
    line, tokens = gp.tier_constrained(object(), "/model", REGEX, lambda og, d, ask: ([1, 2, 3], text))
    assert line.kind == kind and tokens == [1, 2, 3]
    if kind == "DEFECT":
        assert "ignores set_guidance" in line.text


def test_tier5_unarmed_raising_or_empty() -> None:
    assert gp.tier_constrained(object(), None, REGEX)[0].kind == "SKIP"
    assert gp.tier_constrained(object(), "/m", None)[0].kind == "SKIP"

    def boom(og: object, model_dir: str, ask: gp.Constrained) -> tuple[list[int], str]:
        raise RuntimeError("Unsupported guidance type")

    line, _ = gp.tier_constrained(object(), "/m", REGEX, boom)
    assert line.kind == "DEFECT" and "RuntimeError: Unsupported guidance type" in line.text
    assert gp.tier_constrained(object(), "/m", REGEX, lambda og, d, a: ([], ""))[0].kind == "DEFECT"


def test_tier5_kinds_and_its_environment() -> None:
    schema = gp.Constrained("json_schema", "{}", "p", 8)
    assert gp.satisfies(schema, '{"a": 1}') and not gp.satisfies(schema, "{a")
    assert gp.satisfies(gp.Constrained("lark_grammar", "start: 'x'", "p", 8), "x")
    raw = '{"kind": "regex", "data": "a+", "prompt": "p", "new_tokens": 4}'
    assert gp.Constrained.from_environ({"GENAI_CONSTRAINED": raw}) == \
        gp.Constrained("regex", "a+", "p", 4)
    assert gp.Constrained.from_environ({}) is None
    short = '{"kind": "regex", "data": "a+", "prompt": "p", "new_tokens": 24, "expected_tokens": [4, 5]}'
    assert gp.Constrained.from_environ({"GENAI_CONSTRAINED": short}) == gp.Constrained("regex", "a+", "p", 2, (4, 5))


@pytest.mark.parametrize(("made", "kind"), [([4, 5], "PROVEN"), ([4, 6], "DEFECT")], ids=["equal", "differs"])
def test_a_short_tier5_is_judged_by_the_full_runs_first_tokens(made: list[int], kind: str) -> None:
    ask = gp.Constrained("regex", r" \(\d{3}\) \d{3}-\d{4}", "My phone number is", 2, (4, 5))
    line, tokens = gp.tier_constrained(object(), "/model", ask, lambda og, d, a: (made, " (1"))  # a prefix only
    assert line.kind == kind and tokens == made
    assert ("equal to the full run's first" in line.text) is (kind == "PROVEN")


def test_tiers_4_and_5_share_one_load_of_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gp, "LOADED", {})
    loads: list[str] = []

    class Generator:
        def __init__(self, model: object, params: object) -> None:
            self.tokens: list[int] = []

        def append_tokens(self, tokens: list[int]) -> None:
            self.tokens += tokens

        def is_done(self) -> bool:
            return len(self.tokens) >= 3

        def generate_next_token(self) -> None:
            self.tokens.append(9)

        def get_sequence(self, index: int) -> list[int]:
            return self.tokens

    params = SimpleNamespace(set_search_options=lambda **o: None, set_guidance=lambda kind, data: None)
    def model(folder: str) -> str:
        loads.append(folder)
        return "model"

    og = SimpleNamespace(Model=model,
                         Tokenizer=lambda m: SimpleNamespace(encode=lambda p: [5, 6], decode=lambda t: "x"),
                         GeneratorParams=lambda m: params, Generator=Generator)
    gp.generate(og, "/m", max_new=1)
    gp.generate_constrained(og, "/m", gp.Constrained("regex", "x", "p", 1))
    assert loads == ["/m"]
    other = SimpleNamespace(**vars(og))  # another module's load of the same folder is its own
    gp.generate(other, "/m", max_new=1)
    assert loads == ["/m", "/m"]


def test_bytes_are_proven_only_by_every_profile_passing_every_armed_tier(tmp_path: Path) -> None:
    import io

    from crosslane import config as config_mod
    from crosslane.archs import Arch
    from crosslane.context import Context
    from crosslane.log import Log
    from crosslane.process.runner import Result, Runner
    from crosslane.report import Verdict
    from crosslane.smokes import genai, payload, sentinel, wheel_install

    cfg = config_mod.load(Path(__file__).resolve().parents[2] / "versions.toml")
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    site = tmp_path / "site"
    site.mkdir()
    (site / "lib.so").write_bytes(b"\x7fELF" + b"\0" * 60)
    profiles = cfg.arches[Arch.RISCV64].profiles
    armed = {"GENAI_EXPECTED_TOKENS": "[1, 2]"}

    default = cfg.arches[Arch.RISCV64].default_profile

    def attempts(verdicts: list[Verdict], mine: list[object] | None = None) -> list[payload.Attempt]:
        def detail(profile: str) -> str:  # the default profile's tier-5 tokens are the ones the install test meets
            guided = (mine or [7, 8, 9]) if profile == default else [0]
            return json.dumps({"outputs": {"new_tokens": [1, 2], "constrained_tokens": guided}})
        return [payload.Attempt(arch=Arch.RISCV64, profile=p, outcome=sentinel.Outcome(verdict=v, reason="", state="OK",
                                                                                       detail=detail(p.name)),
                                result=Result(argv=("q",), returncode=0, output="", seconds=1.0), timeout=9.0) for p,
                v in zip(profiles, verdicts, strict=False)]

    every = [Verdict.PASS] * len(profiles)
    proof = genai.proven_bytes(ctx, Arch.RISCV64, site, attempts(every), armed)
    assert len(proof.hashes) == 1 and proof.constrained == ()  # tier 5 not armed: no guided tokens to meet
    guided = genai.proven_bytes(ctx, Arch.RISCV64, site, attempts(every), {**armed, "GENAI_CONSTRAINED": "{}"})
    assert guided.constrained == (7, 8, 9)
    odds: list[list[object]] = [[7, "8", 9], [7, True, 9]]
    for odd in odds:  # not all token ids: no guided tokens at all, not the ids among them
        assert genai.proven_bytes(ctx, Arch.RISCV64, site, attempts(every, odd),
                                  {**armed, "GENAI_CONSTRAINED": "{}"}).constrained == ()
    nothing = wheel_install.Proof()
    assert genai.proven_bytes(ctx, Arch.RISCV64, site, attempts(every), {}) == nothing  # tier 4 not armed
    assert genai.proven_bytes(ctx, Arch.RISCV64, site, attempts(every[:-1]), armed) == nothing  # --cpu one
    assert genai.proven_bytes(ctx, Arch.RISCV64, site, attempts([*every[:-1], Verdict.FAIL]), armed) == nothing

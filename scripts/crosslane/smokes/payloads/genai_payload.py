"""Proves an onnxruntime-genai build works inside the target, tier by tier. stdlib only at import time.

1. version: __version__ (else importlib.metadata) equals GENAI_PIN (empty pin: NOT ASSERTED).
2. ELF: e_machine in the first 20 bytes of the extension file actually *loaded* equals GENAI_EXPECTED_MACHINE.
3. native code runs: the API objects exist, the capability predicates return booleans, a float32 numpy
   buffer round-trips through og.Tensor, and og.Config rejects a folder that is not a model (the library's
   own error; TypeError/AttributeError would mean the binding itself refused the call).
4. generate(): armed only by GENAI_MODEL_DIR; greedy from GENAI_PROMPT for GENAI_NEW_TOKENS tokens. Fails on
   zero new tokens or on all new tokens being one repeated token (the signature of onnxruntime-genai#594);
   with GENAI_EXPECTED_TOKENS (a JSON list: the host's own greedy tokens from the same folder) the new tokens
   must equal it exactly, else the first differing step is named. Unarmed, a SKIP line says so.
5. constrained generate(): armed by GENAI_CONSTRAINED (JSON: kind, data, prompt, new_tokens) with the model of
   tier 4; the guidance genai's set_guidance takes (regex, json_schema, lark_grammar). The decoded new text must
   satisfy the constraint (a regex fully, a JSON schema's output parse as JSON): a build without guidance
   ignores set_guidance silently and generates unconstrained, which fails here. With `expected_tokens` (the
   first tokens a full run made on the same library bytes) it generates that many and must equal them.
   Tiers 4 and 5 share one load of the model.
Every check prints PROVEN/UNPROVEN/DEFECT/SKIP; the last line is GENAI-BIND OK|FAIL|SKIP: ...
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from types import ModuleType
from typing import Any

try:
    from crosslane.smokes.payloads import bindkit
except ImportError:  # run as a program on the target: the driver puts the helpers folder on sys.path
    import bindkit  # type: ignore[no-redef,import-not-found]

NAME = "GENAI"
DISTRIBUTION = "onnxruntime-genai"
MODULE = "onnxruntime_genai"
API = ("Config", "Model", "Generator", "GeneratorParams", "Tokenizer", "Tensor")
ELF_MAGIC = b"\x7fELF"
PROMPT = "The capital of France is"
MAX_NEW_TOKENS = 8
DECODE_SECONDS: list[float] = []  # set by generate(): how long the last generation's decode loop took


@dataclass(frozen=True)
class Line:
    kind: str  # PROVEN, UNPROVEN, DEFECT or SKIP
    text: str

    def __str__(self) -> str:
        return f"{self.kind} {self.text}"


# Tier 1 -----------------------------------------------------------------------------------------------------
def tier_version(module: object, pin: str, metadata_version: Callable[[str], str]) -> Line:
    version = getattr(module, "__version__", None)
    source = "__version__"
    if not isinstance(version, str) or not version:
        try:
            version, source = metadata_version(DISTRIBUTION), "importlib.metadata"
        except importlib.metadata.PackageNotFoundError:
            return Line("DEFECT", "tier 1 version: no __version__ and no installed distribution metadata")
    if not pin:
        return Line("UNPROVEN", f"tier 1 version {version} ({source}): NOT ASSERTED (empty pin)")
    if version != pin:
        return Line("DEFECT", f"tier 1 version {version} ({source}) != pin {pin}")
    return Line("PROVEN", f"tier 1 version {version} ({source}) == pin")


# Tier 2 -----------------------------------------------------------------------------------------------------
def read_e_machine(path: str) -> int:
    """e_machine from an ELF file's first 20 bytes (OSError when unreadable, ValueError when not ELF)."""
    with open(path, "rb") as handle:
        head = handle.read(20)
    if len(head) < 20 or head[:4] != ELF_MAGIC:
        raise ValueError(f"not an ELF file (starts {head[:4]!r})")
    order = {1: "little", 2: "big"}.get(head[5])
    if order is None:
        raise ValueError(f"unknown ELF data encoding {head[5]}")
    return int.from_bytes(head[18:20], order)  # type: ignore[arg-type]


def loaded_extension(modules: Mapping[str, object], package: str = MODULE,
                     suffixes: Iterable[str] = tuple(importlib.machinery.EXTENSION_SUFFIXES)) -> str | None:
    """The file of the extension module of *package* that is loaded now (from sys.modules)."""
    endings = tuple(suffixes)
    for name in sorted(modules):
        if name == package or name.startswith(package + "."):
            where = getattr(modules[name], "__file__", None) or ""
            if where.endswith(endings):
                return str(where)
    return None


def tier_elf(path: str | None, expected: int | None, reader: Callable[[str], int] = read_e_machine) -> Line:
    if path is None:
        return Line("DEFECT", f"tier 2 ELF: no loaded {MODULE} extension module in sys.modules")
    try:
        machine = reader(path)
    except OSError as exc:
        return Line("DEFECT", f"tier 2 ELF: cannot read {path}: {exc.strerror or exc}")
    except ValueError as exc:
        return Line("DEFECT", f"tier 2 ELF: {path}: {exc}")
    if expected is None:
        return Line("UNPROVEN", f"tier 2 ELF: e_machine {machine} of {path}, no expected value given")
    if machine != expected:
        return Line("DEFECT", f"tier 2 ELF: e_machine {machine} of {path} != expected {expected}")
    return Line("PROVEN", f"tier 2 ELF: e_machine {machine} of the loaded {path}")


# Tier 3 -----------------------------------------------------------------------------------------------------
def check_api(og: object) -> list[Line]:
    missing = [name for name in API if not hasattr(og, name)]
    if missing:
        return [Line("DEFECT", f"tier 3 API objects missing: {', '.join(missing)}")]
    return [Line("PROVEN", f"tier 3 API objects present: {', '.join(API)}")]


def check_predicates(og: object) -> list[Line]:
    names = sorted(n for n in dir(og) if n.startswith("is_") and n.endswith("_available"))
    if not names:
        return [Line("DEFECT", "tier 3 no is_*_available capability predicates")]
    results, lines = [], []
    for name in names:
        try:
            value = getattr(og, name)()
        # A predicate that raises out of native code is a defect of the build, whatever the exception type.
        except Exception as exc:
            lines.append(Line("DEFECT", f"tier 3 {name}() raised {type(exc).__name__}: {exc}"))
            continue
        if not isinstance(value, bool):
            lines.append(Line("DEFECT", f"tier 3 {name}() returned {value!r}, not a bool"))
        else:
            results.append(f"{name}={value}")
    if results:
        lines.append(Line("PROVEN", f"tier 3 capability predicates ran: {' '.join(results)}"))
    return lines


def check_tensor(og: Any, np: Any) -> Line:
    original = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5) / np.float32(7)
    try:
        tensor = og.Tensor(original)
        back = np.asarray(tensor.as_numpy())
        shape = list(tensor.shape())
    except Exception as exc:
        return Line("DEFECT", f"tier 3 Tensor round-trip raised {type(exc).__name__}: {exc}")
    if back.dtype != np.float32 or shape != [3, 4] or back.tobytes() != original.tobytes():
        return Line("DEFECT", f"tier 3 Tensor round-trip changed the buffer: dtype {back.dtype}, shape {shape}")
    return Line("PROVEN", "tier 3 a float32 [3, 4] numpy buffer round-tripped through Tensor bit for bit")


def check_config_rejects(og: Any, folder: str) -> Line:
    try:
        og.Config(folder)
    except (TypeError, AttributeError) as exc:
        return Line("DEFECT", f"tier 3 Config({folder!r}) refused by the binding itself: {type(exc).__name__}: {exc}")
    # Anything else is the library's own error about the missing model, which is what this check wants.
    except Exception as exc:
        return Line("PROVEN", f"tier 3 Config on a non-model folder rejected by the library: "
                              f"{type(exc).__name__}: {' '.join(str(exc).split())}")
    return Line("DEFECT", f"tier 3 Config accepted {folder}, which holds no model")


def tier_native(og: Any, np: Any, scratch: str) -> list[Line]:
    lines = check_api(og)
    if lines[0].kind == "DEFECT":
        return lines
    return [*lines, *check_predicates(og), check_tensor(og, np), check_config_rejects(og, scratch)]


# Tier 4 -----------------------------------------------------------------------------------------------------
def decide_generation(prompt: list[int], sequence: list[int], expected: list[int] | None = None) -> Line:
    new = list(sequence[len(prompt):])
    if not new:
        return Line("DEFECT", f"tier 4 generate() produced no new tokens after {len(prompt)} prompt tokens")
    if len(new) > 1 and len(set(new)) == 1:
        return Line("DEFECT", f"tier 4 all {len(new)} new tokens are token {new[0]} "
                              "(the signature of onnxruntime-genai#594)")
    if expected is None:
        return Line("PROVEN", f"tier 4 generate() produced {len(new)} new tokens {new} (no reference to compare)")
    if new != expected:
        pairs = zip(new, expected, strict=False)
        step = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(new), len(expected)))
        return Line("DEFECT", f"tier 4 new tokens {new} differ from the host reference {expected} from step {step}")
    return Line("PROVEN", f"tier 4 generate() produced {len(new)} new tokens {new}, equal to the host reference")


LOADED: dict[str, tuple[Any, Any, Any]] = {}  # model folder -> (the module, og.Model, og.Tokenizer)


def loaded(og: Any, model_dir: str) -> tuple[Any, Any]:
    """The model and its tokenizer, loaded on first use: tiers 4 and 5 share one load (under qemu a load is a large
    part of the run, and loading it twice proves nothing the first load did not). Only a load by this
    same module is reused."""
    found = LOADED.get(model_dir)
    if found is None or found[0] is not og:
        model = og.Model(model_dir)
        found = LOADED[model_dir] = (og, model, og.Tokenizer(model))
    return found[1], found[2]


def generate(og: Any, model_dir: str, prompt: str = PROMPT,
             max_new: int = MAX_NEW_TOKENS) -> tuple[list[int], list[int]]:
    model, tokenizer = loaded(og, model_dir)
    tokens = [int(t) for t in tokenizer.encode(prompt)]
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(tokens) + max_new, do_sample=False)
    generator = og.Generator(model, params)
    start = time.perf_counter()
    generator.append_tokens(tokens)
    while not generator.is_done():
        generator.generate_next_token()
    # The decode time alone (prompt + new tokens, no model load): the bench's tokens per second.
    DECODE_SECONDS[:] = [time.perf_counter() - start]
    return tokens, [int(t) for t in generator.get_sequence(0)]


@dataclass(frozen=True)
class Generation:
    """What tier 4 was asked to do, from the environment."""

    model_dir: str | None
    prompt: str = PROMPT
    max_new: int = MAX_NEW_TOKENS
    expected: list[int] | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Generation:
        expected = None
        if environ.get("GENAI_EXPECTED_TOKENS"):
            expected = [int(t) for t in json.loads(environ["GENAI_EXPECTED_TOKENS"])]
        count = environ.get("GENAI_NEW_TOKENS", "")
        max_new = int(count) if count.isdigit() else len(expected) if expected else MAX_NEW_TOKENS
        return cls(environ.get("GENAI_MODEL_DIR") or None, environ.get("GENAI_PROMPT") or PROMPT, max_new,
                   expected)


def tier_generate(og: Any, ask: Generation,
                  run: Callable[[Any, str, str, int], tuple[list[int], list[int]]] = generate
                  ) -> tuple[Line, list[int]]:
    if not ask.model_dir:
        return Line("SKIP", "tier 4 generate(): not armed (set GENAI_MODEL_DIR to a model folder)"), []
    try:
        prompt, sequence = run(og, ask.model_dir, ask.prompt, ask.max_new)
    # Loading a model and generating run native code end to end; any exception is this tier's defect.
    except Exception as exc:
        return Line("DEFECT", f"tier 4 generate() with {ask.model_dir} raised {type(exc).__name__}: {exc}"), []
    return decide_generation(prompt, sequence, ask.expected), list(sequence[len(prompt):])


@dataclass(frozen=True)
class Constrained:
    kind: str
    data: str
    prompt: str
    new_tokens: int
    # The first tokens a full run made under this guidance on the same library bytes: a short run must equal them
    # (its text is only a prefix of an output, which no constraint can judge).
    expected: tuple[int, ...] | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Constrained | None:
        raw = environ.get("GENAI_CONSTRAINED")
        if not raw:
            return None
        spec = json.loads(raw)
        expected = spec.get("expected_tokens")
        return cls(str(spec["kind"]), str(spec["data"]), str(spec["prompt"]),
                   len(expected) if expected else int(spec["new_tokens"]),
                   tuple(int(t) for t in expected) if expected else None)


def generate_constrained(og: Any, model_dir: str, ask: Constrained) -> tuple[list[int], str]:
    model, tokenizer = loaded(og, model_dir)
    tokens = [int(t) for t in tokenizer.encode(ask.prompt)]
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=len(tokens) + ask.new_tokens, do_sample=False)
    params.set_guidance(ask.kind, ask.data)
    generator = og.Generator(model, params)
    generator.append_tokens(tokens)
    while not generator.is_done():
        generator.generate_next_token()
    new = [int(t) for t in generator.get_sequence(0)][len(tokens):]
    return new, str(tokenizer.decode(new))


def satisfies(ask: Constrained, text: str) -> bool:
    match ask.kind:
        case "regex":
            return re.fullmatch(ask.data, text) is not None
        case "json_schema":
            try:
                json.loads(text)
            except ValueError:
                return False
            return True
        case _:  # a Lark grammar: genai's own parser is the judge; a non-empty output is what can be checked here
            return bool(text.strip())


def tier_constrained(og: Any, model_dir: str | None, ask: Constrained | None,
                     run: Callable[[Any, str, Constrained], tuple[list[int], str]] = generate_constrained
                     ) -> tuple[Line, list[int]]:
    if ask is None or not model_dir:
        return Line("SKIP", "tier 5 constrained generate(): not armed (GENAI_CONSTRAINED with a model)"), []
    try:
        new, text = run(og, model_dir, ask)
    # Guidance runs llguidance's Rust through genai's C++; any exception is this tier's defect.
    except Exception as exc:
        return Line("DEFECT", f"tier 5 constrained generate() raised {type(exc).__name__}: {exc}"), []
    if not new:
        return Line("DEFECT", "tier 5 constrained generate() produced no new tokens"), []
    if ask.expected is not None:
        if tuple(new) != ask.expected:
            return Line("DEFECT", f"tier 5 {len(new)} new tokens {new} under the {ask.kind} differ from the full "
                                  f"run's first {list(ask.expected)}"), new
        return Line("PROVEN", f"tier 5 {len(new)} new tokens {text!r} under the {ask.kind} {ask.data!r}, equal to "
                              "the full run's first"), new
    if not satisfies(ask, text):
        return Line("DEFECT", f"tier 5 output {text!r} does not satisfy the {ask.kind} {ask.data!r} (a build without "
                              "guidance ignores set_guidance and generates unconstrained)"), new
    return Line("PROVEN", f"tier 5 {len(new)} new tokens {text!r} satisfy the {ask.kind} {ask.data!r}"), new


def generation_summary(ask: Generation, new_tokens: list[int]) -> str:
    if not ask.model_dir:
        return "not armed"
    if ask.expected is not None:
        return f"{len(new_tokens)} tokens equal to the host reference"
    return f"{len(new_tokens)} tokens (no reference)"


def mapped_libraries(maps_text: str, prefix: str = "libonnxruntime.so") -> list[str]:
    """Files mapped into this process whose name starts with *prefix* (from /proc/self/maps): which ONNX
    Runtime the genai library really loaded, for the provenance check on the host."""
    found: list[str] = []
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and PurePosixPath(parts[5]).name.startswith(prefix) and parts[5] not in found:
            found.append(parts[5])
    return found


def read_maps() -> str:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


# The program ------------------------------------------------------------------------------------------------
def verdict(lines: Iterable[Line]) -> tuple[str, str]:
    defects = [line.text for line in lines if line.kind == "DEFECT"]
    if defects:
        return "FAIL", "; ".join(defects)
    return "OK", ""


def expected_machine(environ: Mapping[str, str]) -> int | None:
    value = environ.get("GENAI_EXPECTED_MACHINE", "")
    return int(value) if value.isdigit() else None


def main(environ: Mapping[str, str]) -> int:
    og = bindkit.require(NAME, DISTRIBUTION, MODULE)
    if isinstance(og, int):
        return og
    assert isinstance(og, ModuleType)
    lines = [tier_version(og, environ.get("GENAI_PIN", ""), importlib.metadata.version)]
    print(lines[-1], flush=True)
    extension = loaded_extension(sys.modules)
    lines.append(tier_elf(extension, expected_machine(environ)))
    print(lines[-1], flush=True)
    numpy = bindkit.import_distribution("numpy", "numpy")
    if numpy.module is None:
        lines.append(Line("DEFECT", f"tier 3 needs numpy: {numpy.reason}"))
    else:
        with tempfile.TemporaryDirectory(prefix="genai-not-a-model-") as scratch:
            lines += tier_native(og, numpy.module, scratch)
    for line in lines[2:]:
        print(line, flush=True)
    ask = Generation.from_environ(environ)
    line, new_tokens = tier_generate(og, ask)
    lines.append(line)
    print(line, flush=True)
    constrained = Constrained.from_environ(environ)
    line, constrained_tokens = tier_constrained(og, ask.model_dir, constrained)
    lines.append(line)
    print(line, flush=True)
    state, problems = verdict(lines)
    if state != "OK":
        return bindkit.finish(NAME, state, problems)
    version = getattr(og, "__version__", "")
    ort = mapped_libraries(read_maps())
    outputs: dict[str, list[int]] = {"new_tokens": new_tokens}
    if constrained_tokens:
        outputs["constrained_tokens"] = constrained_tokens
    detail = {"version": version, "e_machine": expected_machine(environ),
              "extension": PurePosixPath(extension or "").name, "ort_library": ort[0] if ort else "",
              "generate": generation_summary(ask, new_tokens), "outputs": outputs}
    if constrained is not None and constrained_tokens:
        detail["constrained"] = (f"{len(constrained_tokens)} tokens satisfy the {constrained.kind} (tier 5)"
                                 if constrained.expected is None else
                                 f"{len(constrained_tokens)} tokens under the {constrained.kind} equal to the full "
                                 "run's first (tier 5)")
    if new_tokens and DECODE_SECONDS and DECODE_SECONDS[0] > 0:
        detail["tokens_per_second"] = round(len(new_tokens) / DECODE_SECONDS[0], 3)
    return bindkit.finish(NAME, "OK", json.dumps(detail, sort_keys=True))


if __name__ == "__main__":
    sys.exit(main(os.environ))

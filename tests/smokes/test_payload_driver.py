"""The payload driver's pure parts: emulation-aware timeouts, the environment handed to qemu, report text;
the guest root with its /proc/cpuinfo; the ORT models; sysroot-provided components."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crosslane import config as config_mod
from crosslane.archs import Arch
from crosslane.config import Profile, SysrootPackage
from crosslane.contract import Request
from crosslane.guest import guest_root
from crosslane.guest.sysroot import Sysroot
from crosslane.recipes import provided
from crosslane.smokes import compare, ort_models, payload
from crosslane_helpers import probes

RVV512 = Profile("rvv512", "rv64,v=true,vlen=512,elen=64")


@pytest.mark.parametrize(("arch", "profile", "host", "expected"), [
    (Arch.AMD64, Profile("max", "max"), "x86_64", 60.0),
    (Arch.ARM64, Profile("max", "max"), "x86_64", 60.0 * payload.FOREIGN_ISA),
    (Arch.RISCV64, Profile("novector", "rv64,v=false"), "x86_64", 60.0 * payload.FOREIGN_ISA),
    (Arch.RISCV64, RVV512, "x86_64", 60.0 * payload.FOREIGN_ISA * 3),
    (Arch.RISCV64, RVV512, "riscv64", 60.0 * 3),
], ids=["control", "arm64", "rv-novector", "rv-rvv512", "rv-native-rvv512"])
def test_timeout_for(arch: Arch, profile: Profile, host: str, expected: float) -> None:
    assert payload.timeout_for(60.0, arch, profile, host=host) == pytest.approx(expected)


def test_environment_by_file_and_by_text(tmp_path: Path) -> None:
    by_file = payload.environment(payload.Payload("X", file=tmp_path / "p.py", pythonpath=(tmp_path / "a", tmp_path)))
    assert by_file["CROSSLANE_PAYLOAD_FILE"] == str(tmp_path / "p.py")
    assert by_file["PYTHONPATH"] == f"{tmp_path / 'a'}:{tmp_path}"
    assert Path(by_file["CROSSLANE_PAYLOAD_HELPERS"], "bindkit.py").is_file()
    by_text = payload.environment(payload.Payload("X", text="print(1), print(2)", env={"K": "v,w"}))
    assert by_text["CROSSLANE_PAYLOAD"] == "print(1), print(2)" and by_text["K"] == "v,w"
    assert "PYTHONPATH" not in by_text and "CROSSLANE_PAYLOAD_FILE" not in by_text


def test_summary_hides_output_values() -> None:
    detail = json.dumps({"onnxruntime": "1.21", "outputs": {"add": [1.0] * 100, "mlp": [2.0]}})
    assert payload.summary(detail) == "onnxruntime=1.21; outputs: add, mlp"
    assert payload.summary("plain words") == "plain words"
    deep = '{"a":' * 100_000
    assert payload.summary(deep).endswith("…")  # nested too deeply to read: shown as text, cut
    assert compare.outputs_from_detail(deep) is None
    assert payload.summary("x" * 400).endswith("…")


def fake_sysroot(tmp_path: Path, arch: Arch) -> Sysroot:
    root = tmp_path / f"sysroot-{arch}"
    for name in ("usr/bin", "etc"):
        (root / name).mkdir(parents=True)
    (root / "lib").symlink_to("usr/lib")
    return Sysroot(arch, root, "k")


def test_guest_root_for_arm64_adds_a_guest_cpuinfo(tmp_path: Path) -> None:
    sysroot = fake_sysroot(tmp_path, Arch.ARM64)
    root = guest_root.ensure(tmp_path / "build", sysroot)
    assert root != sysroot.path
    cpuinfo = (root / "proc" / "cpuinfo").read_text()
    assert cpuinfo.startswith("processor\t: 0\n") and "CPU implementer\t: 0x41" in cpuinfo
    assert (root / "usr").resolve() == (sysroot.path / "usr").resolve()
    assert (root / "lib").is_symlink()
    assert guest_root.ensure(tmp_path / "build", sysroot) == root


def test_guest_root_elsewhere_is_the_sysroot(tmp_path: Path) -> None:
    sysroot = fake_sysroot(tmp_path, Arch.RISCV64)
    assert guest_root.ensure(tmp_path / "build", sysroot) == sysroot.path


def test_ort_models(tmp_path: Path) -> None:
    import onnx

    folder = ort_models.write(tmp_path / "models")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [g["name"] for g in manifest["graphs"]] == ["add", "mlp"]
    for graph in manifest["graphs"]:
        model = onnx.load(str(folder / graph["file"]))
        onnx.checker.check_model(model)
        assert model.ir_version == ort_models.IR_VERSION
        assert model.opset_import[0].version == ort_models.OPSET
    mlp = onnx.load(str(folder / "mlp.onnx"))
    assert [n.op_type for n in mlp.graph.node] == ["MatMul", "Add", "Relu", "MatMul", "Add"]
    assert ort_models.values(4, 0.37) == ort_models.values(4, 0.37)


def test_sysroot_package_version() -> None:
    packages = [{"package": "python3-onnxruntime", "version": "1.21.0+dfsg-1"}]
    assert provided.package_version(packages, "python3-onnxruntime") == "1.21.0+dfsg-1"
    assert provided.package_version(packages, "python3-numpy") is None
    assert provided.package_version([], "x") is None


def test_config_has_the_ort_and_genai_components(cfg: config_mod.Config) -> None:
    ort = cfg.components["onnxruntime"]
    source = ort.sources[0]
    assert isinstance(source, SysrootPackage) and source.package == "python3-onnxruntime"
    assert ort.smoke is not None and ort.smoke.kind == "ort"
    genai = cfg.components["onnxruntime-genai"]
    assert genai.smoke is not None and genai.smoke.kind == "genai"


@pytest.mark.parametrize(("packages", "verdict", "words"), [
    ([{"package": "python3-onnxruntime", "version": "1.21.0+dfsg-1", "sha256": "0" * 64}], "PASS",
     "provided by the sysroot (Debian python3-onnxruntime 1.21.0+dfsg-1)"),
    ([], "FAIL", "python3-onnxruntime is not in the riscv64 sysroot; add it to sysroot.packages"),
], ids=["present", "absent"])
def test_sysroot_package_build_row(cfg: config_mod.Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   packages: list[dict[str, str]], verdict: str, words: str) -> None:
    from crosslane.context import Context
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    root = tmp_path / "sysroot"
    (root / "usr/include/onnxruntime").mkdir(parents=True)
    (root / "usr/lib/riscv64-linux-gnu").mkdir(parents=True)
    (root / "crosslane-manifest.json").write_text(json.dumps({"packages": packages}))
    ctx = Context(cfg, Runner(Log()), _sysroots={Arch.RISCV64: Sysroot(Arch.RISCV64, root, "k")})
    built = provided.run(Request(ctx=ctx, arch=Arch.RISCV64, component="onnxruntime", probes=probes(ctx)))
    [row] = built.rows
    assert built.payload.gated == () and built.payload.build is row
    assert row.verdict.value == verdict and words in row.reason
    record = tmp_path / "build" / "riscv64" / "onnxruntime" / "install" / provided.PROVIDED
    assert record.is_file() is (verdict == "PASS")
    if verdict == "PASS":  # the links make the install folder ORT_HOME: the chain's headers and libraries
        assert (record.parent / "include").resolve() == (root / "usr/include/onnxruntime").resolve()
        assert (record.parent / "lib").resolve() == (root / "usr/lib/riscv64-linux-gnu").resolve()
    assert cfg.components["onnxruntime"].recipe == "provided" and cfg.components["canary"].recipe == "cmake"


def test_each_run_row_carries_its_own_time_not_the_smokes() -> None:
    """Runs go side by side: the row of each says what that run cost (its own wall and CPU seconds), and the smoke's
    total, filled in for rows without a time of their own, does not replace it (every genai@profile row read 452.3 s,
    the whole smoke's, in a main job)."""
    from crosslane import report
    from crosslane.process.runner import Result
    from crosslane.report import Verdict
    from crosslane.smokes import sentinel

    rows = [payload.row("genai", payload.Attempt(arch=Arch.RISCV64, profile=Profile(name, "rv64"),
                                                 outcome=sentinel.Outcome(verdict=Verdict.PASS, reason="ok"),
                                                 result=Result(argv=("qemu",), returncode=0, output="", seconds=seconds,
                                                               cpu=cpu), timeout=60.0), "genai")
            for name, seconds, cpu in (("rvv128", 41.5, 40.2), ("rvv512", 97.0, 95.1))]
    timed = report.timed(rows, 452.3, 719.1)
    assert [(r.profile, r.wall, r.cpu) for r in timed] == [("rvv128", 41.5, 40.2), ("rvv512", 97.0, 95.1)]

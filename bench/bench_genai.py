"""The onnxruntime-genai lane: a cold build through crosslane against the same commands by hand (ccache off
for both), a no-op rebuild against the cold build, and tier-4 generate() tokens per second per arch and CPU
profile under qemu-user (against amd64's, also under qemu; no goal yet).

The build half needs the sources staged (invoke sources --arch riscv64 --component onnxruntime-genai) and
takes ~20 minutes on 2 cores; the smoke half needs the lanes built (nox -s build-<arch>).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from functools import partial
from pathlib import Path

from common import BIN, ROOT, Measure, invoke, median_of, run, run_all, timed

COMPONENT = "onnxruntime-genai"
COLD = {"CCACHE_DISABLE": "1", "CROSSLANE_OFFLINE": "1"}
RATE = re.compile(r"tokens_per_second=([0-9.]+)")


def hand_commands(built: Path, fresh: Path) -> list[list[str]]:
    """configure, build, install, pack and retag: what crosslane ran, pointed at another build folder."""
    stamp = json.loads((built / f"riscv64/{COMPONENT}/.crosslane-stamp.json").read_text())
    inputs = stamp["inputs"]
    configure = [arg.replace(str(built), str(fresh)) for arg in inputs["configure"]]
    cmake = configure[0]
    build_dir = Path(configure[configure.index("-B") + 1])
    tag, platform = inputs["wheel"]["python_tag"], inputs["wheel"]["platform"]
    work = fresh / "dist"
    return [configure, [cmake, "--build", str(build_dir), "--parallel"], [cmake, "--install", str(build_dir)],
            ["env", f"_PYTHON_HOST_PLATFORM={platform.replace('_', '-', 1)}", sys.executable, "-m", "pip", "wheel",
             "--no-deps", "--no-build-isolation", "--no-index", "-w", str(work), str(build_dir / "wheel")],
            ["sh", "-c", (f'{sys.executable} -m wheel tags --remove --python-tag {tag} --abi-tag {tag} '
                          f'--platform-tag {platform} "{work}"/*.whl')]]


def build_measures() -> list[Measure]:
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-genai-") as tmp:
        ours, hand = Path(tmp) / "ours", Path(tmp) / "hand"
        env = {**COLD, "CROSSLANE_BUILD_DIR": str(ours)}
        cold = timed(lambda: invoke("build", "--arch", "riscv64", "--component", COMPONENT, env=env))
        print(f"   (crosslane cold build: {cold:.1f}s)", flush=True)
        noop = median_of(3, lambda: invoke("build", "--arch", "riscv64", "--component", COMPONENT, env=env))
        # What crosslane prepared before compiling, as it left it: the toolchain file and target-Python wrapper,
        # the ORT_HOME links, the patched source copy. The build and install folders are the by-hand run's own.
        hand.mkdir()
        run(["cp", "-a", ours / "riscv64", hand / "riscv64"])
        run(["rm", "-rf", hand / "riscv64" / COMPONENT / "build", hand / "riscv64" / COMPONENT / "install"])
        commands = hand_commands(ours, hand)
        by_hand = timed(lambda: run_all(commands, COLD))
    return [Measure("genai cold build riscv64: crosslane vs the same commands by hand", cold, by_hand, "s",
                    "<= 1.05x"),
            Measure("genai no-op rebuild vs its cold build", noop, cold, "s", "<= 1 %")]


def rates(arch: str) -> dict[str, float]:
    """Decode tokens/s per CPU profile of *arch*, one profile at a time (not sharing the cores)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from crosslane import config
    from crosslane.archs import Arch

    rows = []
    for profile in config.load(ROOT / "versions.toml").arches[Arch(arch)].profiles:
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "smoke.json"
            run([BIN / "invoke", "smoke", "--arch", arch, "--component", COMPONENT, "--cpu", profile.name,
                 "--json", report])
            rows += json.loads(report.read_text())
    found = {}
    for row in rows:
        match = RATE.search(row["reason"])
        if match and row["component"] == COMPONENT and row["arch"] == arch:
            found[f"{row['subject']}@{row['profile']}"] = float(match.group(1))
    return found


def ninja_spans(log: Path) -> tuple[float, float]:
    """(seconds of the cargo edges, wall seconds of the whole build) from a build folder's .ninja_log (meant for a
    cold build's folder: a later partial rebuild appends edges of its own)."""
    edges: dict[tuple[int, int, str], str] = {}  # one edge per (start, end, command hash): outputs share it
    for line in log.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) >= 5 and fields[0].isdigit():
            edges.setdefault((int(fields[0]), int(fields[1]), fields[4]), fields[3])
    if not edges:
        return 0.0, 0.0
    cargo = [key for key, output in edges.items() if "cargo" in output or "llguidance" in output]
    return sum(e[1] - e[0] for e in cargo) / 1000, (max(e[1] for e in edges) - min(e[0] for e in edges)) / 1000


def guidance_measures() -> list[Measure]:
    """The Rust part's share of the guidance build (from the built tree's ninja log), and with
    CROSSLANE_BENCH_COLD=1 a cold build with guidance against one without (ccache off, ~2 x 25 minutes)."""
    log = ROOT / "build" / "riscv64" / COMPONENT / "build" / ".ninja_log"
    measures = []
    if log.is_file():
        cargo, whole = ninja_spans(log)
        measures.append(Measure("genai riscv64 build: its cargo edges (llguidance) vs the whole build (.ninja_log)",
                                cargo, whole, "s", "reported: the Rust part's share"))
    if os.environ.get("CROSSLANE_BENCH_COLD") != "1":
        print("   (cold build with vs without guidance: set CROSSLANE_BENCH_COLD=1, ~50 minutes)")
        return measures
    # Beside versions.toml, so its tree sources' paths read the same (a config's paths are relative to its folder).
    off = ROOT / ".versions-without-guidance.toml"
    text = (ROOT / "versions.toml").read_text()
    for line in ('compiled = { guidance = "llg_new_tokenizer" }\n',):  # the gate would rightly fail the build
        text = text.replace(line, "")
    off.write_text(text.replace('"-DUSE_GUIDANCE=ON"', '"-DUSE_GUIDANCE=OFF"'))
    times = {}
    try:
        with tempfile.TemporaryDirectory(prefix="crosslane-bench-guidance-") as tmp:
            for label, config in (("with", ROOT / "versions.toml"), ("without", off)):
                env = {**COLD, "CROSSLANE_BUILD_DIR": str(Path(tmp) / label)}
                times[label] = timed(partial(invoke, "build", "--arch", "riscv64", "--component", COMPONENT,
                                             "--config", str(config), env=env))
                if label == "with":  # a cold build's own log: the cargo edge as it ran cold
                    cargo, whole = ninja_spans(Path(tmp) / label / "riscv64" / COMPONENT / "build" / ".ninja_log")
                    measures.append(Measure("genai cold build riscv64: its cargo edges vs the whole build", cargo,
                                            whole, "s", "reported: the Rust part's share"))
    finally:
        off.unlink(missing_ok=True)
    measures.append(Measure("genai cold build riscv64 with guidance vs without", times["with"], times["without"],
                            "s", "reported"))
    return measures


def run_bench() -> list[Measure]:
    measures: list[Measure] = guidance_measures()
    if os.environ.get("CROSSLANE_BENCH_SKIP_BUILD") == "1":
        print("   (build half skipped: CROSSLANE_BENCH_SKIP_BUILD=1)")
    elif (ROOT / "build" / "riscv64" / COMPONENT / ".crosslane-stamp.json").is_file():
        measures += build_measures()
    else:
        print("   (genai not built for riscv64: the build figures need it built once, to copy its commands)")
    found = rates("amd64")
    if not found:
        print("   (no amd64 genai smoke figure: nox -s build-amd64-onnxruntime-genai first)")
        return measures
    control_step, control = next(iter(sorted(found.items())))
    for arch in ("arm64", "riscv64"):
        # One profile at a time, so the figures are not shared cores.
        for step, rate in sorted(rates(arch).items()):
            measures.append(Measure(f"tier-4 tokens/s {arch} {step} (qemu) vs amd64 {control_step} (qemu)", rate,
                                    control, " tok/s", "reported, no goal yet"))
    return measures

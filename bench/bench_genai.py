"""The onnxruntime-genai lane: a cold build through crosslane against the same commands by hand (ccache off
for both), a no-op rebuild against the cold build, and tier-4 generate() tokens per second per arch and CPU
profile under qemu-user (against amd64's, also under qemu; no goal yet).

The build half runs only with CROSSLANE_BENCH_COLD=by-hand (the sources staged; 12 minutes on 2 cores): one wheel
build (cp314) each way, both at once from cold file caches, each pinned to a core of its own, and the split printed
(crosslane's phases from its stamp, the by-hand commands' own). The smoke half needs the lanes built.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from common import BIN, ROOT, Cost, Measure, cold, invoke, median_of, opt_in, run, stolen_seconds, timed

COMPONENT = "onnxruntime-genai"
COLD = {"CCACHE_DISABLE": "1", "CROSSLANE_OFFLINE": "1"}
RATE = re.compile(r"tokens_per_second=([0-9.]+)")


IDENTIFIER = "cp314-linux_riscv64"  # one wheel build (the board's CPython); each CPython's is the same commands
DROP_CACHES = Path("/proc/sys/vm/drop_caches")
ORDER = ROOT / "build" / "bench" / "genai-cold-order"


def wheel_folder(build: Path) -> Path:
    return build / "riscv64" / COMPONENT / "wheels" / IDENTIFIER


def hand_commands(ours: Path, hand: Path) -> list[tuple[str, list[str]]]:
    """(phase, argv): what crosslane ran for the cp314 wheel (configure, compile, install, then bundle, pip wheel,
    retag and auditwheel repair), pointed at another build folder, with the build's own environment. Not done by
    hand: dropping the bundled ORT's requirement from METADATA (a text edit inside the zip)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from crosslane import config
    from crosslane.archs import Arch
    from crosslane.gates import manylinux
    from crosslane.guest import sysroot

    inputs = json.loads((wheel_folder(ours) / ".crosslane-stamp.json").read_text())["inputs"]
    configure = [arg.replace(str(ours), str(hand)) for arg in inputs["configure"]]
    cmake = configure[0]
    build_dir = Path(configure[configure.index("-B") + 1])
    wheel = inputs["wheel"]
    tag, platform = wheel["python_tag"], wheel["platform"]
    work, out = hand / "dist-work", hand / "dist"
    ort = hand / "riscv64" / "onnxruntime" / "install"
    found = sysroot.find(config.load(ROOT / "versions.toml").sysroot, Arch.RISCV64)
    search = manylinux.ldpaths(found.path if found else None, Arch.RISCV64, [ort])
    staged = build_dir / "wheel"
    bundle = " ".join(f'cp -L {ort}/lib/{name} "$(dirname {staged}/*/*.so | head -1)"/' for name in wheel["bundle"])
    package = (f"{bundle + ' && ' if bundle else ''}"
               f"_PYTHON_HOST_PLATFORM={platform.replace('_', '-', 1)} {sys.executable} -m pip wheel --no-deps "
               f"--no-build-isolation --no-index -w {work} {staged} && "
               f"{sys.executable} -m wheel tags --remove --python-tag {tag} --abi-tag {tag} --platform-tag {platform} "
               f"{work}/*.whl && {sys.executable} -m auditwheel repair --plat auto --ldpaths {search} -w {out} "
               f"{work}/*.whl")
    return [("configure", configure), ("compile", [cmake, "--build", str(build_dir), "--parallel"]),
            ("install", [cmake, "--install", str(build_dir)]), ("package", ["sh", "-c", package])]


def rebase_wrappers(prepared: Path, hand: Path) -> None:
    """The toolchain files and the rustc/cargo wrappers crosslane wrote name its build folder (the tool root binds
    it): in the copy they name the copy's, as they would had crosslane prepared that folder."""
    for folder in (hand / "riscv64" / "toolchains", *(hand / "riscv64").glob("*/rust")):
        for path in (p for p in folder.rglob("*") if p.is_file() and p.stat().st_size < 1 << 20):
            text = path.read_text(errors="surrogateescape")
            if str(prepared) in text:
                path.write_text(text.replace(str(prepared), str(hand)), errors="surrogateescape")


def drop_caches() -> bool:
    """Start from cold file caches (root only); False where the kernel does not let us."""
    try:
        os.sync()
        DROP_CACHES.write_text("3\n")
    except OSError:
        return False
    return True


def crosslane_first() -> bool:
    """Whether crosslane takes the first of the two cores this time: alternating across runs, so neither side
    always has the same core."""
    previous = ORDER.read_text().strip() if ORDER.is_file() else "hand"
    ORDER.parent.mkdir(parents=True, exist_ok=True)
    ORDER.write_text("crosslane\n" if previous == "hand" else "hand\n")
    return previous == "hand"


def split_line(split: dict[str, float]) -> str:
    """Each phase's seconds, in the order the phases ran."""
    return "; ".join(f"{phase} {seconds:.1f}s" for phase, seconds in split.items())


def pinned(core: int) -> Callable[[], None]:
    """A child's start: run on *core* only (inherited by everything it starts: ninja, the compilers, cargo)."""
    return lambda: os.sched_setaffinity(0, {core})


def reaped(process: subprocess.Popen[bytes], began: float) -> tuple[int, Cost]:
    """Wait for *process*; its exit code and what it cost (its own and its reaped children's CPU time)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return process.returncode, Cost(time.perf_counter() - began, usage.ru_utime + usage.ru_stime)


def build_measures() -> list[Measure]:
    """One cold build each way, side by side, each on a core of its own (which core alternates across runs): the
    machine's speed drifts between builds minutes apart (measured: the same by-hand commands 380 s, then 434 s the
    next time; crosslane first 1.10x, by hand first 0.92x), and two builds at the same time meet the same drift.
    An untimed build first prepares the tree the by-hand commands start from."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise SystemExit(f"the side-by-side cold builds need two cores; this process may use {len(cores)}")
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-genai-") as tmp:
        base = Path(tmp)
        argv = ("build", "--arch", "riscv64", "--component", COMPONENT, "--build", IDENTIFIER.split("-")[0] + "-*")
        prepared, ours, hand = base / "prepared", base / "crosslane", base / "hand"
        invoke(*argv, env={"CROSSLANE_OFFLINE": "1", "CROSSLANE_BUILD_DIR": str(prepared)})  # compile cache on
        prepare_by_hand(prepared, hand)
        ours_core, hand_core = cores[:2] if crosslane_first() else cores[1::-1]
        dropped = drop_caches()
        hand_split: dict[str, float] = {}
        stolen = stolen_seconds()
        began = time.perf_counter()
        build = subprocess.Popen([str(BIN / "invoke"), *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, preexec_fn=pinned(ours_core),
                                 env={**os.environ, **COLD, "CROSSLANE_BUILD_DIR": str(ours)})
        try:
            theirs = by_hand(prepared, hand, hand_split, hand_core)
        except BaseException:
            build.kill()
            reaped(build, began)
            raise
        code, cost = reaped(build, began)
        if code != 0:
            raise SystemExit(f"crosslane's cold build exited {code} (invoke {' '.join(argv)})")
        stolen = stolen_seconds() - stolen
        for label, core, spent in (("crosslane", ours_core, cost), ("by hand", hand_core, theirs)):
            print(f"   ({label}, core {core}: {spent.line()})", flush=True)
        print(f"   (both at once: {stolen:.1f}s stolen from the machine meanwhile"
              f"{', file caches dropped first' if dropped else ''})", flush=True)
        phases = json.loads((wheel_folder(ours) / ".crosslane-stamp.json").read_text())["facts"].get("phases", {})
        print("   (ninja edges, crosslane vs by hand: " + edges_compared(
            wheel_folder(ours) / "build" / ".ninja_log", wheel_folder(hand) / "build" / ".ninja_log") + ")", flush=True)
        noop = median_of(3, partial(invoke, *argv, env={**COLD, "CROSSLANE_BUILD_DIR": str(ours)}))
    ours_split = {"outside the build (source copy, patch check, probes, gates, report)": cost.wall - sum(
        phases.values()), **phases}
    print(f"   split, crosslane: {split_line(ours_split)}", flush=True)
    print(f"   split, by hand: {split_line(hand_split)}", flush=True)
    name = f"genai cold build riscv64 ({IDENTIFIER}): crosslane vs the same commands by hand, side by side"
    return [Measure(name, cost.wall, theirs.wall, "s", "<= 1.05x"),
            Measure(name.replace("cold build", "cold build's CPU time"), cost.cpu, theirs.cpu, "s",
                    "reported: user + system of every process"),
            Measure("genai no-op rebuild vs its cold build", noop, cost.wall, "s", "<= 1 %")]


def prepare_by_hand(prepared: Path, hand: Path) -> None:
    """What crosslane prepared before compiling, as it left it (the toolchain file, the wrappers, ORT_HOME, the
    patched source copy); the build, install and wheel folders are this build's own."""
    hand.mkdir()
    run(["cp", "-a", prepared / "riscv64", hand / "riscv64"])
    run(["rm", "-rf", wheel_folder(hand)])
    rebase_wrappers(prepared, hand)


def by_hand(prepared: Path, hand: Path, split: dict[str, float], core: int) -> Cost:
    """The commands one after another on *core*; their phases' seconds into *split*, and what they cost."""
    commands = hand_commands(prepared, hand)
    build_env = json.loads((wheel_folder(prepared) / ".crosslane-stamp.json").read_text())["inputs"]["env"]
    # The build's environment names its folder too (CARGO_HOME: the cargo config that replaces crates.io with the
    # tool root's crates); the copy's, as for the wrappers.
    own = {k: v.replace(str(prepared), str(hand)) for k, v in build_env["set"].items()}
    environment = {**{k: v for k, v in os.environ.items() if k not in build_env["unset"]}, **COLD, **own}
    wall = cpu = 0.0
    for phase, command in commands:
        with tempfile.TemporaryFile() as output:
            began = time.perf_counter()
            process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT,
                                       preexec_fn=pinned(core))
            code, cost = reaped(process, began)
            split[phase] = cost.wall
            wall, cpu = wall + cost.wall, cpu + cost.cpu
            if code != 0:  # the by-hand side's own words, not only its exit status
                output.seek(0)
                tail = output.read().decode(errors="replace").strip().splitlines()[-5:]
                raise SystemExit(f"by hand, {phase} exited {code}: {' | '.join(tail)}")
    return Cost(wall, cpu)


def rates(arch: str) -> dict[str, float]:
    """Decode tokens/s per CPU profile of *arch*, one profile at a time (not sharing the cores)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from crosslane import config
    from crosslane.archs import Arch

    rows: list[dict[str, str]] = []
    # The lane's cp314 wheel given as --wheel: the same payload and tokens as the lane's smoke, without its install
    # tests of every CPython's wheel (minutes of pip under qemu that measure nothing here).
    wheels = sorted((ROOT / "build" / arch / COMPONENT / "install").rglob("*-cp314-*.whl"))
    given = ["--wheel", str(wheels[0])] if wheels else []
    arch_cfg = config.load(ROOT / "versions.toml").arches[Arch(arch)]
    # Every profile with CROSSLANE_BENCH_COLD=profiles (~2 minutes of qemu each); by default the arch's default one, so
    # the default `nox -s bench` stays within its 15 minutes.
    every = cold("profiles")
    for profile in arch_cfg.profiles if every else [arch_cfg.profile(arch_cfg.default_profile)]:
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(tmp) / "smoke.json"
            # A failed smoke still writes its rows: the figures of the profiles that ran, the reason of the others.
            subprocess.run([str(BIN / "invoke"), "smoke", "--arch", arch, "--component", COMPONENT, "--cpu",
                            profile.name, *given, "--json", str(report)], cwd=ROOT, check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rows += json.loads(report.read_text()) if report.is_file() else []
    found = {}
    for row in rows:
        match = RATE.search(row["reason"])
        if row["component"] != COMPONENT or row["arch"] != arch:
            continue
        if match:
            found[f"{row['subject']}@{row['profile']}"] = float(match.group(1))
        elif row["verdict"] == "FAIL" and row["subject"].startswith("genai"):
            print(f"   (no tokens/s for {arch} {row['subject']}@{row['profile']}: {row['reason'][:160]})", flush=True)
    return found


def ninja_edges(log: Path) -> dict[tuple[int, int, str], str]:
    """A build folder's .ninja_log as {(start ms, end ms, command hash): first output} (meant for a cold build's
    folder: a later partial rebuild appends edges of its own). One entry per edge: outputs share it."""
    edges: dict[tuple[int, int, str], str] = {}
    for line in log.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) >= 5 and fields[0].isdigit():
            edges.setdefault((int(fields[0]), int(fields[1]), fields[4]), fields[3])
    return edges


def ninja_spans(log: Path) -> tuple[float, float]:
    """(seconds of the cargo edges, wall seconds of the whole build) from a build folder's .ninja_log."""
    edges = ninja_edges(log)
    if not edges:
        return 0.0, 0.0
    cargo = [key for key, output in edges.items() if "cargo" in output or "llguidance" in output]
    return sum(e[1] - e[0] for e in cargo) / 1000, (max(e[1] for e in edges) - min(e[0] for e in edges)) / 1000


def edges_compared(ours: Path, theirs: Path) -> str:
    """Where two builds of the same tree spent their edge time: the totals, and the edges that differ most."""
    def seconds(log: Path) -> dict[str, float]:
        return {output: (end - start) / 1000 for (start, end, _), output in ninja_edges(log).items()}
    mine, yours = seconds(ours), seconds(theirs)
    apart = sorted(set(mine) & set(yours), key=lambda o: abs(mine[o] - yours[o]), reverse=True)[:3]
    return (f"{len(mine)} vs {len(yours)} edges, {sum(mine.values()):.0f}s vs {sum(yours.values()):.0f}s in all; "
            "most apart: " + ", ".join(f"{Path(o).name} {mine[o]:.1f}s vs {yours[o]:.1f}s" for o in apart))


def guidance_measures() -> list[Measure]:
    """The Rust part's share of the guidance build (from the built tree's ninja log), and with
    CROSSLANE_BENCH_COLD=guidance a cold build with guidance against one without (ccache off, ~2 x 25 minutes)."""
    log = wheel_folder(ROOT / "build") / "build" / ".ninja_log"  # the wheel build's tree: each CPython has its own
    measures = []
    if log.is_file():
        cargo, whole = ninja_spans(log)
        measures.append(Measure(f"genai riscv64 build ({IDENTIFIER}): its cargo edges (llguidance) vs the whole build "
                                "(.ninja_log)", cargo, whole, "s", "reported: the Rust part's share"))
    else:
        print(f"   (no {log.relative_to(ROOT)}: nox -s build-riscv64-onnxruntime-genai first, for the Rust share)")
    if not cold("guidance"):
        print(opt_in("guidance", "cold build with vs without guidance", 50))
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
                    cargo, whole = ninja_spans(wheel_folder(Path(tmp) / label) / "build" / ".ninja_log")
                    measures.append(Measure("genai cold build riscv64: its cargo edges vs the whole build", cargo,
                                            whole, "s", "reported: the Rust part's share"))
    finally:
        off.unlink(missing_ok=True)
    measures.append(Measure("genai cold build riscv64 with guidance vs without", times["with"], times["without"],
                            "s", "reported"))
    return measures


def run_bench() -> list[Measure]:
    measures: list[Measure] = guidance_measures()
    if not cold("by-hand"):
        print(opt_in("by-hand", "cold build vs by hand", 25))
    else:
        measures += build_measures()
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

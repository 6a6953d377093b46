"""What shippable artifacts cost: a wheel's papers (licences, SBOM, the rewrite with fixed order and times, its
provenance) against that wheel's build, and the reproducibility check against one cold build of the same component.

The papers are timed on copies of the lane's wheels (onnxruntime-genai, as `nox -s build-<arch>` built them: one
measure per arch built here; riscv64's grafts ~40 Debian libraries, arm64's and amd64's none), best of 3, each
against the seconds its identifier's build took (its stamp: cold, warm or hot as that build was), whole and without
the final pack (the one deflate of the wheel's members every build makes: auditwheel's repair stores, the papers
step packs; timed apart as write_wheel of the same members), which is what licences, SBOM and provenance add. The
reproducibility check runs `invoke repro` on the canary (two builds, the second with ccache off) against one cold
build of it (ccache off); CROSSLANE_BENCH_COLD=repro runs it on onnxruntime-genai (about an hour on 2 cores).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from common import ROOT, Measure, best_of, cold, invoke, timed

from crosslane import config
from crosslane.archs import Arch
from crosslane.context import Context
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.recipes import cmake_wheel
from crosslane.shipping import wheel as wheel_papers

COMPONENT = "onnxruntime-genai"
ARCH = Arch.RISCV64


def papers_cost(ctx: Context, arch: Arch, folder: Path) -> tuple[float, float, float] | None:
    """(seconds of the papers on a copy of the identifier's wheel, seconds of its final pack alone, seconds its
    build took, from its stamp)."""
    stamp = json.loads((folder / ".crosslane-stamp.json").read_text())
    wheels = sorted((folder / "install" / "dist").glob("*.whl"))
    if not wheels:
        return None
    configure = stamp["inputs"]["configure"]
    epoch = int(stamp["inputs"]["env"]["set"]["SOURCE_DATE_EPOCH"])
    component = ctx.config.components[COMPONENT]
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-") as tmp:
        copy = Path(tmp) / wheels[0].name

        def once() -> None:
            shutil.copy(wheels[0], copy)
            cmake_wheel.give_papers(ctx, component, arch, copy, source=Path(configure[configure.index("-S") + 1]),
                                    configure=configure, epoch=epoch, identifier=folder.name)
        members = wheel_papers.read_members(wheels[0])
        info_dir = wheel_papers.dist_info(members, wheels[0])
        pack = best_of(3, lambda: wheel_papers.write_wheel(Path(tmp) / "pack.whl", members, info_dir, epoch))
        return best_of(3, once), pack, float(stamp["facts"]["seconds"])


def run_bench() -> list[Measure]:
    ctx = Context(config.load(ROOT / "versions.toml"), Runner(Log()))
    measures = []
    for arch in (ARCH, *(a for a in Arch if a != ARCH)):
        folders = sorted((ctx.component_dir(arch, COMPONENT) / "wheels").glob("cp*"))
        costs = [c for c in (papers_cost(ctx, arch, f) for f in folders) if c is not None]
        if costs:
            papers, pack, builds = (sum(c[i] for c in costs) for i in range(3))
            measures.append(Measure(f"papers with the final pack of {len(costs)} {COMPONENT} {arch} wheels vs their "
                                    "builds", papers, builds, "s", "(report)"))
            measures.append(Measure(f"licences + SBOM + provenance (papers less the pack) of {len(costs)} "
                                    f"{COMPONENT} {arch} wheels vs their builds", papers - pack, builds, "s",
                                    "<= 0.01x"))
        else:
            print(f"   (papers: no {COMPONENT} {arch} wheels built; run nox -s build-{arch} first)")
    component = COMPONENT if cold("repro") else "canary"
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-") as tmp:
        env = {"CCACHE_DISABLE": "1", "CROSSLANE_BUILD_DIR": str(Path(tmp) / "build")}
        one = timed(lambda: invoke("build", "--arch", ARCH.value, "--component", component, env=env))
    check = timed(lambda: invoke("repro", "--arch", ARCH.value, "--component", component))
    measures.append(Measure(f"`invoke repro` ({component}, two builds from two clones) vs one cold build", check, one,
                            "s", "(report)"))
    return measures

"""The steps the commands chain: setup → sysroot → build → smoke, each returning report rows."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from crosslane import __version__ as crosslane_version
from crosslane import contract, report, smokes
from crosslane.archs import Arch, info
from crosslane.baremetal import lane
from crosslane.config import Config, PinnedSource, Profile
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite, UsageError
from crosslane.features.probes import Probes
from crosslane.files import atomic, locks, stamps
from crosslane.gates import compiled, elf, provenance, vector_code, vector_sources, verify
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import buildtools, hostsetup, toolroot
from crosslane.models import hostenv
from crosslane.policy import floors, lanes
from crosslane.preflight import doctor
from crosslane.process import costs
from crosslane.recipes import Built, cmake, cmake_cache, cmake_wheel
from crosslane.registry import suggestion
from crosslane.report import Check, Row, Scope, Verdict
from crosslane.reports import build as buildreport
from crosslane.reports import summary
from crosslane.run import outline, overlap, plan, repro
from crosslane.run.plan import RunPlan
from crosslane.shipping import folder as shipping_folder
from crosslane.shipping import index as simple_index
from crosslane.smokes import site as smoke_site
from crosslane.sources import pinned, worktree
from crosslane.suites import stage


def setup(ctx: Context, arches: Sequence[Arch], components: Sequence[str] | None = None, *,
          extra: Sequence[str] = (), label: str = "") -> list[Row]:
    """Host packages (with *extra* ones, e.g. mmdebstrap for a tool root) and the pinned build tools."""

    label = label or ",".join(arches)
    with ctx.log.group(f"setup: host packages and build tools for {label}"):
        wanted = (*hostsetup.packages_needed(ctx.config, arches, components), *extra)
        installed = hostsetup.install(ctx.runner, tuple(dict.fromkeys(wanted)))
        tools = buildtools.ensure(ctx.runner, ctx.config.tools)
    what = f"installed {' '.join(installed)}" if installed else "all host packages present"
    return [Row(component="host", arch=Scope.of(label), check=Check.SETUP, verdict=Verdict.PASS,
                reason=f"{what}; cmake {ctx.config.tools.cmake}, ninja {ctx.config.tools.ninja} at {tools.root}")]


def sysroots(ctx: Context, arches: Sequence[Arch]) -> list[Row]:
    rows = []
    for arch in arches:
        with ctx.log.group(f"sysroot: {arch} ({ctx.config.sysroot.suite})"):
            found = ctx.ensure_sysroot(arch)
        count = len(found.packages()) if not ctx.runner.dry_run else 0
        rows.append(Row(component="sysroot", arch=arch, check=Check.SYSROOT, verdict=Verdict.PASS,
                        reason=f"{count} packages at {found.path}"))
    return rows


def build_components(ctx: Context, arch: Arch, names: Sequence[str], *, force: bool = False) -> list[Row]:
    """`invoke build`: the arch's builds of the request (default: its job), and its build report, as every build
    writes one (README: the build report)."""
    job = plan.for_build(ctx.config, arch, names)
    wheel_selection(ctx, job)  # a --build that selects nothing is refused before anything runs
    with ctx.ledger.stage("build and gates"):
        rows = build(ctx, job, arch, force=force)
    # A build that preflight stopped wrote nothing, and leaves nothing (not even a report) behind.
    if not ctx.runner.dry_run and any(r.check is Check.BUILD for r in rows):
        written = buildreport.write(ctx, arch, dict(job.builds), rows)
        ctx.log.info(f"    report: {written} and {written.with_suffix('.md').name}")
    return rows


OnBuilt = Callable[[Arch, str, bool], None]  # (arch, component, passed): a build of the plan ended


def build(ctx: Context, job: RunPlan, arch: Arch, names: Sequence[str] | None = None, *, force: bool = False,
          on_built: OnBuilt | None = None) -> list[Row]:
    """The plan's builds for *arch* (or those of them named), behind the preflight gate and the arch's build lock;
    *on_built* is told of each one as it ends."""
    cmake.remote_cache()  # a malformed shared-cache URL stops every build, a dry or up-to-date one too
    probes = Probes(ctx.runner, ctx.config, ctx.compiler)
    ordered = tuple(names) if names is not None else job.builds[arch]
    states = {name: job.lane(name, arch) for name in ordered}
    if ctx.runner.dry_run and outline.show(ctx, job, [(arch, ordered)]):
        # Without the tools and sysroot setup would make, no build can be planned further: nothing is installed.
        return [Row(component=name, arch=arch, check=Check.BUILD, verdict=Verdict.SKIP,
                    reason="dry run: would build once setup and the sysroot made what the plan lists")
                for name in ordered]
    if not ctx.runner.dry_run:  # the compilers' tool roots, made on first use as sysroots are (preflight runs them)
        chains = [ctx.config.toolchain_for(n, arch) for n in ordered if states[n].enabled]
        for name in dict.fromkeys(chain.toolroot for chain in chains if chain.toolroot):
            toolroot.ensure(ctx.runner, ctx.config.toolroots[name])
    rows: list[Row] = doctor.gate(ctx, arch, ordered, probes, states)
    if rows:
        return rows
    if ctx.runner.dry_run:  # a dry run writes nothing, a lock file included
        return _build_in_order(ctx, job, arch, ordered, probes, force=force, on_built=on_built)
    with locks.hold(ctx.build_lock(arch), f"the {arch} build tree", ctx.log):
        return _build_in_order(ctx, job, arch, ordered, probes, force=force, on_built=on_built)


def _build_in_order(ctx: Context, job: RunPlan, arch: Arch, ordered: Sequence[str], probes: Probes, *, force: bool,
                    on_built: OnBuilt | None) -> list[Row]:
    rows: list[Row] = []
    for name in ordered:
        off = lanes.produce(ctx, job.lane(name, arch))
        if off is not None:
            rows.append(off)
            if on_built:
                on_built(arch, name, off.verdict is not Verdict.FAIL)
            continue
        component = ctx.config.components[name]
        registry = ctx.config.registries.recipes
        with ctx.log.group(f"build: {name} for {arch} ({component.recipe})"), costs.measured() as meter:
            needs_source = registry.entries[component.recipe].needs_source
            source = worktree.prepare(ctx, component, arch) if needs_source else None
            request = contract.Request(ctx=ctx, arch=arch, component=name, probes=probes, source=source, force=force)
            outcome = contract.run(registry, component.recipe, request, Built)
            built_now = outcome.payload
            ctx.log.info(f"    {built_now.build.verdict.value}: {built_now.build.reason}")
        made = report.timed(outcome.rows, meter.wall, meter.cpu)
        if built_now.build.verdict is Verdict.PASS and built_now.gated:
            with costs.measured() as meter:
                made += report.timed(gate_install(ctx, name, arch, built_now.gated, built_now.builds),
                                     meter.wall, meter.cpu)
        rows += made
        if on_built:
            on_built(arch, name, not any(r.verdict is Verdict.FAIL for r in made))
        if built_now.build.verdict is Verdict.FAIL:
            break
    return rows


GATES_CACHE = ".crosslane-gates.json"


def gates_key(ctx: Context, name: str, arch: Arch, paths: Sequence[Path], staging: Sequence[Path]) -> str:
    """Everything a gate verdict depends on: the outputs (as the stamp lists them), the dependencies' outputs
    the DT_NEEDED scan searches, the sysroot, and crosslane's own version (the gates' code)."""
    found = sysroot_mod.find(ctx.config.sysroot, arch)
    component = ctx.config.components[name]
    # What versions.toml asks the gates to prove: a declaration changed is a question not yet answered.
    declared = {"compiled": dict(component.compiled), "vector_sources": list(component.vector_sources),
                "provenance": dict(component.provenance)}
    outputs = [stamps.outputs_listing(p.parent if p.is_file() else p) for p in paths]
    return stamps.key({"declared": declared, "paths": [str(p) for p in paths], "outputs": outputs,
                       "staging": [stamps.outputs_listing(s) if s.is_dir() else None for s in staging],
                       "sysroot": found.key if found else None, "crosslane": crosslane_version})


def gate_install(ctx: Context, name: str, arch: Arch, paths: Sequence[Path], builds: Sequence[Path] = ()) -> list[Row]:
    """The artifact gates on what a build produced: failures each get a row, passes one summary row. Passing
    verdicts are kept beside the stamp, keyed by every input, so an up-to-date build does not re-read them."""
    staging = [ctx.component_dir(arch, dep) / "install" for dep in ctx.config.components[name].dependencies(arch)]
    cache = ctx.component_dir(arch, name) / GATES_CACHE
    key = gates_key(ctx, name, arch, paths, staging)
    try:
        kept = json.loads(cache.read_text())
        if kept.get("key") == key:
            return [Row.from_dict(entry) for entry in kept["rows"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    rows = _gate(ctx, name, arch, paths, staging, builds)
    if all(r.verdict is not Verdict.FAIL for r in rows):
        atomic.write_text(cache, json.dumps({"key": key, "rows": json.loads(summary.to_json(rows))}))
    else:
        cache.unlink(missing_ok=True)
    return rows


def _gate(ctx: Context, name: str, arch: Arch, paths: Sequence[Path], staging: Sequence[Path],
          builds: Sequence[Path] = ()) -> list[Row]:
    # The gates' modules (ELF, wheel, policy) are not a no-op's: an up-to-date build reads the verdicts kept.

    # A dependency's install folder is where the build found it, not where the target's loader looks: an installed
    # program reaches a library through its RUNPATH or the sysroot. A wheel's members load into a Python process
    # that may already hold the dependency (its own wheel imported first), so they still resolve against it.
    reader = elf.Reader()  # every gate below takes its ELF facts from it: each file is read once
    found = verify.run(ctx, arch, list(paths), staging, require_papers=True, staging_for_files=False, reader=reader)
    failed = [r for r in found if r.verdict is Verdict.FAIL]
    # Each wheel on its own (one per CPython): one without the feature must not pass beside one with it.
    wheels = [p for p in paths if p.is_file() and p.suffix == ".whl"]
    declared = ctx.config.components[name].compiled
    features = [r for w in wheels for r in compiled.rows(name, arch, w, declared, reader)] if wheels else \
        compiled.rows(name, arch, ctx.component_dir(arch, name) / "install", declared, reader)
    if failed:
        return [*(Row(component=name, arch=arch, check=Check.GATE, verdict=r.verdict,
                      reason=f"{r.component}: {r.reason}",
                      subject=r.subject) for r in failed), *(r for r in features if r.verdict is Verdict.FAIL)]
    checked = {r.component for r in found if r.verdict is Verdict.PASS}
    floor = next((r.reason for r in found if r.subject == "glibc-floor"), "")
    summary = Row(component=name, arch=arch, check=Check.GATE, verdict=Verdict.PASS,
                  reason=f"{len(found)} checks on {len(checked)} files: ELF arch, EXT_SUFFIX, DT_NEEDED, RUNPATH, "
                  "glibc floor" + (f" ({floor})" if floor else ""))
    return [summary, *features, *build_provenance(ctx, name, arch, builds),
            *vector_placement(ctx, name, arch, builds, reader)]


def vector_placement(ctx: Context, name: str, arch: Arch, builds: Sequence[Path] = (),
                     reader: elf.Reader | None = None) -> list[Row]:
    """versions.toml's `vector_sources`: the vector code of a RISC-V build is only where it is declared."""
    component = ctx.config.components[name]
    if not component.vector_sources or info(arch).vector_cpu_property is None:
        return []
    install = ctx.component_dir(arch, name) / "install"
    rows = []
    for build in builds or (ctx.component_dir(arch, name) / "build",):
        root = cmake_cache.source_tree(build, component.source_subdir)
        rows += vector_sources.rows(name, arch, build, root or build, shipping_folder.elf_files(install),
                                    component.vector_sources, reader)
    return rows


def build_provenance(ctx: Context, name: str, arch: Arch, builds: Sequence[Path] = ()) -> list[Row]:
    """versions.toml's `provenance`: in every build tree (default: the component's build/), each CMake cache
    variable points into its dependency's install folder, and no downloaded ONNX Runtime lies in the tree."""

    component = ctx.config.components[name]
    if not component.provenance:
        return []
    rows = []
    for build in builds or (ctx.component_dir(arch, name) / "build",):
        for variable, dep in component.provenance.items():
            home = lanes.install_dir(ctx, component.provider(dep, arch), arch)
            rows.append(provenance.check_cache_var(build, variable, home, arch, name))
        rows.append(dataclasses.replace(provenance.check_no_download(build, arch), component=name))
    return rows


def smoke_components(ctx: Context, arch: Arch, names: Sequence[str], profile: str | None = None) -> list[Row]:
    """`invoke smoke`: the components asked for (not the dependencies they pull into the build: those have
    their own smokes) on every profile, or the one chosen."""
    return smoke(ctx, plan.for_smoke(ctx.config, arch, names, profile))


def smoke(ctx: Context, job: RunPlan) -> list[Row]:
    return [row for name in job.smokes for row in smoke_one(ctx, job, name)]


def smoke_one(ctx: Context, job: RunPlan, name: str) -> list[Row]:
    """One component's smoke on the plan's profiles (its lane's verdict when the lane is off)."""
    arch = job.arch
    # A wheel given with --wheel is what gets smoked: the lane's build and install folder do not apply.
    lane_row = None if name in ctx.wheels else lanes.verify(ctx, job.lane(name, arch))
    if lane_row is not None:
        return [lane_row]
    spec = ctx.config.components[name].smoke
    if spec is None:
        return [Row(component=name, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                    reason="no smoke declared in versions.toml")]
    if not job.profiles_of(name):
        return [Row(component=name, arch=arch, check=Check.SMOKE, verdict=Verdict.SKIP,
                    reason=f"{plan.excluded(ctx.config, arch, name)}; this run's profiles: "
                    f"{', '.join(p.name for p in job.profiles)}")]
    # The plan narrowed the profiles to those the smoke runs on; the component's cpu_extensions are added to them.
    chosen = ctx.profiles_of(name, arch, job.profiles_of(name))
    with ctx.ledger.stage("smoke"), ctx.log.group(f"smoke: {name} on {arch} ({', '.join(p.name for p in chosen)})"), \
            costs.measured() as meter:
        request = contract.Request(ctx=ctx, arch=arch, component=name, profiles=tuple(chosen))
        found = smokes.run(ctx.config.registries.smokes, spec.kind, request)
    return with_vector_evidence(ctx, arch, name, report.timed(found, meter.wall, meter.cpu), chosen)


def with_vector_evidence(ctx: Context, arch: Arch, name: str, rows: list[Row], chosen: Sequence[Profile]) -> list[Row]:
    """The smoke rows of vector profiles with what the loaded code holds (gates/vector_code.py: the site a wheel was
    unpacked into, else the install folder): a VLEN sweep over code without a vector instruction shows only that
    the code runs."""
    vector = {p.name for p in chosen if p.vector_enabled(arch)}
    loaded = smoke_site.loaded_folder(ctx.component_dir(arch, name))
    if info(arch).vector_cpu_property is None or not vector or not loaded.is_dir():
        return rows
    note = vector_code.summary([vector_code.scan(f) for f in shipping_folder.elf_files(loaded)])
    return [dataclasses.replace(r, reason=f"{r.reason}; {note}")
            if r.check is Check.SMOKE and r.profile in vector and not r.control else r for r in rows]


def run_arch(ctx: Context, arch: Arch, requested: Sequence[str] = (), *, smokes: str = "auto") -> list[Row]:
    """`nox -s build-<arch>` (every component that lists the arch) and `nox -s build-<arch>-<component>` (one,
    with what it needs): the plan, then setup → sysroots → build (the control only for smokes that compare
    with it) → smoke → floors → report."""
    return run(ctx, plan.for_arch(ctx.config, arch, requested), smokes_beside=overlap.beside(smokes))


def run(ctx: Context, job: RunPlan, *, smokes_beside: bool) -> list[Row]:
    """Execute *job*; with --dry-run, show it and touch nothing. Smokes run beside the builds (overlap.py) or,
    with *smokes_beside* false, once every build ended."""

    arch = job.arch
    cmake.remote_cache()  # a malformed shared-cache URL is refused before the plan, a dry run's too
    when = ["smokes beside the builds, each once the builds it reads passed" if smokes_beside else
            "smokes once every build ended"] if job.smokes else []
    ctx.log.info("\n".join(f"plan: {line}" for line in [*job.describe(), *wheel_selection(ctx, job), *when]))
    if ctx.runner.dry_run:
        outline.show(ctx, job, job.steps())
        return []
    with ctx.ledger.stage("setup and sysroots"):
        rows = setup(ctx, job.arches, job.setup_components) + sysroots(ctx, job.arches)
    beside = overlap.SmokesBeside(job, lambda name: smoke_one(ctx, job, name))
    try:
        for each, names in job.steps():
            with ctx.ledger.stage("build and gates"):
                rows += build(ctx, job, each, names, on_built=beside.built if smokes_beside else None)
            if any(r.verdict is Verdict.FAIL for r in rows):
                break
        passed = not any(r.verdict is Verdict.FAIL for r in rows)
        rows += beside.finish(smoke_rest=passed)
    except BaseException:
        ctx.runner.cancel()  # interrupted or broken: the smoke beside stops now, not when its qemu runs end
        raise
    finally:
        beside.stop()
    if passed and job.whole_arch:
        # Every orchestrated run of a whole arch is an observation the floors may later be raised on.
        floors.record(rows, floors.observations_dir(ctx.build_root))
        rows += floors.check({a: n for a, n in ctx.config.floors.items() if a is arch}, rows)
    return report_rows(ctx, job, rows)


def makes_wheels(config: Config, name: str) -> bool:
    """Whether *name*'s recipe builds Python wheels (registry.Entry.wheels)."""
    entry = config.registries.recipes.entries.get(config.components[name].recipe)
    return entry is not None and entry.wheels


def wheel_selection(ctx: Context, job: RunPlan) -> list[str]:
    """The wheel builds the plan's cmake-wheel components make, as --build / CROSSLANE_BUILD select them (checked
    here, a dry run too: a selection of nothing is refused before anything runs, as cibuildwheel refuses one, and so
    is a --build given to a plan that builds no wheel at all)."""
    lines = []
    wheels = [(each, name) for each, names in job.builds.items() for name in names
              if makes_wheels(ctx.config, name)]
    if ctx.builds and not wheels:
        planned = dict.fromkeys(name for names in job.builds.values() for name in names)
        raise UsageError(f"--build {' '.join(ctx.builds)}: the plan builds no wheel "
                         f"({', '.join(planned) or 'nothing'})",
                         fix="drop --build, or name a component whose recipe is cmake-wheel")
    for each, name in wheels:
        component = ctx.config.components[name]
        found = sysroot_mod.find(ctx.config.sysroot, each)
        default = ctx.target_python(each).version if found else ""
        if not default and not component.wheel.pythons:
            continue  # the sysroot's CPython decides, and there is no sysroot yet to ask
        chosen = cmake_wheel.selection(ctx, component, each, default or component.wheel.pythons[0])
        lines.append(f"wheels {name} ({each}): {', '.join(i for _, i in chosen)}")
    return lines


def prepare_and_build(ctx: Context, job: RunPlan) -> list[Row]:
    """Host packages and tools, the sysroots, then every arch's builds of the plan."""
    with ctx.ledger.stage("setup and sysroots"):
        rows = setup(ctx, job.arches, job.setup_components) + sysroots(ctx, job.arches)
    for each, names in job.steps():
        with ctx.ledger.stage("build and gates"):
            rows += build(ctx, job, each, names)
    return rows


def report_rows(ctx: Context, job: RunPlan, rows: list[Row]) -> list[Row]:
    written = buildreport.write(ctx, job.arch, dict(job.builds), rows)
    ctx.log.info(f"    report: {written} and {written.with_suffix('.md').name}")
    return rows


def run_tests(ctx: Context, job: RunPlan) -> list[Row]:
    """`invoke upstream-tests`: setup → sysroots → the builds the suites need → each suite on the plan's profiles
    (and the control) → report."""

    lines = [line for line in job.describe() if not line.startswith("smoke ")]
    lines += [*wheel_selection(ctx, job), *stage.describe(ctx.config, job.arch, job.smokes, job.profiles)]
    ctx.log.info("\n".join(f"plan: {line}" for line in lines))
    if ctx.runner.dry_run:
        return []
    rows = prepare_and_build(ctx, job)
    if not any(r.verdict is Verdict.FAIL for r in rows):
        with ctx.ledger.stage("upstream suites"):
            rows += stage.run(ctx, job.arch, job.smokes, job.profiles)
    return report_rows(ctx, job, rows)


def run_baremetal(ctx: Context, name: str, cases: Sequence[str] = ()) -> list[Row]:
    """`invoke baremetal --target NAME` / `nox -s build-<NAME>`: the host packages, then the bare-metal lane."""
    if name not in ctx.config.baremetal:
        raise UsageError(f"unknown bare-metal target '{name}'{suggestion(name, list(ctx.config.baremetal))}")

    rows = setup(ctx, (), extra=("mmdebstrap",), label=name)  # mmdebstrap makes the tool root (host/toolroot.py)
    if ctx.runner.dry_run:
        return rows
    with locks.hold(ctx.build_root / f".{name}.lock", f"the {name} build tree", ctx.log):
        return rows + lane.run_target(ctx, name, cases)


def stage_sources(ctx: Context, arch: Arch, names: Sequence[str]) -> list[Row]:
    """`invoke sources`: every pinned source the arch's job needs (each component's own and its FetchContent
    dependencies), fetched and verified into the cache, so a later build needs no network (CROSSLANE_OFFLINE=1).
    Each distinct pin once, under the cache name the builds read (pinned.cache_name)."""

    wanted = staged_pins(ctx, arch, names)
    rows = []
    for index, (owner, cache_name, specs) in enumerate(wanted.values(), 1):
        fetched = pinned.fetch_pinned(ctx.runner, cache_name, specs, ctx.config.sysroot, arch=arch.value)
        size = sum(p.stat().st_size for p in fetched.path.rglob("*") if p.is_file() and not p.is_symlink()) \
            if fetched.path.is_dir() else 0
        ctx.log.info(f"[{index}/{len(wanted)}] {cache_name}: {size / 1e6:.1f} MB, {fetched.served_by}")
        verdict = Verdict.SKIP if ctx.runner.dry_run else Verdict.PASS
        rows.append(Row(component=owner, arch=arch, check=Check.SOURCE, verdict=verdict,
                        reason=f"{size / 1e6:.1f} MB; {fetched.served_by}",
                        subject=cache_name.partition('+')[2] or 'main'))
    return rows + stage_hostenvs(ctx, arch, names)


StagedPins = dict[tuple[Path, ...], tuple[str, str, Sequence[PinnedSource]]]


def staged_pins(ctx: Context, arch: Arch, names: Sequence[str]) -> StagedPins:
    """The cache entries of each pinned source (and its mirrors) → (the first component of the job that needs it, its
    cache name, its pins), in job order: the variants of one project name the same entries, so they are fetched
    once."""
    wanted: StagedPins = {}

    def add(owner: str, cache_name: str, specs: Sequence[PinnedSource]) -> None:
        wanted.setdefault(tuple(pinned.cache_entry(cache_name, s) for s in specs), (owner, cache_name, specs))

    for name in plan.components_for(ctx.config, arch, names):
        component = ctx.config.components[name]
        if isinstance(component.sources[0], PinnedSource):
            add(name, pinned.cache_name(component), pinned.pinned_only(component.sources))
        # what its upstream tests' build reads too
        suite = component.tests.fetchcontent if component.tests is not None else {}
        for dep, specs in [*component.fetchcontent.items(), *suite.items()]:
            add(name, pinned.cache_name(component, dep), specs)
    return wanted


def stage_hostenvs(ctx: Context, arch: Arch, names: Sequence[str]) -> list[Row]:
    """The pinned host venvs the job's builds and smokes use (CMake's codegen, the exporters, the model
    converter), made now so that `CROSSLANE_OFFLINE=1` builds and smokes need no network after `invoke sources`."""

    config = ctx.config
    wanted: dict[tuple[str, ...], str] = {}
    for name in plan.components_for(config, arch, names):
        component = config.components[name]
        for env in component.hostenvs:
            wanted.setdefault(config.hostenvs[env], f"hostenv:{env}")
        kind = config.registries.smokes.entries.get(component.smoke.kind) if component.smoke else None
        for env in kind.hostenvs if kind else ():  # what the smoke kind's runs need (its exports, a converter)
            if env in config.hostenvs:
                wanted.setdefault(config.hostenvs[env], f"hostenv:{env}")
        model = component.smoke.referred("models") if component.smoke else None
        if model is not None:
            wanted.setdefault(config.models[model].requirements, f"model:{model}")
    rows = []
    for requirements, label in wanted.items():
        if ctx.runner.dry_run:
            rows.append(Row(component="host", arch=arch, check=Check.SOURCE, verdict=Verdict.SKIP,
                            reason=f"dry run: {len(requirements)} pins", subject=label))
            continue
        python = hostenv.python_for(ctx.runner, requirements)
        rows.append(Row(component="host", arch=arch, check=Check.SOURCE, verdict=Verdict.PASS,
                        reason=f"{len(requirements)} pinned requirements at {python.parent.parent}", subject=label))
    return rows + stage_toolroots(ctx, arch, names)


def stage_toolroots(ctx: Context, arch: Arch, names: Sequence[str]) -> list[Row]:
    """The tool roots the job's components take their Rust or their compilers from, and the arch's qemu-user, made
    now (mmdebstrap needs the archive)."""

    chosen = plan.components_for(ctx.config, arch, names)
    components = [ctx.config.components[n] for n in chosen]
    emulator = ctx.config.arches[arch].emulator
    compilers = [chain.toolroot for n in chosen if (chain := ctx.config.toolchain_for(n, arch)).toolroot]
    wanted = dict.fromkeys([*(c.toolroot for c in components if c.toolroot), *compilers,
                            *([emulator] if emulator else [])])
    rows = []
    for name in wanted:
        root = toolroot.ensure(ctx.runner, ctx.config.toolroots[name])
        verdict = Verdict.SKIP if ctx.runner.dry_run else Verdict.PASS
        count = f"{len(root.packages())} packages" if not ctx.runner.dry_run else "dry run"
        rows.append(Row(component="host", arch=arch, check=Check.SOURCE, verdict=verdict,
                        reason=f"{count} at {root.path}", subject=f"toolroot:{name}"))
    return rows


def publish_index(ctx: Context, arch: Arch | None, names: Sequence[str], output: Path | None = None,
                  found_in: Path | None = None) -> list[Row]:
    """`invoke index`: a PEP 503 index of the arch's built wheels (every cmake-wheel component of its job, or those
    named), or of every wheel under *found_in* (CI's downloaded packs), with their provenance, in *output* (default
    build/<arch>/index, build/index)."""
    named = "--output" if output is not None else None  # a user's path, claimed; the default is crosslane's place
    if found_in is not None:
        wheels = sorted(found_in.rglob("*.whl"))
        simple = simple_index.write(wheels, output or ctx.build_root / "index", named)
        return [Row(component="index", arch=Scope.NO_ARCH, check=Check.INDEX, verdict=Verdict.PASS,
                    reason=f"{len(wheels)} wheels from {found_in} at {simple}")]
    if arch is None:
        raise UsageError("index: name an arch (--arch) or a folder of wheels (--input)", fix="e.g. --arch riscv64")
    wanted = [n for n in plan.components_for(ctx.config, arch, names)
              if makes_wheels(ctx.config, n)]
    if not wanted:
        raise UsageError(f"no component of the {arch} job builds wheels", fix="name one with --component")
    wheels = []
    for name in wanted:
        found = sorted((ctx.component_dir(arch, name) / "install" / "dist").glob("*.whl"))
        if not found:
            raise MissingPrerequisite(f"{name} ({arch}): no wheel built", fix=f"invoke build --arch {arch} --component "
                                                                              f"{name}")
        wheels += found
    target = output or ctx.build_root / arch.value / "index"
    simple = simple_index.write(wheels, target, named)
    ctx.log.info(f"    pip install --index-url {simple.resolve().as_uri()} {' '.join(wanted)}")
    return [Row(component=name, arch=arch, check=Check.INDEX, verdict=Verdict.PASS,
                reason=f"{len(wheels)} wheels at {simple}") for name in wanted]


def reproducibility(ctx: Context, arch: Arch, names: Sequence[str], *, keep: bool = False) -> list[Row]:
    """`invoke repro`: the host packages (diffoscope, and the objdump it reads foreign ELF files with), the
    sysroots, then each component built twice and compared (repro.py)."""
    job = plan.for_build(ctx.config, arch, names)
    rows = setup(ctx, job.arches, job.setup_components, extra=("diffoscope-minimal", "binutils-multiarch"))
    rows += sysroots(ctx, job.arches)
    if ctx.runner.dry_run:
        return rows
    return rows + repro.run(ctx, arch, names, keep=keep)

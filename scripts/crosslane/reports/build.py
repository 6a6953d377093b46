"""The build report a reviewer reads (build/reports/report-<arch>.json and .md): for each component × arch
what was built from what (source pin and which mirror served it, patches and their sha256 and state, the
compiler, cmake and ninja, the sysroot with the versions of the packages that matter), how long it took and
what ccache served, then every row of the run (gates, smokes with profile and duration, parity, lanes,
floors). Facts come from the build stamps and the sysroot manifests: what was recorded, never re-derived.

Two kinds of statement are kept apart: "rows" and "components" are what this run MEASURED (observed, built,
ran); "asserted" is what holds by configuration only (exemptions, lane states, substituted submodules, with
their reasons), which no run checked. The JSON carries "schema" (SCHEMA below); keys are stable within a
schema, so `invoke report-diff OLD NEW` can compare two reports (versions, verdicts, sizes, timings)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from crosslane import __version__, report
from crosslane.archs import Arch
from crosslane.config import GitSource
from crosslane.context import Context
from crosslane.errors import UsageError
from crosslane.files import atomic, bounded, stamps
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from crosslane.report import Check, Row, Verdict
from crosslane.reports import summary
from crosslane.suites import stage, verdict

SCHEMA = 3  # 2: rows carry check, subject, profile and control instead of a step string; 3: "tests" (upstream suites)
# Sysroot packages whose versions a reader of the report needs (prefix match on the package name).
KEY_PACKAGES = ("libc6", "libstdc++6", "libgcc-s1", "python3.", "libpython3.", "python3-numpy", "python3-onnxruntime",
                "libonnxruntime")


def sysroot_facts(ctx: Context, arch: Arch) -> dict[str, object] | None:
    found = sysroot_mod.find(ctx.config.sysroot, arch)
    if found is None:
        return None
    manifest = found.path / sysroot_mod.MANIFEST
    try:
        data = json.loads(manifest.read_text())
        packages = {p["package"]: p["version"] for p in data["packages"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {"suite": ctx.config.sysroot.suite, "key": found.key, "manifest": "unreadable"}
    return {"suite": ctx.config.sysroot.suite, "mirror": ctx.config.sysroot.mirror, "key": found.key,
            "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(), "packages": len(packages),
            "versions": {name: version for name, version in sorted(packages.items())
                         if name.startswith(KEY_PACKAGES)}}


ROOT_PACKAGES = ("rustc", "cargo", "libstd-rust-dev", "gcc")


def toolroot_facts(ctx: Context, name: str) -> dict[str, object]:
    """The tool root a build's Rust came from: its key, how many packages, the versions that matter."""

    found = toolroot.find(ctx.config.toolroots[name])
    if found is None:
        return {"name": name, "manifest": "absent"}
    packages = found.packages()
    return {"name": name, "key": found.key, "suite": found.spec.suite, "packages": len(packages),
            "versions": {p: v for p, v in sorted(packages.items()) if p.split(":")[0] in ROOT_PACKAGES}}


def remote_text(cache: Mapping[str, object]) -> str:
    """The shared cache's part of a build's ccache counts: its hits, and the errors reaching it."""
    parts = [f"{cache[k]} {what}" for k, what in (("remote_hits", "from the remote"),
                                                  ("remote_errors", "remote errors: local cache only"))
             if cache.get(k)]
    return f" ({', '.join(parts)})" if parts else ""


def component_facts(ctx: Context, arch: Arch, name: str, rows: Sequence[Row]) -> dict[str, object]:
    component = ctx.config.components[name]
    facts: dict[str, object] = {"component": name, "arch": arch.value, "recipe": component.recipe}
    served = [r.reason for r in rows if r.component == name and r.arch is arch and r.check is Check.SOURCE]
    if served:
        facts["served"] = served
    features = {r.subject.partition(":")[2]: r.verdict is Verdict.PASS for r in rows
                if r.component == name and r.arch is arch and r.check is Check.GATE
                and r.subject.startswith("compiled:")}
    if features:
        facts["compiled"] = features  # read from the built libraries (gates/compiled.py), not the configure flags
    stamp = stamps.read(ctx.component_dir(arch, name))
    if stamp is None:
        return facts
    inputs = stamp.get("inputs")
    if isinstance(inputs, Mapping):
        for key in ("source", "fetchcontent", "patches", "compiler", "cmake", "ninja", "sysroot", "wheel"):
            if key in inputs:
                facts[key] = inputs[key]
        root = inputs.get("toolroot")
        if isinstance(root, Mapping) and isinstance(root.get("name"), str) and root["name"] in ctx.config.toolroots:
            facts["toolroot"] = toolroot_facts(ctx, root["name"])
        configure = inputs.get("configure")
        if isinstance(configure, list):
            facts["cmake_args"] = [a for a in configure if isinstance(a, str) and a.startswith("-D")
                                   and not a.startswith(("-DCMAKE_MAKE_PROGRAM", "-DCMAKE_INSTALL_PREFIX"))]
    recorded = stamp.get("facts")
    if isinstance(recorded, Mapping):
        facts.update(recorded)
    outputs = stamp.get("outputs")
    if isinstance(outputs, Mapping):
        facts["outputs"] = len(outputs)
        facts["bytes"] = sum(entry[0] for entry in outputs.values()
                             if isinstance(entry, list) and entry and isinstance(entry[0], int))
    return facts


def tests_facts(ctx: Context, rows: Sequence[Row]) -> list[dict[str, object]]:
    """Every case of every upstream suite this run judged (its rows name them), as the stage recorded them."""
    if not any(row.check is Check.TESTS for row in rows):
        return []  # a build's report: no suite ran

    found: list[dict[str, object]] = []
    for row in rows:
        if row.check is not Check.TESTS or row.subject != verdict.SUBJECT or not row.profile \
                or not isinstance(row.arch, Arch):  # a suite runs on an arch
            continue
        path = stage.cases_path(ctx, row.arch, row.component, row.profile)
        try:
            data = bounded.read_json(path, error=UsageError, fix="run invoke upstream-tests again")
        except UsageError:
            continue
        if isinstance(data, dict) and isinstance(data.get("cases"), list):
            found.append({"component": row.component, "arch": row.arch.value, "profile": row.profile,
                          "control": row.control, "verdict": row.verdict.value, "cases": data["cases"]})
    return found


def build(ctx: Context, arches: Iterable[Arch], names: Mapping[Arch, Sequence[str]], rows: Sequence[Row]
          ) -> dict[str, object]:
    arch_list = list(arches)
    return {
        "schema": SCHEMA, "crosslane": __version__, "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": str(ctx.config.path), "tools": {"cmake": ctx.config.tools.cmake, "ninja": ctx.config.tools.ninja},
        "sysroots": {arch.value: sysroot_facts(ctx, arch) for arch in arch_list},
        "components": [component_facts(ctx, arch, name, rows) for arch in arch_list for name in names.get(arch, ())],
        "asserted": asserted(ctx, arch_list, names),
        "tests": tests_facts(ctx, rows),
        "rows": json.loads(summary.to_json(rows)),
        # What each stage of the run cost so far (wall and CPU seconds, children included).
        "stages": [{"stage": name, "wall": round(wall, 3), "cpu": round(cpu, 3)}
                   for name, wall, cpu in ctx.ledger.summary()],
    }


def asserted(ctx: Context, arches: Sequence[Arch], names: Mapping[Arch, Sequence[str]]) -> list[dict[str, str]]:
    """What versions.toml asserts for this run without any run checking it, each with its reason; a claim that
    holds for several variants of one project is listed once, naming them."""
    config = ctx.config
    wanted = sorted({name for arch in arches for name in names.get(arch, ())})
    grouped: dict[tuple[str, str], list[str]] = {}
    for name in wanted:
        component = config.components[name]
        smoke = component.smoke
        matrix = smoke.referred("cases") if smoke is not None else None
        if matrix is not None:
            for model, reason in config.cases[matrix].exempt.items():
                grouped.setdefault((f"cases.{matrix}: {model} not run", reason), []).append(name)
        for source in component.sources:
            for path, commit, reason in source.substitutes if isinstance(source, GitSource) else ():
                what = f"submodule {path} at {commit[:12]}, not the gitlink's"
                grouped.setdefault((what, reason), []).append(name)
    found = [{"what": f"{what} ({', '.join(who)})", "reason": reason} for (what, reason), who in grouped.items()]
    for (name, arch), lane in sorted(config.lanes.items(), key=lambda item: (item[0][0], item[0][1].value)):
        if arch in arches and name in wanted:
            state = "experimental" if lane.experimental else ("on" if lane.enabled else "off")
            found.append({"what": f"lane {name} on {arch}: {state}", "reason": lane.reason})
    for key, reason in sorted(config.parity_exemptions.items()):
        found.append({"what": f"parity exemption {key}", "reason": reason})
    return found


def short_source(identity: object) -> str:
    """A source pin as a reader wants it in a table cell (the JSON keeps the whole identity)."""
    text = str(identity or "—")
    kind, _, rest = text.partition(":")
    if kind == "git":
        base, _, extra = rest.partition("+submodules:")
        url, _, commit = base.rpartition("@")
        parts = extra.split("+") if extra else []
        subs = len(parts[0].split(",")) if parts else 0
        swapped = len(parts) - 1 if parts else 0
        tail = f" (+{subs} submodules{f', {swapped} substituted' if swapped else ''})" if subs else ""
        return f"git {url.removeprefix('https://github.com/')} @ {commit[:12]}{tail}"
    if kind == "archive":
        url, _, digest = rest.partition("#sha256=")
        return f"archive {url.rsplit('/', 1)[-1]} (sha256 {digest[:12]}…)"
    if kind == "tree":
        return f"tree {rest[:12]}…"
    return text


def markdown(data: Mapping[str, Any]) -> str:
    rows = [Row.from_dict(entry, i) for i, entry in enumerate(data.get("rows") or [])]
    lines = [f"# crosslane build report ({data.get('generated')})", "", summary.counts_markdown(rows), "",
             "## Components", "", "| component | arch | source | patches | compiler | seconds | ccache |",
             "|---|---|---|---|---|---|---|"]
    for facts in data.get("components") or []:
        patches = facts.get("patches") or []
        shown = ", ".join(f"{p['patch']} ({p['state']}, {p['sha256'][:12]})" for p in patches) or "—"
        cache = facts.get("ccache") or {}
        lines.append(f"| {facts['component']} | {facts['arch']} | {short_source(facts.get('source'))} | {shown} | "
                     f"{facts.get('compiler', '—')} | {facts.get('seconds', '—')} | "
                     f"{cache.get('hits', '—')} hit / {cache.get('misses', '—')} miss{remote_text(cache)} |")
    claims = data.get("asserted") or []
    if claims:
        lines += ["", "## Asserted by configuration (not measured by this run)", ""]
        lines += [f"- {claim['what']}: {claim['reason']}" for claim in claims]
    suites = data.get("tests") or []
    if suites:
        lines += ["", "## Upstream tests", "", "| component | arch | profile | cases | passed | failed | skipped |",
                  "|---|---|---|---|---|---|---|"]
        for suite in suites:
            outcomes = [c.get("outcome") for c in suite.get("cases") or []]
            where = f"{suite['profile']}{' (control)' if suite.get('control') else ''}"
            lines.append(f"| {suite['component']} | {suite['arch']} | {where} | {len(outcomes)} | "
                         f"{outcomes.count('passed')} | {outcomes.count('failed')} | {outcomes.count('skipped')} |")
    lines += ["", "## Sysroots", "", "| arch | suite | key | packages that matter |", "|---|---|---|---|"]
    for arch, facts in (data.get("sysroots") or {}).items():
        if facts:
            versions = ", ".join(f"{k} {v}" for k, v in (facts.get("versions") or {}).items())
            lines.append(f"| {arch} | {facts.get('suite')} | {facts.get('key')} | {versions} |")
    stages = [(str(s.get("stage")), float(s.get("wall", 0)), float(s.get("cpu", 0))) for s in data.get("stages") or []
              if isinstance(s, dict) and isinstance(s.get("wall", 0), (int, float))
              and isinstance(s.get("cpu", 0), (int, float))]
    return "\n".join(lines) + "\n\n## Every row\n\n" + summary.markdown(rows, stages)


def write(ctx: Context, arch: Arch, names: Mapping[Arch, Sequence[str]], rows: Sequence[Row]) -> Path:
    """build/reports/report-<arch>.json and .md; returns the JSON path."""
    data = build(ctx, names.keys(), names, rows)
    folder = ctx.build_root / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"report-{arch.value}.json"
    atomic.write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    atomic.write_text(path.with_suffix(".md"), markdown(data))
    return path


def _is_text_object(value: object, keys: Sequence[str]) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k), str) for k in keys)


def check_shape(data: object, path: Path) -> None:
    """Refuse (UsageError, naming the part) a report whose parts the readers would trip over: a report crosslane
    wrote always passes; one that crossed a job or was edited may not."""
    def wrong(what: str) -> UsageError:
        return UsageError(f"{path}: {what} is not shaped as schema {SCHEMA} has it", fix=report.REPORT_FIX)

    if not isinstance(data, dict):
        raise wrong("the report (a JSON object)")
    components, sysroots, claims = data.get("components") or [], data.get("sysroots") or {}, data.get("asserted") or []
    if not isinstance(components, list) or not all(
            _is_text_object(c, ("component", "arch")) and isinstance(c.get("patches") or [], list)
            and all(_is_text_object(p, ("patch", "state", "sha256")) for p in c.get("patches") or [])
            and isinstance(c.get("ccache") or {}, dict) for c in components):
        raise wrong("'components'")
    if not isinstance(sysroots, dict) or not all(
            not v or (isinstance(v, dict) and isinstance(v.get("versions") or {}, dict)) for v in sysroots.values()):
        raise wrong("'sysroots'")
    if not isinstance(claims, list) or not all(_is_text_object(c, ("what", "reason")) for c in claims):
        raise wrong("'asserted'")
    if not isinstance(data.get("rows") or [], list):
        raise wrong("'rows'")
    if not isinstance(data.get("stages") or [], list):
        raise wrong("'stages'")
    suites = data.get("tests") or []
    if not isinstance(suites, list) or not all(
            _is_text_object(t, ("component", "arch", "profile")) and isinstance(t.get("cases"), list)
            and all(_is_text_object(c, ("id", "outcome")) for c in t["cases"]) for t in suites):
        raise wrong("'tests'")


def merge_facts(folder: Path) -> dict[str, object]:
    """The components and sysroots of every report-<arch>.json under *folder* (CI's downloaded artifacts)."""
    components: list[object] = []
    sysroots: dict[str, object] = {}
    asserted_claims: list[object] = []
    generated = ""
    for path in sorted(folder.rglob("report-*.json")):
        data = bounded.read_json(path, error=UsageError, fix=report.REPORT_FIX)
        check_shape(data, path)
        assert isinstance(data, dict)  # for mypy: check_shape refused anything else
        components += [c for c in data.get("components") or [] if c not in components]
        sysroots.update({k: v for k, v in (data.get("sysroots") or {}).items() if v})
        asserted_claims += [c for c in data.get("asserted") or [] if c not in asserted_claims]
        generated = max(generated, str(data.get("generated", "")))
    return {"schema": SCHEMA, "crosslane": __version__,
            "generated": generated or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "components": components, "sysroots": sysroots, "asserted": asserted_claims}

"""kind = "pytest": upstream's Python tests run by the target's own python, on the lane's wheel, per profile.

Per profile a clean root (the install test's machinery: the suite whose system Python the wheel is for, its
venv module, the distribution packages the tests import, e.g. numpy, onnx), a venv with
--system-site-packages, the wheel and the suite's pure-Python requirements (pytest, pytest-timeout; downloaded on
the host, the board has no network) installed by pip --no-index, the source's test folder copied in, then

    cd /crosslane/src/<dir of the first path>; python -m pytest <paths> <args> --junitxml /crosslane/junit.xml

in one process, as upstream runs it. A case that failed because its data file is one the staged source lacks
(a mirror's allowed absent_ok blob) is named by that file, never counted as passed.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from crosslane.archs import Arch
from crosslane.config import Component, GitSource, Profile, SuiteSpec, SysrootSpec
from crosslane.context import Context
from crosslane.contract import Outcome, Request
from crosslane.process.runner import Result
from crosslane.recipes import cmake
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import genai, payload, sentinel, site, target, wheel_install
from crosslane.sources import pinned, worktree
from crosslane.suites import SuiteCases, junit, outcome
from crosslane.suites.ctest import FOLDER
from crosslane.suites.junit import Case

SOURCE = PurePosixPath("/crosslane/src")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a requirement's name, before its version specifier
RESULTS = PurePosixPath("/crosslane/junit.xml")


def results_file(board: Path) -> Path:
    """The board's JUnit file: a file of the board itself, never one a link made inside it points to (on the host,
    or elsewhere in the board). ValueError names what it is instead."""
    report = board / RESULTS.relative_to("/")
    for step in (report, *report.parents):
        if step == board:
            break
        if step.is_symlink():
            raise ValueError(f"{step}: a link (the results must be a file of the board)")
    if report.exists() and not report.is_file():
        raise ValueError(f"{report}: not a file")
    return report
SUITE_LIMIT = 7200.0
INSTALL_TIMEOUT = 900.0


def root_spec(ctx: Context, arch: Arch, name: str, spec: SuiteSpec, version: str) -> SysrootSpec:
    """The board's root: the install test's for this CPython, plus what the tests import from the distribution."""
    base = wheel_install.root_spec(ctx, name, version)
    extra = (*spec.packages, *spec.arch_packages.get(arch, ()))
    return SysrootSpec(suite=base.suite, mirror=base.mirror, keyring=base.keyring,
                       packages=tuple(dict.fromkeys((*base.packages, *extra))), arch_packages={})


def test_cwd(spec: SuiteSpec) -> PurePosixPath:
    """Where pytest runs: the first test file's folder (upstream's CI: --cwd test/python)."""
    return SOURCE / PurePosixPath(spec.paths[0]).parent


def test_dirs(paths: Sequence[str]) -> list[str]:
    """The top folders of the test files (test/python/x.py → test): copied whole, with the data beside them."""
    return sorted({PurePosixPath(p).parts[0] for p in paths})


def pytest_argv(spec: SuiteSpec, timeout: float) -> list[str]:
    # --rootdir: the cases' ids are relative to it (test_x::test_y), whatever path-like arguments follow.
    argv = ["-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit2", f"--junitxml={RESULTS}", "-q",
            f"--rootdir={test_cwd(spec)}",
            *(str(SOURCE / p) for p in spec.paths),
            *(cmake.substitute(a, {"source": str(SOURCE)}) for a in spec.args)]
    if any(canonicalize_name(Requirement(r).name) == "pytest-timeout" for r in spec.requirements):
        argv += [f"--timeout={timeout:.0f}"]
    return argv


def missing_data_of(source: Path, absent_ok: Sequence[str], absent: frozenset[str] | None
                    ) -> Callable[[Case], str | None]:
    """A failed case's absent data file: a path under the board's source folder that its failure names and that the
    mirror lacked when the source was staged (*absent*, as recorded). For a source staged before that was recorded
    (None): one the staged source does not have and the source's absent_ok allows the mirror to lack."""
    pattern = re.compile(re.escape(str(SOURCE)) + r"/([^\s'\"`:,;()\[\]]+)")

    def missing(case: Case) -> str | None:
        for found in pattern.finditer(case.detail or case.message):
            relative = found.group(1).rstrip(".")
            if relative != os.path.normpath(relative) or relative.startswith(".."):
                continue  # a path with '..' or '.' names no file of the commit's tree
            if absent is not None:
                if relative in absent:
                    return relative
            elif not (source / relative).exists() and any(fnmatch.fnmatch(relative, p) for p in absent_ok):
                return relative
        return None
    return missing


def recorded_absent(ctx: Context, component: Component) -> frozenset[str] | None:
    """The files the staged git source's mirror lacked, as recorded when it was staged; None when nothing is
    recorded for the tree under test (a --source checkout, a source that is not git, an entry staged before)."""
    if component.name in ctx.sources:
        return None
    name = component.source_of or component.name
    staged = [s for s in component.sources if isinstance(s, GitSource) and pinned.cached(name, s) is not None]
    records = [pinned.absent_files(name, spec) for spec in staged]
    if not records or any(record is None for record in records):
        return None
    return frozenset(path for record in records if record is not None for path in record)


def unreported_end(result: Result) -> str | None:
    """How pytest's run ended when no case can report it: 0 (every case passed) and 1 (some failed: the cases say
    which) are None; a timeout, a signal (a crash at the interpreter's exit) or pytest's own error codes are not."""
    if result.timed_out:
        return "timed out"
    if result.returncode in (0, 1):
        return None
    return sentinel.crash_reason(result.returncode) or f"exit {result.returncode}"


def has_requirement(name: str, output: str) -> bool:
    """pip said it installed *name* ("Successfully installed name-1.0 …") or found it ("Requirement already
    satisfied: name …")."""
    wanted = canonicalize_name(name)
    installed = {canonicalize_name(w.rsplit("-", 1)[0]) for w in wheel_install.installed(output)}
    satisfied = {canonicalize_name(found.group(0)) for line in output.splitlines()
                 if line.startswith("Requirement already satisfied:")
                 and (found := NAME.match(line.split(":", 1)[1].strip()))}
    return wanted in installed or wanted in satisfied


def lane_wheel(ctx: Context, arch: Arch, name: str) -> Path | None:
    """A --wheel given for the component (site.given_wheel), else the lane's wheel for the sysroot's CPython."""
    given = ctx.wheels.get(name)
    return site.given_wheel(given, arch) if given else genai.lane_wheel(ctx, arch, name)


def run(request: Request) -> Outcome[SuiteCases]:
    """The contract's call (registry.SUITES): the wheel installed on a board per profile, upstream's pytest run."""
    ctx, arch, name, profiles = request.ctx, request.arch, request.component, request.profiles
    component = ctx.config.components[name]
    spec = component.tests
    assert spec is not None
    wheel = lane_wheel(ctx, arch, name)
    if wheel is None:
        return outcome((Row(component=name, arch=arch, check=Check.TESTS, verdict=Verdict.FAIL,
                            reason=f"no {name} wheel for {arch}'s system CPython: invoke build --arch {arch} "
                            f"--component {name} makes one (or pass --wheel PATH)", subject=f"{FOLDER}:install"),))
    source = worktree.prepare(ctx, component, arch).path
    absent_ok = [p for s in component.sources if isinstance(s, GitSource) for p in s.absent_ok]
    version = wheel_install.python_of(wheel)
    root = root_spec(ctx, arch, name, spec, version)
    folder = ctx.component_dir(arch, name) / FOLDER
    requirements = folder / "requirements"
    shutil.rmtree(requirements, ignore_errors=True)
    requirements.mkdir(parents=True)
    glibc = wheel_install.arch_root_glibc(arch, root)
    if spec.requirements and not site.pip_download(ctx, list(spec.requirements),
                                                   [*site.platform_tags(arch, glibc), "any"], version, requirements):
        return outcome((Row(component=name, arch=arch, check=Check.TESTS, verdict=Verdict.FAIL,
                            reason=f"pip download of {', '.join(spec.requirements)} failed (see above); the "
                            "tests install them from that folder", subject=f"{FOLDER}:install"),))

    def one(profile: Profile) -> tuple[Row, tuple[Case, ...]]:
        return run_profile(ctx, arch, name, spec, wheel, root, source, requirements, profile)

    done = target.per_profile(profiles, one)
    rows = [r for r, _ in done if r.verdict is not Verdict.PASS]
    return outcome((*rows, *[r for r, _ in done if r.verdict is Verdict.PASS][:1]),
                   cases={p.name: cases for p, (r, cases) in zip(profiles, done, strict=True)
                          if r.verdict is Verdict.PASS},
                   missing_data=missing_data_of(source, absent_ok, recorded_absent(ctx, component)))


def run_profile(ctx: Context, arch: Arch, name: str, spec: SuiteSpec, wheel: Path, root: SysrootSpec, source: Path,
                requirements: Path, profile: Profile) -> tuple[Row, tuple[Case, ...]]:
    def failed(reason: str) -> tuple[Row, tuple[Case, ...]]:
        return Row(component=name, arch=arch, check=Check.TESTS, verdict=Verdict.FAIL, reason=f"{wheel.name}: {reason}",
                   subject=f"{FOLDER}:install", profile=profile.name), ()

    with ctx.log.group(f"upstream tests: {name} ({', '.join(spec.paths)}) on {arch} {profile.name}"):
        where = wheel_install.board(ctx, arch, root, ctx.component_dir(arch, name) / FOLDER / f"board-{profile.name}",
                                    profile, env={"PYTHONDONTWRITEBYTECODE": "1"})
        wheels = where.root / wheel_install.WHEELS.relative_to("/")
        shutil.copytree(requirements, wheels, dirs_exist_ok=True)
        absent = wheel_install.fetch_requirements(ctx, arch, where, wheel, wheel_install.arch_root_glibc(arch, root))
        for top in test_dirs(spec.paths):
            shutil.copytree(source / top, where.root / SOURCE.relative_to("/") / top, symlinks=True)
        install_timeout = payload.timeout_for(INSTALL_TIMEOUT, arch, profile)
        why = wheel_install.pip_install(where, wheel, install_timeout)
        if why:
            return failed(f"{why}{'; the index has no wheel of ' + ', '.join(absent) if absent else ''}")
        found = wheel_install.pip_wheel(where.root)
        assert found is not None  # pip_install ran it
        pip = wheel_install.pip_tree(found)
        names = [Requirement(r).name for r in spec.requirements]
        if names:
            # Read-only: the venv holds the wheel under test now, and its .pth files run when the interpreter starts.
            readable = dataclasses.replace(where, binds=(*where.binds, pip))
            result = readable.run([str(wheel_install.VENV / "bin/python"), f"{pip}/pip", "install", "--no-index",
                                   "--find-links", str(wheel_install.WHEELS), *spec.requirements], install_timeout)
            missing = [n for n in names if not has_requirement(n, result.output)]
            if missing:
                return failed(f"pip install of {', '.join(missing)} failed: {wheel_install.last_line(result.output)}")
        timeout = payload.timeout_for(spec.timeout, arch, profile)
        result = where.run([str(wheel_install.VENV / "bin/python"), *pytest_argv(spec, timeout)], SUITE_LIMIT,
                           cwd=str(test_cwd(spec)))
        try:
            cases = tuple(junit.read(results_file(where.root)))
        except ValueError as exc:
            tail = wheel_install.last_line(result.output)
            return failed(f"pytest wrote no readable results ({exc}); its last line: {tail}")
        ctx.log.info(f"    {profile.name}: {len(cases)} cases, exit {result.returncode}")
        ended = unreported_end(result)
        if ended is not None:
            return failed(f"pytest ended with {ended} after {len(cases)} cases: "
                          f"{wheel_install.last_line(result.output)}")
        return Row(component=name, arch=arch, check=Check.TESTS, verdict=Verdict.PASS,
                   reason=f"{wheel.name} installed with pip on {profile.name}", subject=f"{FOLDER}:install",
                   profile=profile.name), cases

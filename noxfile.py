"""Nox sessions: thin wrappers that install crosslane and call its invoke tasks. `nox -l` lists them."""

from __future__ import annotations

import sys
from pathlib import Path

import nox
from nox.logger import logger

nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).parent
# crosslane.sessions and the loader need only the standard library and packaging (nox's own dependency): importable
# here before crosslane itself is installed into a session.
sys.path.insert(0, str(ROOT / "scripts"))
from crosslane import sessions as planned  # noqa: E402

PLAN, REFUSED = planned.listed(ROOT / "versions.toml")
if REFUSED:
    logger.warning(f"versions.toml is refused, so only the arch sessions are listed: {REFUSED}")


def _install(session: nox.Session, extras: str = "") -> None:
    session.install("-e", f".{extras}")
    # invoke turns bytecode writing off for the commands it runs (its --write-pyc): compiled once here, an editable
    # install's modules are not compiled again by every command.
    session.run("python", "-m", "compileall", "-q", "scripts/crosslane", "tasks.py", silent=True)


def _register(spec: planned.Session) -> None:
    def run(session: nox.Session) -> None:
        _install(session)
        session.run("invoke", *spec.invoke_args(), *session.posargs)

    run.__doc__ = spec.doc
    nox.session(name=spec.name, tags=list(spec.tags))(run)


for _spec in PLAN:
    _register(_spec)


def _tests(session: nox.Session, marker: str) -> None:
    _install(session, "[dev]")
    session.run("invoke", "setup")
    session.run("coverage", "erase")
    session.run("coverage", "run", "-m", "pytest", "-m", marker, *session.posargs)
    session.run("coverage", "combine", success_codes=[0, 1])
    session.run("coverage", "report")


@nox.session
def tests(session: nox.Session) -> None:
    """The default test run (< 15 min): unit tests plus real cross builds and qemu smokes. Installs what it needs."""
    _tests(session, "not slow")


@nox.session(name="tests-slow")
def tests_slow(session: nox.Session) -> None:
    """The slow tier (minutes-long real builds); exit 5, no test selected, is fine while the tier is empty."""
    _install(session, "[dev]")
    session.run("invoke", "setup")
    session.run("pytest", "-m", "slow", *session.posargs, success_codes=[0, 5])


# The hostile suite is every test marked `hostile` (a new case joins it by its mark). Debian 12's own python3 (3.11.2)
# has no tarfile extraction filters, the venv's 3.11.7 has them: the suite runs on both (a session per interpreter;
# one that is not on the machine is skipped).
@nox.session(python=["3.11", "/usr/bin/python3"])
def reliability(session: nox.Session) -> None:
    """Hostile input at a larger budget: packs, reports, config values, mirrors, paths with spaces and signals, and
    the fuzzing of wheels, ELF files, packs, reports and versions.toml 20 times over."""
    _install(session, "[dev]")
    session.run("invoke", "setup")
    session.run("pytest", "-m", "hostile", *session.posargs, env={"CROSSLANE_FUZZ_FACTOR": "20"})


@nox.session
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, the consistency lint, versions.toml against its schema (taplo, as an editor checks it),
    and the workflow's zizmor audit and JSON-schema check."""
    _install(session, "[dev]")
    session.run("ruff", "check", ".")
    session.run("mypy")
    session.run("invoke", "consistency")
    session.run("taplo", "check", "versions.toml")  # its #:schema line: the committed versions.schema.json
    workflows = [str(p) for p in sorted((ROOT / ".github" / "workflows").glob("*.yml"))]
    session.run("zizmor", "--offline", "--persona=pedantic", *workflows)
    session.run("check-jsonschema", "--builtin-schema", "vendor.github-workflows", *workflows)


@nox.session
def actions(session: nox.Session) -> None:
    """The workflow run by act, offline: lint, plan, tests and one real leg of every job kind (invoke actions)."""
    _install(session, "[actions]")
    session.run("invoke", "setup")
    session.run("invoke", "actions", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks, each printing ratios measured side by side in one run."""
    # The venv a user's commands run in (what build-<arch> installs), not the dev one: there PyYAML (a dev extra)
    # makes invoke's vendored yaml load PyYAML too, and every command would start slower (bench/README.md).
    _install(session)
    session.install("auditwheel==6.8.2")  # bench_verify's reference (crosslane itself no longer depends on it)
    session.run("invoke", "setup")
    session.run("python", "bench/run.py", *session.posargs)

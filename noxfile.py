"""Nox sessions: thin wrappers that install crosslane and call its invoke tasks. `nox -l` lists them."""

from __future__ import annotations

import sys
from pathlib import Path

import nox

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

nox.options.reuse_venv = "yes"
nox.options.sessions = ["lint", "tests"]

ROOT = Path(__file__).parent
ARCHES = list(tomllib.loads((ROOT / "versions.toml").read_text())["arches"])


def _install(session: nox.Session, extras: str = "") -> None:
    session.install("-e", f".{extras}")


def _make_build(arch: str) -> None:
    @nox.session(name=f"build-{arch}")
    def build(session: nox.Session) -> None:
        _install(session)
        session.run("invoke", "all", "--arch", arch, *session.posargs)

    build.__doc__ = f"Setup, sysroot, build and smoke everything versions.toml lists for {arch}."

    @nox.session(name=f"smoke-{arch}")
    def smoke(session: nox.Session) -> None:
        _install(session)
        session.run("invoke", "smoke", "--arch", arch, *session.posargs)

    smoke.__doc__ = f"Smoke what is built for {arch} on every CPU profile under qemu-user."


for _arch in ARCHES:
    _make_build(_arch)


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


@nox.session
def lint(session: nox.Session) -> None:
    """ruff and mypy --strict."""
    _install(session, "[dev]")
    session.run("ruff", "check", ".")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks, each printing ratios measured side by side in one run."""
    _install(session, "[dev,bench]")
    session.run("invoke", "setup")
    session.run("python", "bench/run.py", *session.posargs)

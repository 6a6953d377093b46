"""The target side: the sysroot for the current versions.toml, and the target CPython's dev files."""

from __future__ import annotations

from crosslane.archs import info
from crosslane.errors import MissingPrerequisite
from crosslane.features.probes import Probes
from crosslane.files.paths import cache_dir
from crosslane.guest import cpython, sysroot
from crosslane.preflight.checks.base import Outcome, Subject
from crosslane.report import Verdict


def sysroot_present(probes: Probes, subject: Subject) -> Outcome:
    arch = subject.arch
    spec = probes.config.sysroot
    found = sysroot.find(spec, arch)
    fix = f"invoke sysroot --arch {arch}"
    if found is not None:
        return Outcome(status=Verdict.PASS, message=f"{found.path.name} matches versions.toml ({found.path.parent})")
    wanted = sysroot.sysroot_path(spec, arch)
    stale = sorted(p.name for p in (cache_dir() / "sysroots").glob(f"{arch}-*")
                   if (p / sysroot.MANIFEST).is_file())
    if stale:
        return Outcome(status=Verdict.FAIL,
                       message=f"{arch} sysroot is stale: have {', '.join(stale)}, versions.toml needs "
                               f"{wanted.name}", fix=fix)
    return Outcome(status=Verdict.FAIL, message=f"no {arch} sysroot in {wanted.parent}", fix=fix)


def python_applies(probes: Probes, subject: Subject) -> str | None:
    if sysroot.find(probes.config.sysroot, subject.arch) is None:
        return f"needs the {subject.arch} sysroot (see the sysroot check)"
    return None


def python_dev(probes: Probes, subject: Subject) -> Outcome:
    arch = subject.arch
    found = sysroot.find(probes.config.sysroot, arch)
    assert found is not None
    try:
        python = cpython.locate(found.path, arch)
    except MissingPrerequisite as exc:
        return Outcome(status=Verdict.FAIL, message=exc.message, fix=exc.fix or "")
    libdir = found.path / "usr/lib" / info(arch).multiarch
    libs = sorted(p.name for p in libdir.glob(f"libpython{python.version}.so*"))
    if not libs:
        return Outcome(status=Verdict.FAIL,
                       message=f"no libpython{python.version}.so in {libdir}: extensions could not link",
                       fix=f"add libpython3-dev to sysroot.packages and run invoke sysroot --arch {arch}")
    return Outcome(status=Verdict.PASS, message=f"python{python.version}: {python.pyconfig.relative_to(found.path)}, "
                                                f"{libs[0]} ({python.ext_suffix})")

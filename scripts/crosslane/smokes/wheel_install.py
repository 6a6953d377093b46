"""The install test: each of the lane's wheels installed the way a user on a board installs it, in a clean root.

A root of the Debian suite whose system Python the wheel is for, made by the sysroot machinery once and copied fresh
for every test, runs under qemu-user with no network: a venv without pip (ensurepip would start a target program from
a target program, which qemu-user cannot without binfmt_misc), the root's own pip installing the wheel from the lane's
index (shipping/index.py), then the genai payload from the venv. PASS needs pip's "Successfully installed D-V", the
payload's sentinel and the ORT it mapped being the wheel's own, inside the venv. Where the smoke already proved the
same ELF bytes (`Proof`, by sha256), the payload runs its short form: each run adds evidence, not a repeat. The steps
in full: docs/lanes.md, "Install test"; the evidence rule: docs/architecture.md, on what a run costs.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import shutil
import sys
import threading
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from packaging.utils import parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.config import Profile, SysrootSpec
from crosslane.context import Context
from crosslane.errors import MissingPrerequisite
from crosslane.files import atomic, stamps, wheelzip
from crosslane.files.paths import cache_dir
from crosslane.gates import elf, provenance
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from crosslane.process.runner import Result
from crosslane.report import Check, Row, Verdict
from crosslane.shipping import index
from crosslane.smokes import compare, payload, payloads, sentinel, site, target

VENV = PurePosixPath("/crosslane/venv")
# The generation of a wheel whose bytes the smoke proved: the first token is the prompt's pass, the second the one
# decode step over the kept past that every further token repeats (docs/architecture.md, on what a run costs).
SHORT_TOKENS = 2
WHEELS = PurePosixPath("/crosslane/wheels")  # the requirements downloaded on the host
INDEX = PurePosixPath("/crosslane/index")  # the lane's wheels, as `invoke index` writes them
PIP_TIMEOUT = 900.0
CHECK = "wheel-install"


def python_of(wheel: Path) -> str:
    """"3.14" for a cp314 wheel."""
    _, _, _, tags = parse_wheel_filename(wheel.name)
    interpreter = next(iter(tags)).interpreter
    return f"{interpreter[2]}.{interpreter[3:]}"


def root_spec(ctx: Context, component: str, version: str) -> SysrootSpec:
    spec = ctx.config.components[component].wheel
    base = ctx.config.sysroot
    return SysrootSpec(suite=spec.install_suites.get(version, base.suite), mirror=base.mirror, keyring=base.keyring,
                       packages=(f"python{version}", f"python{version}-venv", *spec.install_packages),
                       arch_packages={})


def fresh_copy(root: Path, work: Path) -> Path:
    """A clean copy of *root* for one test (the cached root is never written)."""
    shutil.rmtree(work, ignore_errors=True)
    work.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root, work, symlinks=True)
    return work


CA_BUNDLE = "etc/ssl/certs/ca-certificates.crt"


def ca_bundle(root: Path) -> None:
    """What ca-certificates' postinst (update-ca-certificates) makes, which unpacking a .deb does not run: the
    bundle Debian's pip reads at start-up, even with --no-index."""
    bundle = root / CA_BUNDLE
    certificates = sorted(c for c in (root / "usr/share/ca-certificates").glob("*/*.crt") if not c.is_symlink())
    if bundle.exists() or not certificates:
        return
    if bundle.is_symlink():  # a package's link that leads nowhere in the root: replaced, never written through
        bundle.unlink()
    bundle.parent.mkdir(parents=True, exist_ok=True)
    with open(bundle, "x", encoding="ascii", errors="replace") as out:  # "x": a link made meanwhile is no file
        out.write("".join(c.read_text(encoding="ascii", errors="replace").rstrip("\n") + "\n" for c in certificates))


def inside(root: Path, argv: Sequence[str], qemu: str, cpu: str, binds: Sequence[Path], cwd: str = "/",
           writable: Sequence[Path] = ()) -> list[str]:
    """*argv* run by qemu-user inside *root*: chroot (host/enter_root.py), private mounts, its own PID namespace and
    no network; the binds (qemu, the payload's helpers, the model) read-only: the board runs code that came with a
    wheel and its requirements. *writable*: folders bound writable, for a step that runs only the root's own code."""
    bound = [word for path in dict.fromkeys([Path(qemu), *binds]) for word in ("--bind-ro", str(path))]
    bound += [word for path in writable for word in ("--bind", str(path))]
    return ["unshare", "--mount", "--net", "--pid", "--fork", "--propagation", "private", "--", sys.executable,
            str(toolroot.ENTER),
            str(root), *bound, "--cwd", cwd, "--", qemu, "-cpu", cpu, *argv]


def pip_wheel(root: Path) -> Path | None:
    found = sorted((root / "usr/share/python-wheels").glob("pip-*.whl"))
    return found[-1] if found else None


def pip_tree(wheel: Path) -> Path:
    """The root's pip wheel unpacked once into the cache, by its sha256. Run from the wheel, a zip, pip compiled
    every module it imports on every start (zipimport keeps no bytecode), far more CPU under qemu than
    a start from an unpacked copy (docs/architecture.md, on what a run costs).
    The pip steps bind it writable, so the first run of each CPython leaves the bytecode the next ones read; pip
    runs no code of the wheels it installs, and the payload's step, which does, does not see it."""
    final = cache_dir() / "pip" / f"{wheel.stem}-{stamps.file_sha256(wheel)[:16]}"
    # The staging folder is named by the process: the install tests of one run unpack from threads of one.
    with PIP_TREE_LOCK:
        if not (final / PIP_MARK).is_file():
            unpack_pip(wheel, final)
    return final


def unpack_pip(wheel: Path, final: Path) -> None:
    """The wheel's plan (no link, no `..`, no bomb) and RECORD checked as any wheel's (wheelzip), then published."""
    final.parent.mkdir(parents=True, exist_ok=True)
    with atomic.publish_dir(final, lambda found: (found / PIP_MARK).is_file()) as work, \
            zipfile.ZipFile(wheel) as archive:
        hashes = wheelzip.unpack(archive, wheelzip.plan(archive, wheelzip.Limits()), work)
        problems = wheelzip.check_record(archive, hashes, work)
        if problems or not (work / PIP_MARK).is_file():
            raise MissingPrerequisite(f"{wheel}: {problems[0] if problems else f'holds no {PIP_MARK}'}",
                                      fix="remake the install root (its pip wheel is damaged): delete it from the "
                                          "sysroot cache")


PIP_MARK = "pip/__main__.py"
PIP_TREE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Board:
    """A clean copy of an install root, and how a program runs in it (qemu-user, the profile's -cpu)."""

    ctx: Context
    root: Path
    qemu: str
    cpu: str
    binds: tuple[Path, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def run(self, argv: Sequence[str], timeout: float, *, cwd: str = "/", writable: Sequence[Path] = ()) -> Result:
        # A board has none of the host's pip or Python settings (PIP_CERT, PIP_FIND_LINKS name host paths).
        host = [k for k in os.environ if k.startswith(("PIP_", "PYTHON"))]
        unset = [k for k in (*payload.HOST_ONLY_ENV, *host) if k not in self.env]
        return self.ctx.runner.run(inside(self.root, argv, self.qemu, self.cpu, self.binds, cwd, writable),
                                   env=dict(self.env), unset=unset, timeout=timeout, check=False, quiet=True)


def board(ctx: Context, arch: Arch, spec: SysrootSpec, work: Path, profile: Profile, *,
          binds: Sequence[Path] = (), env: Mapping[str, str] | None = None) -> Board:
    """The install root of *spec* (made once by the sysroot machinery), copied fresh into *work*, run under the
    arch's qemu-user."""
    root = sysroot_mod.ensure(ctx.runner, spec, arch)
    qemu = ctx.qemu(arch)
    base = {"HOME": "/crosslane/home", "PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1"}
    copy = fresh_copy(root.path, work)
    ca_bundle(copy)
    return Board(ctx, copy, qemu, profile.cpu, tuple(binds), {**base, **(env or {})})


def pip_install(where: Board, wheel: Path, timeout: float, lane: Sequence[Path] = ()) -> str | None:
    """venv, then pip install of *wheel* from the index of the lane's wheels (*lane*, default *wheel* alone) written
    into the root: None, or why it failed."""
    version = python_of(wheel)
    distribution, wheel_version, _, _ = parse_wheel_filename(wheel.name)
    (where.root / WHEELS.relative_to("/")).mkdir(parents=True, exist_ok=True)
    index.write(list(lane) or [wheel], where.root / INDEX.relative_to("/"), None)  # the board is crosslane's
    wheel_of_pip = pip_wheel(where.root)
    if wheel_of_pip is None:
        return f"the root has no pip wheel (usr/share/python-wheels); python{version}-venv brings python3-pip-whl"
    try:
        pip = pip_tree(wheel_of_pip)
    except (OSError, zipfile.BadZipFile, wheelzip.UnsafeWheel, MissingPrerequisite) as exc:
        return f"the root's pip wheel {wheel_of_pip.name} cannot be unpacked: {exc}"
    made = where.run([f"/usr/bin/python{version}", "-m", "venv", "--without-pip", "--system-site-packages",
                      str(VENV)], timeout)
    made_python = where.root / VENV.relative_to("/") / "bin/python"
    if not made.ok or not (made_python.is_file() or made_python.is_symlink()):  # a link into the root's /usr
        return f"python{version} -m venv failed: {last_line(made.output)}"
    # Wheels only: pip then runs no code of what it installs, which is what lets this step write pip's bytecode.
    result = where.run([str(VENV / "bin/python"), f"{pip}/pip", "install", "--only-binary=:all:", "--index-url",
                        f"file://{INDEX}/simple", "--find-links", str(WHEELS), f"{distribution}=={wheel_version}"],
                       timeout, writable=[pip])
    if f"{distribution}-{wheel_version}" not in installed(result.output):
        where.ctx.log.info("\n".join(f"    {line}" for line in result.output.splitlines()[-8:]))
        return f"pip install from the index did not install it: {last_line(result.output)}"
    return None


def arch_root_glibc(arch: Arch, spec: SysrootSpec) -> tuple[int, int] | None:
    found = sysroot_mod.find(spec, arch)
    return site.glibc_version(found) if found else None


def fetch_requirements(ctx: Context, arch: Arch, where: Board, wheel: Path, glibc: tuple[int, int] | None
                       ) -> list[str]:
    """The wheel's requirements for the target, downloaded on the host (the board has no network) into the
    folder pip installs from; the ones the index has no wheel of for the target (the root may still provide
    them: numpy from the distribution)."""
    version = python_of(wheel)
    folder = where.root / WHEELS.relative_to("/")
    folder.mkdir(parents=True, exist_ok=True)
    tags = site.platform_tags(arch, glibc)
    return [r for r in site.requirements(wheel, arch, version)
            if not site.pip_download(ctx, [r], tags, version, folder)]


def elf_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every ELF file below *folder* (relative path -> digest), links not followed."""
    return {path.relative_to(folder).as_posix(): stamps.file_sha256(path) for path in sorted(folder.rglob("*"))
            if not path.is_symlink() and is_elf(path)}


def is_elf(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(len(elf.MAGIC)) == elf.MAGIC


def installed_elf_hashes(where: Board, distribution: str) -> dict[str, str]:
    """sha256 of every ELF file pip installed into the venv (*distribution*'s and its requirements', such as PyPI's
    ORT for the control), by their RECORDs (path as written there -> digest). Empty, so nothing is proven, unless
    every entry can be accounted for: a line that is no RECORD row, or a file that resolves outside the venv (a link
    out of it), and a *distribution* with no RECORD or no ELF file of its own."""
    venv = (where.root / VENV.relative_to("/")).resolve()
    name = distribution.replace("-", "_").lower()
    found: dict[str, str] = {}
    own = False
    for site_dir in sorted((where.root / VENV.relative_to("/") / "lib").glob("python*/site-packages")):
        for record in sorted(site_dir.glob("*.dist-info/RECORD")):
            ours = record.parent.name.lower().startswith(f"{name}-")
            text = record.read_text(encoding="utf-8", errors="replace")
            for fields in csv.reader(io.StringIO(text)):
                if not fields:
                    continue
                if len(fields) != 3 or not fields[0]:
                    return {}
                path = (site_dir / fields[0]).resolve()
                if not path.is_relative_to(venv):
                    return {}
                if is_elf(path):
                    found[fields[0]] = stamps.file_sha256(path)
                    own = own or ours
    return found if own else {}


def short_generation(generation: Mapping[str, str], constrained: Sequence[int] = ()) -> dict[str, str]:
    """Tier 4 for SHORT_TOKENS tokens against the reference's first ones; tier 5, given the smoke's *constrained*
    tokens, for SHORT_TOKENS tokens against their first ones, else not armed."""
    reference = json.loads(generation["GENAI_EXPECTED_TOKENS"])[:SHORT_TOKENS]
    short = {k: v for k, v in generation.items() if k != "GENAI_CONSTRAINED"}
    if constrained and generation.get("GENAI_CONSTRAINED"):
        guided = {**json.loads(generation["GENAI_CONSTRAINED"]), "expected_tokens": list(constrained[:SHORT_TOKENS])}
        short["GENAI_CONSTRAINED"] = json.dumps(guided)
    return {**short, "GENAI_NEW_TOKENS": str(len(reference)), "GENAI_EXPECTED_TOKENS": json.dumps(reference)}


EXTENSION_MODULE = re.compile(r"\.(cpython-[^/]+|abi3)\.so$")


@dataclass(frozen=True, kw_only=True)
class Proof:
    """What runs proved, when they passed every armed tier on every profile of the arch (*by*: whose, for the row):
    the sha256 of every ELF file they ran (the smoke's site; a first install test's venv) and the tokens tier 5 made
    on the default profile."""

    hashes: frozenset[str] = frozenset()
    constrained: tuple[int, ...] = ()
    by: str = "the smoke's"  # whose runs: the row names them


def guided_tokens(detail: str, generation: Mapping[str, str]) -> tuple[int, ...]:
    """The tokens tier 5 made in a run (its sentinel's *detail*), when tier 5 was armed and the run's list is all token
    ids: anything else proves nothing (the runs that would meet them run tier 5 in full)."""
    guided = (compare.outputs_from_detail(detail) or {}).get("constrained_tokens")
    return tuple(guided) if "GENAI_CONSTRAINED" in generation and isinstance(guided, list) and \
        all(type(t) is int for t in guided) else ()


def evidence(installed: Mapping[str, str], proof: Proof, *, guided: bool = True) -> tuple[str, dict[str, str]]:
    """How much the install test's payload runs, from what pip installed (*installed*: path -> sha256) against the
    smoke's *proof*: "same" (every ELF file proven: the short generation, no tier 5), "library" (every file but
    CPython extension modules proven, and the smoke's tier-5 tokens known: the short generation and a short tier 5,
    so every call into the new extensions is still made once and compared exactly; with tier 5 not armed (*guided*
    false) the short generation alone), else "full"; and the files not proven."""
    unproven = {path: digest for path, digest in installed.items() if digest not in proof.hashes}
    if not installed or not proof.hashes:
        return "full", unproven
    if not unproven:
        return "same", unproven
    if (proof.constrained or not guided) and all(EXTENSION_MODULE.search(path) for path in unproven):
        return "library", unproven
    return "full", unproven


def install_one(ctx: Context, arch: Arch, component: str, wheel: Path, generation: dict[str, str],
                base_timeout: float, lane: Sequence[Path] = (), proof: Proof = Proof()) -> tuple[Row, Proof]:
    """The install test of *wheel*: its row, and what it proved when it ran every tier and passed (the bytes pip
    installed, by sha256, and its tier-5 tokens), else nothing."""
    version = python_of(wheel)
    _, wheel_version, _, _ = parse_wheel_filename(wheel.name)
    identifier = f"{wheel.name.split('-')[2]}-{info(arch).wheel_platform}"
    spec = root_spec(ctx, component, version)
    profile = ctx.default_profile_of(component, arch)

    def verdict(state: Verdict, reason: str, proved: Proof = Proof()) -> tuple[Row, Proof]:
        return Row(component=component, arch=arch, check=Check.INSTALL, verdict=state, reason=f"{wheel.name}: {reason}",
                   subject=f"{CHECK}:{identifier}", profile=profile.name), proved

    program = payload.Payload.builtin("genai_payload", "GENAI", env={
        "GENAI_PIN": str(wheel_version), "GENAI_EXPECTED_MACHINE": str(info(arch).elf_machine), **generation})
    env = {k: v for k, v in payload.environment(program).items() if k != "PYTHONPATH"}
    binds = [Path(env["CROSSLANE_PAYLOAD_HELPERS"])]
    if generation.get("GENAI_MODEL_DIR"):
        binds.append(Path(generation["GENAI_MODEL_DIR"]))
    with ctx.log.group(f"install test: {wheel.name} in a clean {spec.suite} {arch} root"):
        where = board(ctx, arch, spec, ctx.component_dir(arch, component) / "install-test" / identifier, profile,
                      binds=binds, env=env)
        absent = fetch_requirements(ctx, arch, where, wheel, arch_root_glibc(arch, spec))
        failed = pip_install(where, wheel, payload.timeout_for(PIP_TIMEOUT, arch, profile), lane)
        if failed and absent:
            # Not the wheel's defect, and not a pass: what the requirement's index lacks, by name.
            return verdict(Verdict.SKIP, f"{failed}; the index has no wheel of {', '.join(absent)} for cp"
                                         f"{version.replace('.', '')} {arch} and the {spec.suite} root does not "
                                         "provide it: a user cannot install it either")
        if failed:
            return verdict(Verdict.FAIL, failed)
        distribution, _, _, _ = parse_wheel_filename(wheel.name)
        ours = installed_elf_hashes(where, str(distribution))
        how, unproven = evidence(ours, proof, guided="GENAI_CONSTRAINED" in generation) \
            if "GENAI_EXPECTED_TOKENS" in generation else ("full", {})
        if how != "full":
            changed = short_generation(generation, proof.constrained if how == "library" else ())
            where = dataclasses.replace(where, env={k: v for k, v in {**where.env, **changed}.items()
                                                    if k in changed or k != "GENAI_CONSTRAINED"})
        outcome = run_payload(ctx, where, program.name, payload.timeout_for(base_timeout, arch, profile))
        if outcome.verdict is not Verdict.PASS:
            return verdict(Verdict.FAIL, f"installed with pip; the payload in the venv: {outcome.reason}")
        wrong = wrong_ort(ctx, arch, component, where, loaded_ort(outcome.detail))
        if wrong:
            return verdict(Verdict.FAIL, wrong)
        said, proved = "", Proof()
        if how == "same":
            said = (f"; the same bytes as {proof.by} ({len(ours)} ELF files by sha256, every tier passed on every "
                    f"profile): {SHORT_TOKENS} tokens against the reference's first")
        elif how == "library":
            said = library_said(proof, ours, unproven, version, guided="GENAI_CONSTRAINED" in where.env)
        elif ours and "GENAI_EXPECTED_TOKENS" in generation:  # every tier ran: what it passed with is proven
            proved = Proof(hashes=frozenset(ours.values()), constrained=guided_tokens(outcome.detail, generation),
                           by=f"the {identifier} install test's")
        return verdict(Verdict.PASS, f"pip install from the lane's index into a clean {spec.suite} root "
                                     f"(python{version}, "
                                     f"venv --system-site-packages for {', '.join(spec.packages[2:]) or 'nothing'}) "
                                     f"on {profile.name}: {payload.summary(outcome.detail)}{said}", proved)


def run_payload(ctx: Context, where: Board, name: str, timeout: float) -> sentinel.Outcome:
    """The payload run by the venv's python in the root; on anything but a PASS its last protocol lines are shown."""
    bootstrap = payloads.path("bootstrap").read_text(encoding="utf-8")
    result = where.run([str(VENV / "bin/python"), "-s", "-B", "-u", "-c", bootstrap, name], timeout)
    outcome = sentinel.decide(name, result.output, result.returncode, timed_out=result.timed_out)
    if outcome.verdict is not Verdict.PASS:
        shown = payload.protocol_lines(result.output) or result.output.splitlines()
        ctx.log.info("\n".join(f"    {line}" for line in shown[-8:]))
    return outcome


def wrong_ort(ctx: Context, arch: Arch, component: str, where: Board, loaded: str) -> str:
    """Why the ORT the payload mapped is not the one it must be ("" when it is): a wheel that bundles ORT must map
    its own copy, which is the chain's build; one that requires onnxruntime must map what pip installed."""
    if not loaded.startswith(str(VENV) + "/"):
        return f"installed; the payload mapped ORT {loaded or 'none'}, not the one in {VENV}"
    spec = ctx.config.components[component]
    if spec.wheel.bundle.get(arch):
        chain = [ctx.component_dir(arch, dep) / "install" for dep in spec.dependencies(arch)]
        wrong = [r for r in (provenance.check_loaded(loaded, where.root, c, arch, component) for c in chain)
                 if r.verdict is not Verdict.PASS]
        return f"installed and ran, but {wrong[0].reason}" if wrong else ""
    if "/site-packages/onnxruntime/" not in loaded:
        return f"installed and ran, but ORT came from {loaded}, not the onnxruntime requirement pip installed"
    return ""


def library_said(proof: Proof, ours: Mapping[str, str], unproven: Mapping[str, str], version: str, *,
                 guided: bool) -> str:
    """What a PASS rests on when only the library's bytes are the reference's: the extension modules ran short."""
    also = f" and {SHORT_TOKENS} guided tokens against {proof.by} first" if guided else ""
    return (f"; {proof.by} library bytes ({len(ours) - len(unproven)} of {len(ours)} ELF files by sha256, "
            f"every tier passed on every profile), extension modules built for python{version} "
            f"({', '.join(PurePosixPath(p).name for p in sorted(unproven))}): {SHORT_TOKENS} tokens against "
            f"the reference's first{also}")


def installed(output: str) -> set[str]:
    """What pip's own "Successfully installed a-1 b-2 …" line names (its requirements come first, sorted)."""
    prefix = "Successfully installed "
    return {word for line in output.splitlines() if line.startswith(prefix)
            for word in line.removeprefix(prefix).split()}


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def loaded_ort(detail: str) -> str:
    try:
        return str(json.loads(detail[detail.index("{"):]).get("ort_library", ""))
    except (ValueError, AttributeError, RecursionError):  # not a JSON object a payload writes
        return ""


def run(ctx: Context, arch: Arch, component: str, wheels: Sequence[Path], generation: dict[str, str],
        base_timeout: float, proof: Proof = Proof()) -> list[Row]:
    """One row per wheel; the tests run one per core. *proof*: what the smoke's runs proved on every profile of
    *arch* (Proof). With nothing proven on an arch of one profile (the amd64 control's wheels, which map PyPI's ORT,
    loaded by no smoke), the first wheel's test runs every tier first, and what it passed with is the proof of the
    others: another CPython's wheel of the same build holds the same library bytes and PyPI's ORT the same
    libonnxruntime.so (one sha256 across its cp313 and cp314 wheels; docs/architecture.md, on what a run costs)."""
    def test(given: Proof) -> Callable[[Path], tuple[Row, Proof]]:
        return lambda w: install_one(ctx, arch, component, w, generation, base_timeout, wheels, given)

    chained = not proof.hashes and len(wheels) > 1 and len(ctx.config.arches[arch].profiles) == 1
    if not chained:
        return [row for row, _ in target.per_item(list(wheels), test(proof))]
    [(first, proved)] = target.per_item(list(wheels[:1]), test(proof))
    return [first, *(row for row, _ in target.per_item(list(wheels[1:]), test(proved)))]

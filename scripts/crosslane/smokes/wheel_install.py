"""The install test: each of the lane's wheels installed the way a user on a board installs it, in a clean root.

For a wheel of CPython X.Y: a root of the Debian suite whose system Python that is (`wheel.install_suites`,
default the sysroot's suite) holding python X.Y, its venv module and `wheel.install_packages` only (the
distribution packages that stand for requirements no index has a wheel of for the arch: numpy on riscv64),
made by the sysroot machinery (apt, the archive's signatures) once and copied fresh for every test. Inside the
copy (chroot, a private mount and network namespace: no network), under qemu-user with the arch's default
CPU profile:

    pythonX.Y -m venv --without-pip --system-site-packages /crosslane/venv
    /crosslane/venv/bin/python <the root's pip wheel>/pip install --no-index --find-links /crosslane/wheels D==V
    /crosslane/venv/bin/python <genai payload>     (tiers 1–5 with the smoke's model)

`--without-pip`: venv runs ensurepip in a child process, and qemu-user cannot start a target binary from a
target binary without binfmt_misc; the pip it would install is the distribution's wheel, run here directly.
PASS needs pip's own "Successfully installed D-V" line, the payload's sentinel (tier 4's tokens equal the
host reference) and the ORT it mapped being the one the wheel bundles, inside the venv.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from packaging.utils import parse_wheel_filename

from crosslane.archs import Arch, info
from crosslane.config import SysrootSpec
from crosslane.context import Context
from crosslane.gates import provenance
from crosslane.guest import sysroot as sysroot_mod
from crosslane.host import toolroot
from crosslane.report import Check, Row, Verdict
from crosslane.smokes import payload, payloads, sentinel, target

VENV = PurePosixPath("/crosslane/venv")
WHEELS = PurePosixPath("/crosslane/wheels")
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


def inside(root: Path, argv: Sequence[str], qemu: str, cpu: str, binds: Sequence[Path]) -> list[str]:
    """*argv* run by qemu-user inside *root*: chroot (host/enter_root.py), private mounts, no network."""
    bound = [word for path in dict.fromkeys([Path(qemu), *binds]) for word in ("--bind", str(path))]
    return ["unshare", "--mount", "--net", "--propagation", "private", "--", sys.executable, str(toolroot.ENTER),
            str(root), *bound, "--cwd", "/", "--", qemu, "-cpu", cpu, *argv]


def pip_wheel(root: Path) -> PurePosixPath | None:
    found = sorted((root / "usr/share/python-wheels").glob("pip-*.whl"))
    return PurePosixPath("/") / found[-1].relative_to(root) if found else None


def install_one(ctx: Context, arch: Arch, component: str, wheel: Path, generation: dict[str, str],
                base_timeout: float) -> Row:
    version = python_of(wheel)
    distribution, wheel_version, _, _ = parse_wheel_filename(wheel.name)
    identifier = f"{wheel.name.split('-')[2]}-{info(arch).wheel_platform}"
    spec = root_spec(ctx, component, version)
    arch_cfg = ctx.config.arches[arch]
    profile = arch_cfg.profile(arch_cfg.default_profile)

    def verdict(state: Verdict, reason: str) -> Row:
        return Row(component, arch.value, Check.INSTALL, state, f"{wheel.name}: {reason}", subject=CHECK,
                   profile=profile.name)
    with ctx.log.group(f"install test: {wheel.name} in a clean {spec.suite} {arch} root"):
        root = sysroot_mod.ensure(ctx.runner, spec, arch)
        work = fresh_copy(root.path, ctx.component_dir(arch, component) / "install-test" / identifier)
        (work / WHEELS.relative_to("/")).mkdir(parents=True)
        shutil.copy2(wheel, work / WHEELS.relative_to("/") / wheel.name)
        pip = pip_wheel(work)
        if pip is None:
            return verdict(Verdict.FAIL, f"the {spec.suite} root has no pip wheel (usr/share/python-wheels); "
                                         f"python{version}-venv should bring python3-pip-whl")
        qemu = ctx.runner.which(info(arch).qemu_binary, fix=f"invoke setup --arch {arch}")
        program = payload.Payload.builtin("genai_payload", "GENAI", env={
            "GENAI_PIN": str(wheel_version), "GENAI_EXPECTED_MACHINE": str(info(arch).elf_machine), **generation})
        env = {**payload.environment(program), "HOME": "/crosslane/home", "PIP_NO_CACHE_DIR": "1",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
        env.pop("PYTHONPATH", None)
        binds = [Path(env["CROSSLANE_PAYLOAD_HELPERS"])]
        if generation.get("GENAI_MODEL_DIR"):
            binds.append(Path(generation["GENAI_MODEL_DIR"]))
        unset = [k for k in payload.HOST_ONLY_ENV if k not in env]

        def run(argv: Sequence[str], timeout: float) -> tuple[bool, str]:
            result = ctx.runner.run(inside(work, argv, qemu, profile.cpu, binds), env=env, unset=unset,
                                    timeout=timeout, check=False, quiet=True)
            return result.ok, result.output

        timeout = payload.timeout_for(PIP_TIMEOUT, arch, profile)
        ok, output = run([f"/usr/bin/python{version}", "-m", "venv", "--without-pip", "--system-site-packages",
                          str(VENV)], timeout)
        if not ok or not (work / VENV.relative_to("/") / "bin/python").exists():
            return verdict(Verdict.FAIL, f"python{version} -m venv failed: {last_line(output)}")
        python = str(VENV / "bin/python")
        ok, output = run([python, f"{pip}/pip", "install", "--no-index", "--find-links", str(WHEELS),
                          f"{distribution}=={wheel_version}"], timeout)
        installed = f"Successfully installed {distribution}-{wheel_version}"
        if installed not in output:
            ctx.log.info("\n".join(f"    {line}" for line in output.splitlines()[-8:]))
            return verdict(Verdict.FAIL, f"pip install --no-index did not install it: {last_line(output)}")
        bootstrap = payloads.path("bootstrap").read_text(encoding="utf-8")
        result = ctx.runner.run(inside(work, [python, "-s", "-B", "-u", "-c", bootstrap, program.name], qemu,
                                       profile.cpu, binds), env=env, unset=unset, check=False, quiet=True,
                                timeout=payload.timeout_for(base_timeout, arch, profile))
        outcome = sentinel.decide(program.name, result.output, result.returncode, timed_out=result.timed_out)
        if outcome.verdict is not Verdict.PASS:
            shown = payload.protocol_lines(result.output) or result.output.splitlines()
            ctx.log.info("\n".join(f"    {line}" for line in shown[-8:]))
            return verdict(Verdict.FAIL, f"installed with pip; the payload in the venv: {outcome.reason}")
        loaded = loaded_ort(outcome.detail)
        if not loaded.startswith(str(VENV) + "/"):
            return verdict(Verdict.FAIL, f"installed; the payload mapped ORT {loaded or 'none'}, not the one in "
                                         f"{VENV}")
        chain = [ctx.component_dir(arch, dep) / "install" for dep in ctx.config.components[component].depends]
        origin = [provenance.check_loaded(loaded, work, c, arch, component) for c in chain]
        wrong = [r for r in origin if r.verdict is not Verdict.PASS]
        if wrong:
            return verdict(Verdict.FAIL, f"installed and ran, but {wrong[0].reason}")
        return verdict(Verdict.PASS, f"pip install --no-index into a clean {spec.suite} root (python{version}, "
                                     f"venv --system-site-packages for {', '.join(spec.packages[2:]) or 'nothing'}) "
                                     f"on {profile.name}: {payload.summary(outcome.detail)}")


def last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def loaded_ort(detail: str) -> str:
    try:
        return str(json.loads(detail[detail.index("{"):]).get("ort_library", ""))
    except ValueError:
        return ""


def run(ctx: Context, arch: Arch, component: str, wheels: Sequence[Path], generation: dict[str, str],
        base_timeout: float) -> list[Row]:
    """One row per wheel; the tests run one per core."""
    return target.per_item(list(wheels), lambda w: install_one(ctx, arch, component, w, generation, base_timeout))

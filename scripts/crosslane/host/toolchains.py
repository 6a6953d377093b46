"""Compilers per (toolchain, arch): where they are, their version, and what they can build.

Whether a compiler can build RVV intrinsics is decided by compiling a probe, never by reading a
version string. A toolchain with a tool root (`toolchains.<name>.toolroot`) runs the root's cross compilers:
CMake, ninja and ccache stay the host's and call a wrapper per compiler that enters the root with the folders a
compile reads and writes bound at their own paths (host/toolroot.py); the probes and the stamp's identity are the
same as a host compiler's, through the wrapper.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from crosslane.archs import Arch, info
from crosslane.config import Toolchain, ToolRootSpec
from crosslane.errors import MissingPrerequisite
from crosslane.files.paths import build_root, cache_dir
from crosslane.host import probecache, toolroot
from crosslane.process.runner import Runner

RVV_PROBE = """\
#include <riscv_vector.h>
float probe(const float *a, const float *b, unsigned long n) {
    size_t vl = __riscv_vsetvl_e32m1(n);
    vfloat32m1_t va = __riscv_vle32_v_f32m1(a, vl);
    vfloat32m1_t vb = __riscv_vle32_v_f32m1(b, vl);
    vfloat32m1_t acc = __riscv_vfmul_vv_f32m1(va, vb, vl);
    vfloat32m1_t zero = __riscv_vfmv_v_f_f32m1(0.0f, vl);
    return __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredosum_vs_f32m1_f32m1(acc, zero, vl));
}
"""


@dataclass(frozen=True)
class Compiler:
    """A cross compiler found on the host: its toolchain, family, arch, argv and version."""

    toolchain: str
    family: str
    arch: Arch
    cc: tuple[str, ...]
    cxx: tuple[str, ...]
    version: str
    # Flags every compile and link for this arch needs (e.g. clang's --target).
    target_flags: tuple[str, ...]
    linker_flags: tuple[str, ...]

    @property
    def identity(self) -> str:
        return f"{self.family} {self.version} {' '.join(self.cc)}"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


VERSION = re.compile(r"[0-9]{1,3}(\.[0-9]{1,5}){0,3}")  # what -dumpversion / -dumpfullversion print: 19, 12.2.0


def _setup_fix(arch: Arch) -> str:
    return f"invoke setup --arch {arch}"


def _version(runner: Runner, cc: str, flag: str) -> str:
    output = probecache.version_output(runner, [cc, flag])
    if isinstance(output, probecache.Failed):
        raise MissingPrerequisite(f"{cc} {flag} failed ({output.reason}): the compiler does not run",
                                  fix="reinstall it (invoke setup)")
    version = output.strip()
    if not VERSION.fullmatch(version):  # exit 0 alone is no evidence this is the compiler it claims to be
        raise MissingPrerequisite(f"{cc} {flag} printed {' '.join(version.split())[:120]!r}, not a version",
                                  fix="check that it is a working compiler (reinstall it: invoke setup)")
    return version


@dataclass(frozen=True)
class RootPlaces:
    """What a compiler run from a tool root sees of the host: the folders it writes (build tree, repository, the
    temporary folder its probes compile in) and those it only reads (the cache: sources, sysroots)."""

    binds: tuple[Path, ...]
    read_only: tuple[Path, ...] = ()


def ccache_setting(runner: Runner, key: str) -> str | None:
    """This user's ccache setting *key* (`ccache --get-config`), None without ccache or a value."""
    if runner.find("ccache") is None:
        return None
    found = runner.run(["ccache", "--get-config", key], probe=True, quiet=True, check=False, timeout=60)
    return (found.output.strip() or None) if found.ok else None


def _target(link: Path) -> Path:
    try:
        return link.resolve()
    except (RuntimeError, OSError):  # a loop of links (RuntimeError before Python 3.13)
        raise MissingPrerequisite(f"{link}: a link in the cache that leads nowhere (a loop)",
                                  fix=f"remove it (rm {link}) or point it at another cache's folder") from None


def places_for(runner: Runner, repo: Path) -> RootPlaces:
    """What a compile of this repository's builds touches: the build tree and the repository (tree sources,
    patches), the temporary folder (the probes), ccache's folders (it has the compiler preprocess into its own
    temporary folder), and read-only the cache (staged sources, sysroots)."""
    ccache = [Path(value) for key in ("cache_dir", "temporary_dir")
              if (value := ccache_setting(runner, key)) and value.startswith("/")]
    cache = cache_dir()
    # A cache may hold links to another's sysroots and tool roots (shared, read-only): their targets are bound too.
    linked = [_target(child) for child in sorted(cache.iterdir()) if child.is_symlink()] if cache.is_dir() else []
    return RootPlaces(binds=tuple(dict.fromkeys([Path(tempfile.gettempdir()), repo, build_root(repo), *ccache])),
                      read_only=tuple(dict.fromkeys([cache, *linked])))


def root_wrappers(runner: Runner, spec: ToolRootSpec, tools: Sequence[str], places: RootPlaces) -> dict[str, str]:
    """tool → a wrapper that runs the root's /usr/bin/<tool>; written once per root and places, in the cache's
    toolchains/ (its path names the root's key, so the compiler's identity in a stamp changes with the root)."""
    found = toolroot.find(spec)
    if found is None:
        raise MissingPrerequisite(f"the tool root {spec.name} is not made (its compilers run from it)",
                                  fix="invoke sources --arch <arch> (it makes the job's tool roots)")
    mode = toolroot.require_mode(runner)
    # The wrapper is a compiler's identity (the stamp, ccache's compiler check): it names the base interpreter and a
    # copy of enter_root.py beside it, never a venv's (each nox session has its own), so every session shares it.
    enter = toolroot.ENTER.read_text()
    scripts = {tool: toolroot.wrapper_script(found, f"/usr/bin/{tool}", binds=places.binds, mode=mode,
                                             read_only=places.read_only)
               .replace(shlex.quote(sys.executable), shlex.quote(getattr(sys, "_base_executable", sys.executable)), 1)
               for tool in tools}
    # The root's packages too: a root made again from the same spec may hold a newer compiler (a rolling suite), and
    # ccache's compiler check and the probe cache go by the wrapper file.
    packages = json.dumps(sorted(found.packages().items()))
    digest = hashlib.sha256("\0".join([enter, packages, *(f"{t}\0{s}" for t, s in sorted(scripts.items()))]).encode())
    folder = cache_dir() / "toolchains" / f"{found.path.name}-{digest.hexdigest()[:16]}"
    files = {folder / "enter_root.py": enter, **{folder / tool: script.replace(
        shlex.quote(str(toolroot.ENTER)), shlex.quote(str(folder / "enter_root.py")), 1)
        for tool, script in scripts.items()}}
    if not runner.dry_run:
        for place in (*places.binds, *places.read_only):
            place.mkdir(parents=True, exist_ok=True)  # a bind needs its folder (the build tree may be new)
        for path, text in files.items():
            if path.is_file() and path.read_text() == text:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text)
            tmp.chmod(0o755)
            tmp.replace(path)  # another run may be using it: never seen half-written
    return {tool: str(folder / tool) for tool in tools}


def detect(runner: Runner, toolchain: Toolchain, arch: Arch, roots: Mapping[str, ToolRootSpec] | None = None,
           places: RootPlaces | None = None) -> Compiler:
    """The compilers of *toolchain* for *arch*; a tool root's need *roots* (config.toolroots) and *places*."""
    triplet = info(arch).triplet
    match toolchain.family:
        case "gcc" if toolchain.toolroot is not None:
            if roots is None or places is None or toolchain.toolroot not in roots:
                raise AssertionError(f"toolchain {toolchain.name}: a tool root's compilers need roots and places")
            wrappers = root_wrappers(runner, roots[toolchain.toolroot], (f"{triplet}-gcc", f"{triplet}-g++"), places)
            cc, cxx = wrappers[f"{triplet}-gcc"], wrappers[f"{triplet}-g++"]
            if runner.dry_run:
                return Compiler(toolchain.name, "gcc", arch, (cc,), (cxx,), "0", (), ())
            version = _version(runner, cc, "-dumpfullversion")
            return Compiler(toolchain.name, "gcc", arch, (cc,), (cxx,), version, (), ())
        case "gcc":
            cc = runner.which(f"{triplet}-gcc", fix=_setup_fix(arch))
            cxx = runner.which(f"{triplet}-g++", fix=_setup_fix(arch))
            version = _version(runner, cc, "-dumpfullversion")
            return Compiler(toolchain.name, "gcc", arch, (cc,), (cxx,), version, (), ())
        case "clang":
            suffix = f"-{toolchain.version}" if toolchain.version else ""
            cc = runner.which(f"clang{suffix}", fix=_setup_fix(arch))
            cxx = runner.which(f"clang++{suffix}", fix=_setup_fix(arch))
            lld = runner.which(f"ld.lld{suffix}", fix=_setup_fix(arch))
            version = _version(runner, cc, "-dumpversion")
            return Compiler(toolchain.name, "clang", arch, (cc,), (cxx,), version, (f"--target={triplet}",),
                            (f"-fuse-ld={lld}",))
        case "zig":
            result = runner.run([sys.executable, "-m", "ziglang", "version"], probe=True, quiet=True, check=False)
            if not result.ok:
                raise MissingPrerequisite("zig (PyPI ziglang) not importable", fix="pip install ziglang")
            zig_target = f"{info(arch).cmake_processor}-linux-gnu"
            base = (sys.executable, "-m", "ziglang")
            return Compiler(toolchain.name, "zig", arch, (*base, "cc"), (*base, "c++"), result.output.strip(),
                            ("-target", zig_target), ())
        case _:
            raise AssertionError(toolchain.family)


def can_compile_rvv(runner: Runner, compiler: Compiler) -> bool:
    """Compile the RVV probe; True only when the compiler produced an object."""
    flags = info(compiler.arch).vector_compile_flags
    if not flags:
        return False
    with tempfile.TemporaryDirectory(prefix="crosslane-rvv-") as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text(RVV_PROBE)
        obj = Path(tmp) / "probe.o"
        result = runner.run([*compiler.cc, *compiler.target_flags, *flags, "-ffreestanding", "-O2", "-c",
                             str(source), "-o", str(obj)], probe=True, quiet=True, check=False, timeout=60)
        return result.ok and obj.is_file()


# A C++ program against the sysroot as a build links one: <string>'s std::stoi and <cstdio>'s sscanf are where
# glibc >= 2.38 headers redirect to __isoc23_* symbols (C++ compiles with _GNU_SOURCE), which an older glibc lacks.
CXX_LINK_PROBE = """\
#include <cstdio>
#include <cstdlib>
#include <string>
int main(int argc, char **argv) {
    int n = 0;
    std::sscanf(argc > 1 ? argv[1] : "1", "%d", &n);
    return std::stoi(std::to_string(n)) + static_cast<int>(std::strtol("0", nullptr, 10));
}
"""
GLIBC_MAJOR = re.compile(r"^#define __GLIBC__ (\d+)$", re.MULTILINE)
GLIBC_MINOR = re.compile(r"^#define __GLIBC_MINOR__ (\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class SysrootLink:
    """Whether a compiler links a small C++ program against a sysroot, and which glibc it compiles with: the headers
    a compile against the sysroot reads, and its own (those of the C library it links unless the sysroot's comes
    first). A version is None when the preprocessor did not say."""

    linked: bool
    detail: str
    headers: str | None
    own: str | None


def _glibc_of(runner: Runner, compiler: Compiler, folder: Path, sysroot: Path | None) -> str | None:
    source = folder / "features.cpp"
    source.write_text("#include <features.h>\n")
    flags = [f"--sysroot={sysroot}"] if sysroot is not None else []
    result = runner.run([*compiler.cxx, *compiler.target_flags, *flags, "-E", "-dM", str(source)], probe=True,
                        quiet=True, check=False, timeout=60)
    major, minor = GLIBC_MAJOR.search(result.output), GLIBC_MINOR.search(result.output)
    return f"{major.group(1)}.{minor.group(1)}" if result.ok and major and minor else None


def _link_error(output: str) -> str:
    """The linker's first undefined symbol, else its last words."""
    for line in output.splitlines():
        if "undefined reference to" in line:
            return "undefined reference to " + line.split("undefined reference to", 1)[1].strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def link_against(runner: Runner, compiler: Compiler, sysroot: Path) -> SysrootLink:
    """Compile and link CXX_LINK_PROBE with --sysroot as the build does; linked only when the program was written."""
    with tempfile.TemporaryDirectory(prefix="crosslane-link-") as tmp:
        folder = Path(tmp)
        source, program = folder / "probe.cpp", folder / "probe"
        source.write_text(CXX_LINK_PROBE)
        result = runner.run([*compiler.cxx, *compiler.target_flags, *compiler.linker_flags, f"--sysroot={sysroot}",
                             "-O1", str(source), "-o", str(program)], probe=True, quiet=True, check=False,
                            timeout=120)
        linked = result.ok and program.is_file()
        detail = "" if linked else ("timed out" if result.timed_out else _link_error(result.output))
        return SysrootLink(linked, detail, _glibc_of(runner, compiler, folder, sysroot),
                           _glibc_of(runner, compiler, folder, None))

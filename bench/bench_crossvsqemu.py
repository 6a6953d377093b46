"""Cross vs emulated: the canary (a C library with an RVV kernel and a CPython extension) built by crosslane's cross
build, and the same CMake project built natively inside a riscv64 Debian root under qemu-user, which is how
cibuildwheel builds riscv64 wheels. ccache is off on both sides; each side runs configure, compile and link.

The emulated build needs the kernel to start riscv64 programs (gcc starts cc1, as and ld): a binfmt_misc handler
for riscv64 ELF files, registered for this bench with the F flag (the host's qemu-riscv64-static, opened once, so
it works inside the chroot) and removed after, as docker/setup-qemu-action does for cibuildwheel. A host that
refuses the registration prints a failed measurement. The root (gcc, cmake, ninja, python3-dev) is made once by
crosslane's sysroot machinery and copied fresh.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from common import ROOT, Measure, invoke, timed

BINFMT = Path("/proc/sys/fs/binfmt_misc")
HANDLER = "crosslane-bench-riscv64"
# The ELF header of a riscv64 executable or shared object, and its mask (qemu's own qemu-riscv64 entry).
MAGIC = r"\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xf3\x00"
MASK = r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff"
PACKAGES = ("dash", "gcc", "libc6-dev", "cmake", "ninja-build", "python3-dev")  # dash: ninja runs /bin/sh
CPU = "rv64,zba=true,zbb=true,zbs=true,v=true,vlen=128,elen=64,vext_spec=v1.0"


@contextlib.contextmanager
def riscv64_binfmt(qemu: str) -> Iterator[None]:
    mounted = False
    if not (BINFMT / "register").exists():
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", str(BINFMT)], check=True)
        mounted = True
    ours = not (BINFMT / "qemu-riscv64").exists()
    if ours:
        (BINFMT / "register").write_text(f":{HANDLER}:M::{MAGIC}:{MASK}:{qemu}:F\n")
    try:
        yield
    finally:
        if ours and (BINFMT / HANDLER).exists():
            (BINFMT / HANDLER).write_text("-1\n")
        if mounted:
            subprocess.run(["umount", str(BINFMT)], check=False)


def native_root(work: Path) -> Path:
    from crosslane import config
    from crosslane.archs import Arch
    from crosslane.config import SysrootSpec
    from crosslane.guest import sysroot
    from crosslane.log import Log
    from crosslane.process.runner import Runner

    base = config.load(ROOT / "versions.toml").sysroot
    spec = SysrootSpec(suite=base.suite, mirror=base.mirror, keyring=base.keyring, packages=PACKAGES,
                       arch_packages={})
    made = sysroot.ensure(Runner(Log(io.StringIO())), spec, Arch.RISCV64)
    copy = work / "root"
    shutil.copytree(made.path, copy, symlinks=True)
    shutil.copytree(ROOT / "components" / "canary", copy / "src")
    return copy


def emulated_build(root: Path, qemu: str) -> None:
    from crosslane.host import toolroot

    version = next(p.name for p in (root / "usr/include").glob("python3.*") if (p / "Python.h").is_file())
    suffix = f".cpython-{version.removeprefix('python').replace('.', '')}-riscv64-linux-gnu.so"
    enter = ["unshare", "--mount", "--propagation", "private", "--", sys.executable, str(toolroot.ENTER), str(root),
             "--bind", qemu, "--cwd", "/", "--"]
    env = {**os.environ, "QEMU_CPU": CPU}  # qemu-user's -cpu, for every program the kernel starts through binfmt
    for argv in (["/usr/bin/cmake", "-S", "/src", "-B", "/build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                  f"-DCANARY_PY_INCLUDE=/usr/include/{version}", f"-DCANARY_PY_EXT_SUFFIX={suffix}"],
                 ["/usr/bin/cmake", "--build", "/build"]):
        subprocess.run([*enter, *argv], check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    if not list((root / "build").rglob(f"*{suffix}")):
        raise ValueError(f"the emulated build made no {suffix}")


def run_bench() -> list[Measure]:
    qemu = shutil.which("qemu-riscv64-static")
    if qemu is None:
        raise OSError("qemu-riscv64-static not found (invoke setup --arch riscv64)")
    with tempfile.TemporaryDirectory(prefix="crosslane-bench-") as tmp:
        work = Path(tmp)
        cold = {"CCACHE_DISABLE": "1", "CROSSLANE_BUILD_DIR": str(work / "cross")}
        cross = timed(lambda: invoke("build", "--arch", "riscv64", "--component", "canary", env=cold))
        root = native_root(work)
        with riscv64_binfmt(qemu):
            emulated = timed(lambda: emulated_build(root, qemu))
    return [Measure("canary (C library + CPython extension) for riscv64: built natively under qemu-user "
                    "(cibuildwheel's way) vs crosslane's cross build", emulated, cross, "s", "report the ratio")]

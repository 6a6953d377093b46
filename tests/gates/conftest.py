"""Session fixtures for the gate tests: tiny real ELF files from the real compilers, a PyPI wheel."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from crosslane.log import Log
from crosslane.process.runner import Runner

ATOMIC_C = """
#include <stdint.h>
static uint8_t flag;
int bump(int x) { return __atomic_fetch_add(&flag, (uint8_t)x, __ATOMIC_SEQ_CST) + 1; }
"""
EXT_C = "void *PyInit_demo(void) { return 0; }\n"
LIBA_C = "int a(void) { return 1; }\n"
LIBB_C = "int a(void);\nint b(void) { return a() + 1; }\n"
PYPI_WHEEL = ("onnxruntime==1.32.0", "manylinux_2_28_aarch64", "3.13")


@pytest.fixture(scope="session")
def cross_elfs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Shared objects built by riscv64-linux-gnu-gcc, aarch64-linux-gnu-gcc and gcc (each in its own folder)."""
    root = tmp_path_factory.mktemp("elfs")
    (root / "atomic.c").write_text(ATOMIC_C)
    (root / "ext.c").write_text(EXT_C)
    (root / "a.c").write_text(LIBA_C)
    (root / "b.c").write_text(LIBB_C)
    runner = Runner(Log())
    rv, aa, host = "riscv64-linux-gnu-gcc", "aarch64-linux-gnu-gcc", "gcc"
    out = {
        "rv-atomic-nolibatomic": (rv, "atomic.c", "rv1/libuser.so", []),
        "rv-atomic-libatomic": (rv, "atomic.c", "rv2/libuser.so", ["-Wl,--no-as-needed", "-latomic"]),
        "rv-ext": (rv, "ext.c", "rv3/demo.cpython-313-riscv64-linux-gnu.so", []),
        "rv-ext-nosuffix": (rv, "ext.c", "rv4/demo.so", []),
        "rv-liba": (rv, "a.c", "rv5/dep/liba.so", ["-Wl,-soname,liba.so"]),
        "aa-lib": (aa, "atomic.c", "aa/libuser.so", []),
        "host-ext": (host, "ext.c", "host/demo.cpython-313-x86_64-linux-gnu.so", []),
    }
    paths = {}
    for key, (cc, source, target, flags) in out.items():
        path = root / target
        path.parent.mkdir(parents=True, exist_ok=True)
        runner.run([cc, "-shared", "-fPIC", "-O1", "-o", path, root / source, *flags], quiet=True)
        paths[key] = path
    libb = root / "rv5" / "lib" / "libb.so"
    libb.parent.mkdir()
    runner.run([rv, "-shared", "-fPIC", "-o", libb, root / "b.c", "-L", root / "rv5" / "dep", "-la",
                "-Wl,-rpath,$ORIGIN/../dep", "-Wl,--enable-new-dtags"], quiet=True)
    paths["rv-libb-runpath"] = libb
    return paths


@pytest.fixture(scope="session")
def pypi_aarch64_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real aarch64 wheel from PyPI; skips (with pip's reason) when the index cannot be reached."""
    folder = tmp_path_factory.mktemp("pypi")
    requirement, platform, python = PYPI_WHEEL
    result = Runner(Log()).run([sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--platform",
                                platform, "--python-version", python, "--no-deps", "-d", folder, requirement],
                               check=False, timeout=600, quiet=True)
    wheels = sorted(folder.glob("*.whl"))
    if not result.ok or not wheels:
        pytest.skip(f"cannot download {requirement} for {platform} from the index: {result.tail(3)}")
    return wheels[0]

"""ONNX Runtime patch 003 (patches/onnxruntime/) on logging.cc's timestamp choice, as the pinned commit has it.

The fixture is the file's lines from the ORT_USE_CXX20_STD_CHRONO definition to the namespace alias it picks; the
preprocessor shows which operator<< a libstdc++ build and a libc++ build take, before and after the patch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.config import Config

LOGGING = "onnxruntime/core/common/logging/logging.cc"
# Fixture: onnxruntime 2897cd15 (upstream c267f8e2a0) onnxruntime/core/common/logging/logging.cc, lines 31-66.
CHOICE = r"""
// C++20 has std::chrono::operator<< for std::chrono::system_clock::time_point but we need to check if usage is valid.
// define temporary macro ORT_USE_CXX20_STD_CHRONO to determine whether to use the std::chrono or date implementation.
#define ORT_USE_CXX20_STD_CHRONO __cpp_lib_chrono >= 201803L

// Apply constraints for Apple builds
#if __APPLE__
#include <TargetConditionals.h>

// iOS check must be first as it also has TARGET_OS_MAC set
#if TARGET_OS_IOS
// iOS requires version 16.3
#if (defined(__IPHONE_OS_VERSION_MIN_REQUIRED) && __IPHONE_OS_VERSION_MIN_REQUIRED < 160300)
#undef ORT_USE_CXX20_STD_CHRONO
#endif

#elif TARGET_OS_MAC
// Xcode added support for C++20's std::chrono::operator<< in SDK version 14.4,
// but the target macOS version must also be >= 13.3 for it to be used.
#if (defined(__MAC_OS_X_VERSION_MAX_ALLOWED) && __MAC_OS_X_VERSION_MAX_ALLOWED < 140400) || \
    (defined(__MAC_OS_X_VERSION_MIN_REQUIRED) && __MAC_OS_X_VERSION_MIN_REQUIRED < 130300)
#undef ORT_USE_CXX20_STD_CHRONO
#endif

#endif
#endif  // __APPLE__

#if ORT_USE_CXX20_STD_CHRONO
namespace timestamp_stream_insertion_op_ns = std::chrono;
#else
#include "date/date.h"

namespace timestamp_stream_insertion_op_ns = ::date;
#endif

#undef ORT_USE_CXX20_STD_CHRONO

"""


def chosen(tree: Path, *library: str) -> str:
    """The namespace whose operator<< writes the timestamp, for a C++20 build with *library*'s macros."""
    (tree / "include/date").mkdir(parents=True, exist_ok=True)
    (tree / "include/date/date.h").write_text("")
    done = subprocess.run(["cpp", "-P", "-D__cpp_lib_chrono=201907L", *library, "-I", str(tree / "include"),
                           str(tree / LOGGING)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if "timestamp_stream_insertion_op_ns" in line)


@pytest.mark.spawns
def test_a_libstdcxx_build_writes_timestamps_with_date_s_header_only_operator(cfg: Config, tmp_path: Path) -> None:
    tree = tmp_path / "onnxruntime"
    (tree / LOGGING).parent.mkdir(parents=True)
    (tree / LOGGING).write_text(CHOICE)
    assert chosen(tree, "-D__GLIBCXX__=20260101").endswith("= std::chrono;")  # before: libstdc++'s std::format
    # The series' other patches need files this fixture lacks: this one is applied as the series applies each.
    spec = next(p for p in cfg.components["onnxruntime-src"].patches if p.path.name.startswith("003-"))
    assert Arch.RISCV64 in spec.arches
    done = subprocess.run(["patch", f"-p{spec.strip}", "--forward", "--batch", "-i", str(spec.path)], cwd=tree,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert chosen(tree, "-D__GLIBCXX__=20260101").endswith("= ::date;")
    assert chosen(tree).endswith("= std::chrono;")  # libc++ (no __GLIBCXX__): as upstream has it

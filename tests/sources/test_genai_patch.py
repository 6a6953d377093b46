"""The onnxruntime-genai riscv64 patches (patches/onnxruntime-genai/) on a fixture of their target files.

The fixture is cmake/target_platform.cmake reduced to the Linux branch of v0.15.2, with that branch's
text unchanged, the lines of src/python/py/_dll_directory.py that patch 002's hunk sees, the ORT_HOME branch of
cmake/ortlib.cmake that patch 003's sees and the three places patch 004 changes, so the real patches from patches/
apply to it as they do to the tagged tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crosslane.archs import Arch, info
from crosslane.cli import actions
from crosslane.config import Config
from crosslane_helpers import cmake_binary, quiet_context, tree_hash

FIXTURE = """\
# Fixture: onnxruntime-genai v0.15.2 cmake/target_platform.cmake, its non-Linux branches reduced.
if (MSVC)
  message(FATAL_ERROR "MSVC is not part of this fixture")
elseif(APPLE)
  message(FATAL_ERROR "APPLE is not part of this fixture")
elseif(ANDROID)
  message(FATAL_ERROR "ANDROID is not part of this fixture")
else()
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^arm64.*")
    set(genai_target_platform "arm64")
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^aarch64.*")
    set(genai_target_platform "arm64")
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|amd64)$")
    set(genai_target_platform "x64")
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "powerpc")
    set(genai_target_platform "powerpc")
  else()
    message(FATAL_ERROR "Unsupported architecture. CMAKE_SYSTEM_PROCESSOR: ${CMAKE_SYSTEM_PROCESSOR}")
  endif()
endif()
"""

DLL_DIRECTORY = """\
                _ = ctypes.CDLL(ort_path)

    elif _is_linux() or _is_macos():
        ort_package = importlib.util.find_spec("onnxruntime")
        if not ort_package:
            raise ImportError("Could not find the onnxruntime package.")
"""

ORTLIB = """\
# Fixture: onnxruntime-genai v0.15.2 cmake/ortlib.cmake, the ORT_HOME branch's non-Apple lines.
if (ORT_HOME)
  if (APPLE)
    message(FATAL_ERROR "APPLE is not part of this fixture")
  elseif (CMAKE_SYSTEM_NAME MATCHES "AIX")
    set(ORT_HEADER_DIR ${ORT_HOME}/include/onnxruntime)
    set(ORT_LIB_DIR ${ORT_HOME}/lib)
  else()
    set(ORT_HEADER_DIR ${ORT_HOME}/include)
    set(ORT_LIB_DIR ${ORT_HOME}/lib)
  endif()
endif()
message(STATUS "ORT_HEADER_DIR=${ORT_HEADER_DIR}")
"""

# Fixture: onnxruntime-genai v0.15.2's three places that name OrtApi::SessionReleaseCapturedGraph (patch 004), each
# with the lines its hunk sees.
RELEASE_CAPTURED_GRAPH = {
    "src/models/model.cpp": """\
State::~State() {
  // Release captured graph resources in the EP.
  // Note: the EP contract is to no-op when the id was never captured (e.g., when
  // graph_capture_this_run was always false for this State). The call is wrapped
  // in try/catch because destructors must not throw -- a throw during unwinding
  // would call std::terminate.
#if ORT_API_VERSION >= 27
  if (graph_capture_session_ && graph_id_value_ > 0) {
    try {
      graph_capture_session_->ReleaseCapturedGraph(graph_id_value_);
    } catch (...) {
      // Best-effort cleanup; swallow to keep the destructor non-throwing.
      if (g_log.enabled && g_log.ort_lib) {
        Log("ort_lib") << "ReleaseCapturedGraph(id=" << graph_id_value_
                       << ") failed: unknown exception" << std::endl;
      }
    }
  }
#endif

""",
    "src/models/onnxruntime_api.h": """\

  void Run(_In_opt_ const OrtRunOptions* run_options, const OrtIoBinding&);  ///< Wraps OrtApi::RunWithBinding

  void SetEpDynamicOptions(_In_opt_ const char* const* keys, const char* const* values, size_t kv_len);

#if ORT_API_VERSION >= 27
  void ReleaseCapturedGraph(int graph_annotation_id);  ///< Wraps OrtApi::SessionReleaseCapturedGraph (ORT 1.27+)
#endif

  static void operator delete(void* p) { Ort::api->ReleaseSession(reinterpret_cast<OrtSession*>(p)); }
  Ort::Abstract make_abstract;
""",
    "src/models/onnxruntime_inline.h": """\
inline void OrtSession::SetEpDynamicOptions(const char* const* keys, const char* const* values, size_t kv_len) {
  Ort::ThrowOnError(Ort::api->SetEpDynamicOptions(this, keys, values, kv_len));
}

#if ORT_API_VERSION >= 27
inline void OrtSession::ReleaseCapturedGraph(int graph_annotation_id) {
  Ort::ThrowOnError(Ort::api->SessionReleaseCapturedGraph(this, graph_annotation_id));
}
#endif

""",
}

# Evaluates the file the way onnxruntime-genai's CMakeLists reaches it on Linux, without a project().
CHECK = """\
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SIZEOF_VOID_P 8)
include(${GENAI_SRC}/cmake/target_platform.cmake)
message(STATUS "genai_target_platform=${genai_target_platform}")
"""

EXPECTED = {Arch.AMD64: "x64", Arch.ARM64: "arm64", Arch.RISCV64: "riscv64"}


@pytest.fixture
def genai_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "onnxruntime-genai"
    (tree / "cmake").mkdir(parents=True)
    (tree / "cmake/target_platform.cmake").write_text(FIXTURE)
    (tree / "src/python/py").mkdir(parents=True)
    (tree / "src/python/py/_dll_directory.py").write_text(DLL_DIRECTORY)
    (tree / "cmake/ortlib.cmake").write_text(ORTLIB)
    (tree / "src/models").mkdir(parents=True)
    for name, text in RELEASE_CAPTURED_GRAPH.items():
        (tree / name).write_text(text)
    return tree


def evaluate(cfg: Config, tree: Path, processor: str) -> subprocess.CompletedProcess[str]:
    script = tree.parent / "check_target_platform.cmake"
    script.write_text(CHECK)
    return subprocess.run([cmake_binary(cfg), f"-DGENAI_SRC={tree}", f"-DCMAKE_SYSTEM_PROCESSOR={processor}",
                           "-P", str(script)], capture_output=True, text=True, timeout=60)


@pytest.mark.spawns
def test_patch_applies_then_reapplies_as_a_no_op(cfg: Config, genai_tree: Path) -> None:
    ctx = quiet_context(cfg)
    first = actions.patch(ctx, "onnxruntime-genai", Arch.RISCV64, str(genai_tree), check=False)
    assert [(r.verdict.value, r.reason.split(": ", 1)[1]) for r in first] == [("PASS", "APPLICABLE→applied")] * 4
    patched = tree_hash(genai_tree)
    assert 'elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^riscv64.*")' in (genai_tree / "cmake/target_platform.cmake"
                                                                       ).read_text()
    again = actions.patch(ctx, "onnxruntime-genai", Arch.RISCV64, str(genai_tree), check=True)
    assert [r.reason.split(": ", 1)[1] for r in again] == ["APPLIED (already; skipped)"] * 4
    assert "ORT_LIB_PATH" in (genai_tree / "src/python/py/_dll_directory.py").read_text()
    assert tree_hash(genai_tree) == patched


@pytest.mark.spawns
@pytest.mark.parametrize("arch", [Arch.AMD64, Arch.ARM64], ids=lambda a: a.value)
def test_patch_is_not_for_other_arches(cfg: Config, genai_tree: Path, arch: Arch) -> None:
    before = tree_hash(genai_tree)
    rows = actions.patch(quiet_context(cfg), "onnxruntime-genai", arch, str(genai_tree), check=False)
    assert [r.verdict.value for r in rows] == ["SKIP"] * 4 and all("NOT-FOR-ARCH" in r.reason for r in rows)
    assert tree_hash(genai_tree) == before


@pytest.mark.spawns
def test_riscv64_is_unsupported_before_and_recognised_after(cfg: Config, genai_tree: Path) -> None:
    processor = info(Arch.RISCV64).cmake_processor
    before = evaluate(cfg, genai_tree, processor)
    assert before.returncode != 0
    assert "Unsupported architecture" in before.stderr and "riscv64" in before.stderr
    actions.patch(quiet_context(cfg), "onnxruntime-genai", Arch.RISCV64, str(genai_tree), check=False)
    for arch, expected in EXPECTED.items():
        after = evaluate(cfg, genai_tree, info(arch).cmake_processor)
        assert after.returncode == 0, after.stderr
        assert f"genai_target_platform={expected}" in after.stdout


def header_dir(cfg: Config, tree: Path, ort_home: Path) -> str:
    done = subprocess.run([cmake_binary(cfg), f"-DORT_HOME={ort_home}", "-DCMAKE_SYSTEM_NAME=Linux", "-P",
                           str(tree / "cmake/ortlib.cmake")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return next(line.split("=", 1)[1] for line in (done.stdout + done.stderr).splitlines()
                if "ORT_HEADER_DIR=" in line)


@pytest.mark.spawns
def test_ort_headers_are_found_in_onnxruntime_s_own_install_layout(cfg: Config, genai_tree: Path,
                                                                    tmp_path: Path) -> None:
    installed, released = tmp_path / "installed", tmp_path / "released"
    (installed / "include/onnxruntime").mkdir(parents=True)
    (installed / "include/onnxruntime/onnxruntime_c_api.h").write_text("")
    (released / "include").mkdir(parents=True)
    (released / "include/onnxruntime_c_api.h").write_text("")
    assert header_dir(cfg, genai_tree, installed) == f"{installed}/include"  # before: the header is not there
    actions.patch(quiet_context(cfg), "onnxruntime-genai", Arch.RISCV64, str(genai_tree), check=False)
    assert header_dir(cfg, genai_tree, installed) == f"{installed}/include/onnxruntime"
    assert header_dir(cfg, genai_tree, released) == f"{released}/include"


def compiled_calls(tree: Path, api_version: int) -> list[str]:
    """The lines naming the captured-graph release that survive the preprocessor at *api_version*."""
    kept = []
    for name in RELEASE_CAPTURED_GRAPH:
        done = subprocess.run(["cpp", "-P", f"-DORT_API_VERSION={api_version}", str(tree / name)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        kept += [line for line in done.stdout.splitlines() if "ReleaseCapturedGraph(" in line]
    return kept


@pytest.mark.spawns
def test_an_api_27_without_the_captured_graph_release_compiles_no_call_to_it(cfg: Config, genai_tree: Path) -> None:
    before = compiled_calls(genai_tree, 27)  # the pinned ORT's API 27 lacks the member these call
    assert any("Ort::api->SessionReleaseCapturedGraph(" in line for line in before)
    actions.patch(quiet_context(cfg), "onnxruntime-genai", Arch.RISCV64, str(genai_tree), check=False)
    assert compiled_calls(genai_tree, 27) == []
    assert compiled_calls(genai_tree, 28) == before

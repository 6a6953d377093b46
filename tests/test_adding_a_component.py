"""The README's "Adding a component", run exactly as written: a small C project (a fixture git repository, staged
from a local mirror as the README's air-gapped section says) added to versions.toml alone, built for riscv64 and
the amd64 control, smoked by the declarative command smoke on every profile (its sentinel, its JSON output against
the control, the expected SIGILL on novector), and its ctest suite run on the profiles named."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from crosslane_helpers import REPO, fresh_cache

pytestmark = [pytest.mark.cross, pytest.mark.qemu, pytest.mark.spawns]

CMAKELISTS = """\
cmake_minimum_required(VERSION 3.20)
project(vsum C)
option(VSUM_RVV "the RVV kernel" OFF)
option(VSUM_ASM "the vector length checked in inline assembly (binutils' syntax)" OFF)
add_library(vsumk SHARED kernel.c)
if(VSUM_RVV AND CMAKE_SYSTEM_PROCESSOR MATCHES "riscv64")
  target_compile_options(vsumk PRIVATE -march=rv64gcv_zfh)
endif()
if(VSUM_ASM)
  target_compile_definitions(vsumk PRIVATE VSUM_ASM)
endif()
add_executable(vsum vsum.c)
target_link_libraries(vsum PRIVATE vsumk)
install(TARGETS vsumk LIBRARY DESTINATION lib)
enable_testing()
add_test(NAME vsum-self-test COMMAND vsum --check)
add_test(NAME vsum-half COMMAND vsum --half)
"""
KERNEL = """\
#include <stddef.h>
#ifdef __riscv_vector
#include <riscv_vector.h>
#endif

long vsum(const int *x, size_t n) {
    long total = 0;
#if defined(__riscv_vector) && defined(VSUM_ASM)
    unsigned long most;
    /* binutils' syntax (no ta/ma): GCC's assembler takes it, clang-19's refuses it */
    __asm__ volatile("vsetvli %0, %1, e32, m1" : "=r"(most) : "r"(n));
    if (most == 0) return -1;
#endif
#ifdef __riscv_vector
    for (size_t i = 0, vl; i < n; i += vl) {
        vl = __riscv_vsetvl_e32m1(n - i);
        vint32m1_t v = __riscv_vle32_v_i32m1(x + i, vl);
        vint32m1_t r = __riscv_vredsum_vs_i32m1_i32m1(v, __riscv_vmv_v_x_i32m1(0, 1), vl);
        total += __riscv_vmv_x_s_i32m1_i32(r);
    }
#else
    for (size_t i = 0; i < n; i++) total += x[i];
#endif
    return total;
}

/* A float through half precision and back: Zfh's fcvt.h.s/fcvt.s.h on riscv64 (rv64gcv_zfh) */
float vsum_half(volatile float x) {
    _Float16 h = (_Float16)x;
    return (float)h;
}
"""
SOURCE = """\
#include <stdio.h>
#include <string.h>

long vsum(const int *x, size_t n);
float vsum_half(float x);

int main(int argc, char **argv) {
    static int x[1000];
    for (int i = 0; i < 1000; i++) x[i] = i;
    long total = vsum(x, 1000);
    float half = vsum_half(0.1f);
    if (argc > 1 && strcmp(argv[1], "--check") == 0) return total == 499500 ? 0 : 1;
    if (argc > 1 && strcmp(argv[1], "--half") == 0) return half > 0.0999f && half < 0.1001f ? 0 : 1;
    if (argc > 1) {
        FILE *out = fopen(argv[1], "w");
        if (!out) return 2;
        fprintf(out, "{\\"n\\": 1000, \\"sum\\": %ld, \\"half\\": %.9g}\\n", total, half);
        fclose(out);
    }
    if (total == 499500) puts("vsum: OK");
    return total == 499500 ? 0 : 1;
}
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def readme_example(index: int = 0) -> str:
    """The *index*-th TOML block of the README's "Adding a component" section, as written."""
    section = (REPO / "README.md").read_text(encoding="utf-8").split("## Adding a component", 1)[1].split("\n## ")[0]
    return section.split("```toml\n")[1 + index].split("```", 1)[0]


@pytest.fixture
def project(tmp_path: Path, sysroots: object) -> tuple[Path, dict[str, str]]:
    upstream = tmp_path / "vsum"
    upstream.mkdir()
    (upstream / "CMakeLists.txt").write_text(CMAKELISTS)
    (upstream / "vsum.c").write_text(SOURCE)
    (upstream / "kernel.c").write_text(KERNEL)
    (upstream / "LICENSE").write_text("MIT License (the fixture's)\n")
    git(upstream, "init", "-q")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "vsum")
    commit = git(upstream, "rev-parse", "HEAD")
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream), str(tmp_path / "mirrors/you+vsum/repo")],
                   check=True)
    ours = (REPO / "versions.toml").read_text(encoding="utf-8")
    header = ours[:ours.index("\n[components.") + 1]
    example = readme_example()
    assert "<the commit>" in example
    (tmp_path / "versions.toml").write_text(header + example.replace("<the commit>", commit))
    env = {**os.environ, **fresh_cache(tmp_path),
           "CROSSLANE_GIT_MIRROR": str(tmp_path / "mirrors" / "{owner}+{name}" / "repo")}
    return tmp_path, env


def invoke(where: Path, env: dict[str, str], *args: str) -> tuple[int, list[dict[str, str]], str]:
    report = where / f"report-{args[0]}.json"
    done = subprocess.run([str(Path(sys.executable).parent / "invoke"), "--search-root", str(REPO), *args,
                           "--config", str(where / "versions.toml"), "--json", str(report)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1200)
    rows = json.loads(report.read_text()) if report.is_file() else []
    return done.returncode, rows, done.stdout + done.stderr


def test_the_readme_example_builds_smokes_and_tests_from_versions_toml_alone(
        project: tuple[Path, dict[str, str]]) -> None:
    where, env = project
    code, rows, output = invoke(where, env, "all", "--arch", "riscv64", "--component", "vsum")
    assert code == 0, output[-4000:]
    smokes = {r["profile"]: r for r in rows if r["check"] == "smoke" and r["component"] == "vsum"}
    assert set(smokes) == {"novector", "rvv128", "rvv256", "rvv512"}, rows
    assert all(r["verdict"] == "PASS" for r in smokes.values()), smokes
    assert smokes["novector"]["reason"] == "expected SIGILL: died of it on novector"
    # The sentinel, then the evidence that the sweep ran vector code (the RVV kernel is in lib/libvsumk.so); Zfh
    # was on for every profile (rvv128 has none of its own: the half-float conversion would be a SIGILL).
    assert smokes["rvv128"]["reason"].startswith("vsum: OK; RVV instructions in 1 of 2 ELF files"), smokes
    assert (where / "build/riscv64/vsum/install/bin/vsum").is_file()  # collected: the project installs no program
    parity = {r["profile"]: r for r in rows if r["check"] == "parity" and r["component"] == "vsum"}
    assert set(parity) == {"rvv128", "rvv256", "rvv512"}, rows
    assert all(r["verdict"] == "PASS" and r["reason"].startswith("= control") for r in parity.values()), parity
    # its papers came with it: the fixture's licence and an SBOM naming the pinned commit
    install = where / "build" / "riscv64" / "vsum" / "install"
    assert (install / "LICENSES/sources/vsum/LICENSE").read_text() == "MIT License (the fixture's)\n"
    assert git(where / "vsum", "rev-parse", "HEAD") in (install / "crosslane.cdx.json").read_text()

    code, rows, output = invoke(where, env, "upstream-tests", "--arch", "riscv64", "--component", "vsum")
    assert code == 0, output[-4000:]
    suites = {r["profile"]: r for r in rows if r["check"] == "tests" and r["component"] == "vsum"
              and re.search(r"\d+ cases", r["reason"])}
    assert {"rvv128", "rvv256"} <= set(suites) and "rvv512" not in suites, rows
    assert all(r["verdict"] == "PASS" and "2 passed" in r["reason"] for p, r in suites.items()
               if p.startswith("rvv")), suites
    parity = {r["profile"]: r for r in rows if r["check"] == "parity" and r["component"] == "vsum"}
    assert set(parity) == {"rvv128", "rvv256"}, rows
    assert all(r["verdict"] == "PASS" and "2 of the 2 cases" in r["reason"] for r in parity.values()), parity


def test_without_its_install_rpath_the_gate_names_the_library_the_program_cannot_load(
        project: tuple[Path, dict[str, str]]) -> None:
    where, env = project
    path = where / "versions.toml"
    text = path.read_text()
    assert ', "-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib"]' in text
    path.write_text(text.replace(', "-DCMAKE_INSTALL_RPATH=$ORIGIN/../lib"]', "]"))
    code, rows, output = invoke(where, env, "build", "--arch", "riscv64", "--component", "vsum")
    assert code == 1, output[-4000:]
    failed = [r for r in rows if r["verdict"] == "FAIL" and r["component"] == "vsum"]
    assert failed and "libvsumk.so" in failed[0]["reason"] and "bin/vsum" in failed[0]["reason"], failed


def test_a_command_smoke_without_evidence_is_refused(tmp_path: Path) -> None:
    from crosslane import config as config_mod
    from crosslane.errors import ConfigError

    ours = (REPO / "versions.toml").read_text(encoding="utf-8")
    example = ours[:ours.index("\n[components.") + 1] + readme_example().replace("<the commit>", "0" * 40)
    config_mod.parse(example, tmp_path / "versions.toml", tmp_path)  # as written, it loads
    # An expected signal on one profile is no evidence for the others: without a sentinel the smoke is refused.
    text = example.replace(
        'sentinel = "vsum: OK"                        # the evidence a run passed; its exit status alone never is\n',
        "")
    assert text != example
    with pytest.raises(ConfigError, match=re.escape("components.vsum.smoke: a command smoke names its evidence")):
        config_mod.parse(text, tmp_path / "versions.toml", tmp_path)
    with pytest.raises(ConfigError, match=r"components.vsum.smoke.args: unknown key for smoke kind 'command'; "
                                          r"did you mean 'argv'\?"):
        config_mod.parse(example.replace('argv = [', 'args = ['), tmp_path / "versions.toml", tmp_path)


@pytest.mark.parametrize(("change", "words"), [
    (('sentinel = "vsum: OK"', 'sentinel = ""'), "smoke.sentinel: an empty line is no evidence"),
    (('sentinel = "vsum: OK"', 'pattern = "vsum.*"'), ""),  # it needs "vsum" in the output: evidence, it loads
    (('sentinel = "vsum: OK"', 'pattern = ".*"'), "smoke.pattern: /.*/ matches an empty output"),
    (('sentinel = "vsum: OK"', 'pattern = "\\\\{vector}"'), "is no regular expression with its placeholders"),
    (('argv = [', 'env = { "A=B" = "1" }\nargv = ['), "smoke.env.A=B: not an environment variable name"),
], ids=["empty-sentinel", "pattern-with-text", "pattern-matching-nothing", "pattern-broken-by-a-value",
        "env-name"])
def test_what_a_command_smoke_states_as_evidence_must_be_evidence(tmp_path: Path, change: tuple[str, str],
                                                                  words: str) -> None:
    from crosslane import config as config_mod
    from crosslane.errors import ConfigError

    ours = (REPO / "versions.toml").read_text(encoding="utf-8")
    example = ours[:ours.index("\n[components.") + 1] + readme_example().replace("<the commit>", "0" * 40)
    assert change[0] in example, change[0]
    text = example.replace(change[0], change[1], 1)
    if not words:
        config_mod.parse(text, tmp_path / "versions.toml", tmp_path)
        return
    with pytest.raises(ConfigError) as caught:
        config_mod.parse(text, tmp_path / "versions.toml", tmp_path)
    assert words in caught.value.message, caught.value.message


@pytest.mark.slow
def test_the_readme_example_builds_with_a_compiler_from_a_tool_root(project: tuple[Path, dict[str, str]]) -> None:
    """The README's variant with forky's GCC from the gcc-cross tool root: the inline RVV assembly clang-19's
    assembler refuses builds, and the variant passes the same smoke and parity as the clang build."""
    where, env = project
    variant = readme_example(1)
    assert 'toolchain = { riscv64 = "gcc-forky" }' in variant
    clang = variant.replace("[components.vsum-gcc]", "[components.vsum-clang]").replace(
        'toolchain = { riscv64 = "gcc-forky" }\n', "")
    path = where / "versions.toml"
    path.write_text(path.read_text() + "\n" + variant + "\n" + clang)

    code, rows, output = invoke(where, env, "all", "--arch", "riscv64", "--component", "vsum-gcc")
    assert code == 0, output[-4000:]
    smokes = {r["profile"]: r for r in rows if r["check"] == "smoke" and r["component"] == "vsum-gcc"}
    assert smokes["novector"]["reason"] == "expected SIGILL: died of it on novector", smokes
    assert all(r["verdict"] == "PASS" for r in smokes.values()) and len(smokes) == 4, smokes
    parity = [r for r in rows if r["check"] == "parity" and r["component"] == "vsum-gcc"]
    assert len(parity) == 3 and all(r["verdict"] == "PASS" for r in parity), parity
    stamp = json.loads((where / "build/riscv64/vsum-gcc/.crosslane-stamp.json").read_text())
    identity = json.dumps(stamp)
    assert re.search(r"gcc 1[4-9]\.\d+\.\d+ \S+/toolchains/gcc-cross-forky-[0-9a-f]+-[0-9a-f]+/riscv64-linux-gnu-gcc",
                     identity), identity[:2000]

    code, rows, output = invoke(where, env, "all", "--arch", "riscv64", "--component", "vsum-clang")
    assert code == 5, output[-4000:]
    assert "operand must be e[8|16|32|64],m[1|2|4|8|f2|f4|f8],[ta|tu],[ma|mu]" in output, output[-4000:]

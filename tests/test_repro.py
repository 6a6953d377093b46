"""invoke repro on a fixture checkout (a git repository holding tasks.py, versions.toml and two components): a
program with __DATE__, __TIME__ and __FILE__ rebuilds bit for bit (SOURCE_DATE_EPOCH and the prefix maps hold,
ccache on in one build and off in the other); one that embeds the configure time's nanoseconds does not, and the
row names the file and what diffoscope says differs."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from crosslane.archs import Arch
from crosslane.cli import commands
from crosslane.run import pipeline
from crosslane_helpers import REPO, versions_header

pytestmark = [pytest.mark.cross, pytest.mark.spawns]

STEADY = """\
cmake_minimum_required(VERSION 3.20)
project(steady C)
add_executable(steady steady.c)
install(TARGETS steady DESTINATION bin)
"""
STEADY_C = """\
#include <stdio.h>
#include <assert.h>
int main(int argc, char **argv) {
    assert(argc > 0);
    printf("%s %s %s\\n", __DATE__, __TIME__, __FILE__);
    return 0;
}
"""
CLOCK = """\
cmake_minimum_required(VERSION 3.20)
project(clock C)
execute_process(COMMAND date +%s%N OUTPUT_VARIABLE now OUTPUT_STRIP_TRAILING_WHITESPACE)
add_executable(clock clock.c)
target_compile_definitions(clock PRIVATE "BUILT_AT=\\"BUILT-AT-${now}\\"")
install(TARGETS clock DESTINATION bin)
"""
CLOCK_C = '#include <stdio.h>\nint main(void) { puts(BUILT_AT); return 0; }\n'


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                   capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, sysroots: object) -> Path:
    repo = tmp_path / "checkout"
    for name, cmake, source, file in (("steady", STEADY, STEADY_C, "steady.c"), ("clock", CLOCK, CLOCK_C, "clock.c")):
        (repo / "components" / name).mkdir(parents=True)
        (repo / "components" / name / "CMakeLists.txt").write_text(cmake)
        (repo / "components" / name / file).write_text(source)
    shutil.copy(REPO / "tasks.py", repo / "tasks.py")
    shutil.copy(REPO / "LICENSE", repo / "LICENSE")
    # The repository's own sysroot (the target Python's headers the preflight asks for are in it, and it is made).
    ours = (REPO / "versions.toml").read_text()
    start = ours.index("[sysroot]")
    sysroot = ours[start:ours.index("\n[", start) + 1]
    header = versions_header().replace('[sysroot]\nsuite = "trixie"\npackages = ["libc6-dev"]\n', sysroot)
    assert header != versions_header()
    text = header + "".join(f"""
[components.{name}]
source = {{ kind = "tree", path = "components/{name}" }}
arches = ["riscv64"]
""" for name in ("steady", "clock"))
    (repo / "versions.toml").write_text(text)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fixture")
    return repo


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def repro(checkout: Path, component: str, report: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Done:
    """`invoke repro` as tasks.py runs it, in this process (its two builds are invoke processes of their own)."""
    # The checkout's own build/ (another test's CROSSLANE_BUILD_DIR may be in this process's environment).
    monkeypatch.delenv("CROSSLANE_BUILD_DIR", raising=False)
    monkeypatch.chdir(checkout)
    code = commands.run(lambda ctx: pipeline.reproducibility(ctx, Arch.RISCV64, [component]),
                        json_path=str(report), config_path=str(checkout / "versions.toml"))
    captured = capsys.readouterr()
    return Done(code, captured.out, captured.err)


def repro_row(report: Path) -> dict[str, str]:
    [row] = [r for r in json.loads(report.read_text()) if r["check"] == "repro"]
    return {str(k): str(v) for k, v in row.items()}


def test_dates_and_paths_rebuild_bit_for_bit(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    done = repro(checkout, "steady", tmp_path / "report.json", capsys, monkeypatch)
    assert done.returncode == 0, done.stdout[-3000:]
    row = repro_row(tmp_path / "report.json")
    assert row["verdict"] == "PASS" and "byte-identical" in row["reason"] and "ccache off" in row["reason"]
    assert "Traceback" not in done.stdout + done.stderr
    assert not (checkout / "build" / "repro" / "riscv64-steady").exists()  # agreeing builds are not kept


def test_a_build_time_in_the_binary_fails_naming_the_file_and_the_difference(
        checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    done = repro(checkout, "clock", tmp_path / "report.json", capsys, monkeypatch)
    assert done.returncode == 1, done.stdout[-3000:]
    row = repro_row(tmp_path / "report.json")
    assert row["verdict"] == "FAIL" and "bin/clock" in row["reason"], row
    # diffoscope's words: the section that differs and its two lines
    assert "strings" in row["reason"] and row["reason"].count("BUILT-AT-") >= 2, row["reason"]
    assert [line for line in done.stdout.splitlines() if line.startswith("crosslane: error:")] == [], done.stdout
    assert (checkout / "build" / "repro" / "riscv64-clock").is_dir()  # a difference is kept to look at


def test_a_change_not_committed_is_refused_naming_it(checkout: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The clones are of HEAD: a component added in the working tree only is refused before any clone, with why
    (it used to be cloned and built, and the clone's build said 'unknown component')."""
    (checkout / "components" / "fresh").mkdir()
    (checkout / "components" / "fresh" / "CMakeLists.txt").write_text(STEADY.replace("steady", "fresh"))
    (checkout / "components" / "fresh" / "fresh.c").write_text(STEADY_C)
    with (checkout / "versions.toml").open("a") as handle:
        handle.write('\n[components.fresh]\nsource = { kind = "tree", path = "components/fresh" }\n'
                     'arches = ["riscv64"]\n')
    done = repro(checkout, "fresh", tmp_path / "report.json", capsys, monkeypatch)
    assert done.returncode == 2, done.stdout[-3000:]
    [line] = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("crosslane: error:")]
    assert "repro builds the last commit (" in line and "in two clean clones" in line, line
    assert "versions.toml" in line and "components/fresh/CMakeLists.txt" in line, line
    assert line.endswith("commit them (or stash them) and run invoke repro again"), line
    assert not (checkout / "build" / "repro").exists()  # nothing cloned, nothing built

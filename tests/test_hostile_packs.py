"""`invoke unpack` and `invoke pack` under attack: a real pack of the real canary (built by `invoke build`, packed by
`invoke pack`), made hostile one defect at a time, then unpacked by a real `invoke` process. Each case must end in
its exit code and one error line, with no traceback, no hang, nothing written outside the build folder and the
cache, and the old install and its stamp as they were."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
import signal
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from crosslane.config import Config
from crosslane.context import Context
from crosslane.errors import CrosslaneError
from crosslane.files import stamps
from crosslane.log import Log
from crosslane.process.runner import Runner
from crosslane.report import Verdict
from crosslane.run import artifacts
from hostilekit import (
    BIN,
    REPO,
    Member,
    Sandbox,
    build_canary,
    entry,
    invoke,
    manifest_of,
    read_pack,
    remanifest,
    snapshot,
    with_data,
    write_pack,
)

pytestmark = [pytest.mark.cross, pytest.mark.spawns, pytest.mark.hostile("packs")]

BASE = "crosslane-pack/riscv64/canary/"
CLI = BASE + "install/bin/canary-cli"
# The fuzz budget: a fixed one in the default tier; `nox -s reliability` multiplies it.
ROUNDS = int(os.environ.get("CROSSLANE_FUZZ_FACTOR", "1"))


@pytest.fixture(scope="module")
def real_pack(tmp_path_factory: pytest.TempPathFactory, sysroots: object) -> Path:
    """The canary built for riscv64 and packed, both by invoke (the real cache's sysroot, a build folder of its own)."""
    folder = tmp_path_factory.mktemp("packed")
    env = {**os.environ, "CROSSLANE_BUILD_DIR": str(folder / "build")}
    for args in (["build", "--arch", "riscv64", "--component", "canary"],
                 ["pack", "--arch", "riscv64", "--component", "canary", "--output", str(folder / "canary.tar.gz")]):
        done = subprocess.run([str(BIN / "invoke"), "--search-root", str(REPO), *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    return folder / "canary.tar.gz"


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


@pytest.fixture
def installed(box: Sandbox, real_pack: Path) -> Path:
    """A component already unpacked from the good pack: what a hostile pack must not damage."""
    done = box.invoke("unpack", "--input", str(real_pack))
    assert done.rc == 0, done.out
    return box.build / "riscv64" / "canary"


def tree(folder: Path) -> dict[str, tuple[object, ...]]:
    return {k: v[:2] + v[3:] for k, v in snapshot(folder, ()).items()}  # times aside: kind, size, link


Mutation = Callable[[list[Member], Sandbox], list[Member]]


def escape(box: Sandbox) -> str:
    """A path from the component's install folder up to outside/."""
    hops = len((box.build / "riscv64" / "canary" / "install").relative_to(box.root).parts)
    return "../" * hops + "outside"


def add(*extra: Callable[[Sandbox], Member], fix: bool = True) -> Mutation:
    def mutate(members: list[Member], box: Sandbox) -> list[Member]:
        changed = [*members, *(make(box) for make in extra)]
        return remanifest(changed) if fix else changed
    return mutate


def replace_member(name: str, make: Callable[[Member, Sandbox], Member], fix: bool = True) -> Mutation:
    def mutate(members: list[Member], box: Sandbox) -> list[Member]:
        changed = [make(m, box) if m.info.name == name else m for m in members]
        return remanifest(changed) if fix else changed
    return mutate


def manifest_edit(edit: Callable[[dict[str, object]], object]) -> Mutation:
    def mutate(members: list[Member], box: Sandbox) -> list[Member]:
        head = manifest_of(members)
        result = edit(head)
        data = result if isinstance(result, bytes) else json.dumps(head).encode()
        return [with_data(members[0], data), *members[1:]]
    return mutate


def flipped(member: Member, box: Sandbox) -> Member:
    data = bytearray(member.data)
    data[-1] ^= 0xFF
    return with_data(member, bytes(data))


def nest(depth: int, name_length: int) -> Callable[[list[Member], Sandbox], list[Member]]:
    """The CVE-2025-4517 shape: folders with long names and a link per level, each pointing one level down, so
    the link text stays short while what it stands for grows past PATH_MAX; the last link climbs out."""
    def mutate(members: list[Member], box: Sandbox) -> list[Member]:
        extra: list[Member] = []
        path = BASE + "install"
        for level in range(depth):
            long_name = chr(ord("a") + level % 26) * name_length
            extra.append(entry(f"{path}/{long_name}/"))
            extra.append(entry(f"{path}/l{level}", link=long_name))
            path = f"{path}/l{level}"
        extra.append(entry(f"{path}/out", link="../" * (depth + 3) + escape(box)))
        return remanifest([*members, *extra])
    return mutate


def chain_of(length: int) -> list[Member]:
    """l0 -> l1 -> … -> l<length>, a file: each link stays inside, the chain is longer than the kernel follows."""
    return [*(entry(BASE + f"install/l{i}", link=f"l{i + 1}") for i in range(length)),
            entry(BASE + f"install/l{length}", data=b"x")]


def chained(members: list[Member], box: Sandbox) -> list[Member]:
    """`a -> .` then `b -> a/../…`: textually inside, really one level higher at every `a`."""
    hops = len((box.build / "riscv64" / "canary" / "install").relative_to(box.root).parts)
    return remanifest([*members, entry(BASE + "install/a", link="."),
                       entry(BASE + "install/b", link="a/" + "a/../" * 1 + "../" * (hops - 1) + "outside")])


def arch_swapped(members: list[Member], box: Sandbox) -> list[Member]:
    """Says amd64, carries riscv64 ELF files."""
    swapped = []
    for m in members[1:]:
        info = tarfile.TarInfo(m.info.name.replace("crosslane-pack/riscv64/", "crosslane-pack/amd64/"))
        info.size, info.mode, info.type, info.linkname = m.info.size, m.info.mode, m.info.type, m.info.linkname
        swapped.append(Member(info, m.data))
    return remanifest([with_data(members[0], json.dumps({**manifest_of(members), "arch": "amd64"}).encode()),
                       *swapped])


def stamp_outputs_lie(members: list[Member], box: Sandbox) -> list[Member]:
    def change(member: Member, box: Sandbox) -> Member:
        stamp = json.loads(member.data)
        stamp["outputs"]["bin/canary-cli"] = [1, 0, 0]
        return with_data(member, json.dumps(stamp).encode())
    return replace_member(BASE + ".crosslane-stamp.json", change)(members, box)


CASES: dict[str, tuple[Mutation, int, str]] = {
    "dotdot-member": (add(lambda b: entry(BASE + "install/../../../../../outside/pwned", data=b"x")), 2, "'..'"),
    "absolute-member": (add(lambda b: entry(str(b.outside / "pwned"), data=b"x")), 2, "outside"),
    "symlink-out": (add(lambda b: entry(BASE + "install/out", link=escape(b))), 2, "leads outside the tree"),
    "symlink-absolute": (add(lambda b: entry(BASE + "install/etc", link="/etc")), 2, "leads outside the tree"),
    "symlink-chain": (chained, 2, "leads outside the tree"),
    "symlink-nest-past-path-max": (nest(17, 250), 2, "refusing it"),
    "symlink-nest-below-links": (nest(5, 3), 2, "below the link"),
    "symlink-chain-of-45": (lambda ms, b: remanifest([*ms, *chain_of(45)]), 2, "deeper than 40"),
    "write-through-symlink": (add(lambda b: entry(BASE + "install/lnk", link="bin"),
                                  lambda b: entry(BASE + "install/lnk/evil", data=b"x")), 2, "below the link"),
    "write-below-a-file": (add(lambda b: entry(CLI + "/evil", data=b"x")), 2, "below the file"),
    "hardlink-out": (add(lambda b: entry(BASE + "install/passwd", hard="/etc/passwd")), 2, "hard link"),
    "hardlink-inside": (add(lambda b: entry(BASE + "install/again", hard=CLI)), 2, "hard link"),
    "fifo-member": (add(lambda b: entry(BASE + "install/pipe", kind=tarfile.FIFOTYPE)), 2, "FIFO"),
    "char-device": (add(lambda b: entry(BASE + "install/zero", kind=tarfile.CHRTYPE)), 2, "device"),
    "block-device": (add(lambda b: entry(BASE + "install/disk", kind=tarfile.BLKTYPE)), 2, "device"),
    "member-twice": (add(lambda b: entry(CLI, data=b"evil"), fix=False), 2, "twice"),
    "dot-component": (add(lambda b: entry(BASE + "install/./x", data=b"x")), 2, "'.' component"),
    "long-name": (add(lambda b: entry(BASE + "install/" + "n" * 300, data=b"x")), 2, "longer than 255"),
    "outside-the-component": (add(lambda b: entry("crosslane-pack/riscv64/cpuinfo/install/x", data=b"x")), 2,
                              "lies outside"),
    "beside-install": (add(lambda b: entry(BASE + "build/CMakeCache.txt", data=b"x")), 2, "neither the stamp"),
    "stamp-is-a-link": (replace_member(BASE + ".crosslane-stamp.json",
                                       lambda m, b: entry(m.info.name, link="install/bin/canary-cli")), 2,
                        "is a link, not a file"),
    "no-manifest": (lambda ms, b: ms[1:], 2, "not a crosslane pack"),
    "manifest-not-json": (manifest_edit(lambda h: b"{not json"), 2, "not valid JSON"),
    "manifest-deep": (manifest_edit(lambda h: b"[" * 100_000 + b"]" * 100_000), 2, "nested too deeply"),
    "manifest-nan": (manifest_edit(lambda h: b'{"format": NaN}'), 2, "not valid JSON"),
    "manifest-huge-number": (manifest_edit(lambda h: b'{"format": 1e999}'), 2, "not finite"),
    "manifest-a-list": (manifest_edit(lambda h: b"[]"), 2, "not a crosslane pack manifest"),
    "manifest-old-format": (manifest_edit(lambda h: h.update(format=1)), 2, "format 1"),
    "manifest-unknown-arch": (manifest_edit(lambda h: h.update(arch="mips")), 2, "'mips'"),
    "manifest-unknown-component": (manifest_edit(lambda h: h.update(component="nonesuch")), 2,
                                   "which versions.toml does not have"),
    "manifest-members-not-list": (manifest_edit(lambda h: h.update(members={"a": 1})), 2, "wrong type"),
    "manifest-member-kind": (manifest_edit(lambda h: h["members"][0].update(kind="fifo")), 2,  # type: ignore[index]
                             "member kind"),
    "manifest-member-size-text": (manifest_edit(lambda h: h["members"][0].update(size="big")), 2,  # type: ignore[index]
                                  "not a crosslane pack manifest"),
    "manifest-lists-missing": (manifest_edit(lambda h: h["members"].append(  # type: ignore[attr-defined]
        {"path": "install/ghost", "kind": "file", "size": 1, "sha256": "0" * 64, "target": "", "mode": 420})), 2,
        "lacks"),
    "manifest-lacks-a-file": (add(lambda b: entry(BASE + "install/extra", data=b"x"), fix=False), 2,
                              "disagrees with the manifest"),
    "size-differs": (replace_member(CLI, lambda m, b: with_data(m, m.data + b"x"), fix=False), 2,
                     "disagrees with the manifest"),
    "content-tampered": (replace_member(CLI, flipped, fix=False), 6, "not the file its manifest lists"),
    "arch-swapped": (arch_swapped, 2, "ELF file for machine 243"),
    "no-stamp": (lambda ms, b: remanifest([m for m in ms if not m.info.name.endswith(".crosslane-stamp.json")]), 2,
                 "holds no stamp"),
    "stamp-not-json": (replace_member(BASE + ".crosslane-stamp.json", lambda m, b: with_data(m, b"{")), 2,
                       "not valid JSON"),
    "stamp-not-a-stamp": (replace_member(BASE + ".crosslane-stamp.json", lambda m, b: with_data(m, b"[1]")), 2,
                          "is not a stamp"),
    "stamp-outputs-lie": (stamp_outputs_lie, 2, "outputs disagree"),
    # a pack of a stamp alone would have replaced the old install folder with nothing (and left none)
    "no-install": (lambda ms, b: remanifest([m for m in ms if "/install" not in m.info.name]), 2,
                   "install/ is missing or not a folder"),
    "install-a-link": (lambda ms, b: remanifest([*(m for m in ms if "/install" not in m.info.name),
                                                 entry(BASE + "install", link=".crosslane-stamp.json")]), 2,
                       "install/ is missing or not a folder"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_pack_is_refused_and_nothing_changes(box: Sandbox, real_pack: Path, installed: Path,
                                                         case: str) -> None:
    mutate, rc, words = CASES[case]
    hostile = write_pack(box.inputs / "hostile.tar.gz", mutate(read_pack(real_pack), box))
    before = tree(installed)
    box.refused(rc, words, "unpack", "--input", str(hostile))
    assert tree(installed) == before, "the old install or its stamp changed"
    assert [p for p in box.build.rglob("*") if p.is_file() and p.name != ".lock"] == \
        [p for p in installed.rglob("*") if p.is_file()] or case == "arch-swapped"
    assert not [p for p in (box.build / "amd64").rglob("*") if p.name != ".lock"]


def test_a_bomb_is_refused_before_a_byte_is_written(box: Sandbox, real_pack: Path) -> None:
    zeros = entry(BASE + "install/zeros.bin", data=bytes(300 << 20))
    hostile = write_pack(box.inputs / "bomb.tar.gz", remanifest([*read_pack(real_pack), zeros]), level=9)
    assert hostile.stat().st_size < 2 << 20
    box.refused(2, "decompression bomb", "unpack", "--input", str(hostile))
    assert not (box.build / "riscv64").exists() or not list((box.build / "riscv64").rglob("zeros.bin"))


@pytest.mark.parametrize(("name", "make", "words"), [
    ("fifo", lambda p: os.mkfifo(p), "a FIFO"),
    ("folder", lambda p: p.mkdir(), "a folder"),
    ("missing", lambda p: None, "cannot read"),
    ("empty", lambda p: p.write_bytes(b""), "not a readable pack"),
    ("random-bytes", lambda p: p.write_bytes(os.urandom(4096)), "not a readable pack"),
    ("plain-text", lambda p: p.write_text("hello\n"), "not a readable pack"),
    ("gzip-of-garbage", lambda p: p.write_bytes(__import__("gzip").compress(os.urandom(4096))), "not a readable pack"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_what_is_no_pack_is_one_line(box: Sandbox, name: str, make: Callable[[Path], None], words: str) -> None:
    path = box.inputs / name
    make(path)
    box.refused(2, words, "unpack", "--input", str(path))


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_as_input_does_not_hang(box: Sandbox, device: str) -> None:
    box.refused(2, "not a regular file", "unpack", "--input", device)


def test_a_truncated_pack(box: Sandbox, real_pack: Path, installed: Path) -> None:
    data = real_pack.read_bytes()
    cut = box.inputs / "cut.tar.gz"
    cut.write_bytes(data[: len(data) // 2])
    before = tree(installed)
    box.refused(2, "not a readable pack", "unpack", "--input", str(cut))
    assert tree(installed) == before


def test_a_symlinked_install_folder_is_replaced_not_written_through(box: Sandbox, real_pack: Path) -> None:
    folder = box.build / "riscv64" / "canary"
    folder.mkdir(parents=True)
    (folder / "install").symlink_to(box.outside)
    done = box.invoke("unpack", "--input", str(real_pack))
    assert done.rc == 0, done.out
    assert not (folder / "install").is_symlink() and (folder / "install/bin/canary-cli").is_file()
    assert sorted(p.name for p in box.outside.iterdir()) == ["sentinel.txt"]


def test_a_symlinked_component_folder_is_replaced_not_written_through(box: Sandbox, real_pack: Path) -> None:
    (box.build / "riscv64").mkdir(parents=True)
    (box.build / "riscv64" / "canary").symlink_to(box.outside)
    done = box.invoke("unpack", "--input", str(real_pack))
    assert done.rc == 0, done.out
    assert not (box.build / "riscv64" / "canary").is_symlink()
    assert sorted(p.name for p in box.outside.iterdir()) == ["sentinel.txt"]


def test_setuid_bits_are_not_unpacked(box: Sandbox, real_pack: Path) -> None:
    members = [with_mode(m, 0o4755) if m.info.name == CLI else m for m in read_pack(real_pack)]
    done = box.invoke("unpack", "--input", str(write_pack(box.inputs / "suid.tar.gz", members)))
    assert done.rc == 0, done.out
    assert (box.build / "riscv64/canary/install/bin/canary-cli").stat().st_mode & 0o7000 == 0


def with_mode(member: Member, mode: int) -> Member:
    member.info.mode = mode
    return member


def test_unpack_waits_for_no_build_holding_the_lock(box: Sandbox, real_pack: Path, installed: Path) -> None:
    """CROSSLANE_NO_WAIT=1: a build holding the arch's lock makes unpack stop at once (exit 3), tree untouched."""
    before = tree(installed)
    with subprocess.Popen([str(BIN / "python"), "-c", (
            "import fcntl, sys, time; f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX); f.write('pid x'); "
            "f.flush(); print('held', flush=True); time.sleep(60)"), str(box.build / "riscv64" / ".lock")],
            stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            box.refused(3, "is in use", "unpack", "--input", str(real_pack))
        finally:
            holder.kill()
    assert tree(installed) == before


def test_two_unpacks_at_once_take_turns(box: Sandbox, real_pack: Path) -> None:
    env = {**box.env, "CROSSLANE_NO_WAIT": "0"}
    argv = [str(BIN / "invoke"), "--search-root", str(REPO), "unpack", "--input", str(real_pack)]
    runs = [subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for _ in range(2)]
    outs = [r.communicate(timeout=120)[0] for r in runs]
    assert [r.returncode for r in runs] == [0, 0], outs
    install = box.build / "riscv64" / "canary" / "install"
    assert not (install / "install").exists() and (install / "bin/canary-cli").is_file()
    assert sorted(p.name for p in (box.build / "riscv64" / "canary").iterdir()) == [".crosslane-stamp.json", "install"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_during_unpack_leaves_the_old_tree_and_nothing_swept_stays(box: Sandbox, real_pack: Path,
                                                                            installed: Path, sig: int) -> None:
    big = entry(BASE + "install/lib/big.bin", data=os.urandom(192 << 20))
    slow = write_pack(box.inputs / "slow.tar.gz", remanifest([*read_pack(real_pack), big]), level=1)
    before = tree(installed)
    staged = installed.parent
    ended = box.interrupted(sig, lambda: bool(list(staged.glob(".canary.*.partial"))), "unpack", "--input", str(slow))
    assert tree(installed) == before
    if sig == signal.SIGTERM:
        assert ended.rc == 143 and "terminated (SIGTERM)" in ended.out and not list(staged.glob(".canary.*")), \
            ended.out
    done = box.invoke("unpack", "--input", str(real_pack))  # the next unpack sweeps a killed one's folder
    assert done.rc == 0, done.out
    assert not list(staged.glob(".canary.*"))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_during_pack_leaves_no_partial_file_at_output(box: Sandbox, real_pack: Path, installed: Path,
                                                              sig: int) -> None:
    (installed / "install/lib/big.bin").write_bytes(os.urandom(96 << 20))
    output = box.inputs / "out.tar.gz"
    ended = box.interrupted(sig, lambda: bool(list(box.inputs.glob(".out.tar.gz.*.partial"))), "pack", "--arch",
                            "riscv64", "--component", "canary", "--output", str(output))
    assert not output.exists()
    if sig == signal.SIGTERM:
        assert ended.rc == 143 and not list(box.inputs.glob(".out.tar.gz.*")), ended.out
    (installed / "install/lib/big.bin").unlink()
    done = box.invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", str(output))
    assert done.rc == 0, done.out
    assert output.is_file() and not list(box.inputs.glob(".out.tar.gz.*"))


@pytest.mark.parametrize("output", ["/", ".", "inputs"])
def test_pack_output_must_name_a_file(box: Sandbox, installed: Path, output: str) -> None:
    where = str(box.root / output) if output == "inputs" else output
    box.refused(2, "names a folder", "pack", "--arch", "riscv64", "--component", "canary", "--output", where)


def test_pack_of_what_was_never_built(box: Sandbox) -> None:
    box.refused(2, "not built", "pack", "--arch", "riscv64", "--component", "canary", "--output",
                str(box.inputs / "x.tar.gz"))


def test_a_round_trip_keeps_every_byte(box: Sandbox, real_pack: Path, installed: Path) -> None:
    listed = {m["path"]: m for m in manifest_of(read_pack(real_pack))["members"]}  # type: ignore[attr-defined]
    for rel, member in listed.items():
        path = installed / rel
        if rel == ".crosslane-stamp.json":
            continue  # re-listed for this disk (below)
        if member["kind"] == "file":
            assert hashlib.sha256(path.read_bytes()).hexdigest() == member["sha256"], rel
        elif member["kind"] == "link":
            assert os.readlink(path) == member["target"], rel
    stamp = json.loads((installed / ".crosslane-stamp.json").read_text())
    assert stamps.is_current(installed, stamp["key"], outputs=installed / "install")  # re-listed on this disk
    os.utime(installed / "install/bin/canary-cli")  # a touched output is a changed output
    assert not stamps.is_current(installed, stamp["key"], outputs=installed / "install")


def mutated_tar(data: bytes, rng: random.Random) -> bytes:
    """The pack's tar stream (not its gzip wrapper, whose CRC would catch a flip) with bytes flipped, cut or copied."""
    raw = bytearray(gzip.decompress(data))
    for _ in range(rng.randint(1, 8)):
        match rng.randrange(4):
            case 0:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            case 1:
                start = rng.randrange(len(raw))
                del raw[start:start + rng.randint(1, 600)]
            case 2:
                start = rng.randrange(len(raw))
                raw[start:start] = raw[rng.randrange(len(raw)):][:rng.randint(1, 600)]
            case _:
                header = rng.randrange(max(1, len(raw) // 512)) * 512  # a header field: names, sizes, types
                raw[header + rng.randrange(512)] = rng.choice(b"0123456789/.\x00 25L")
    return gzip.compress(bytes(raw), compresslevel=1)


@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_packs_never_raise_anything_but_a_crosslane_error(tmp_path: Path, real_pack: Path, cfg: Config,
                                                                 monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Mutation fuzzing of the pack reader (fixed seeds; `nox -s reliability` runs 20 times as many rounds)."""
    rng = random.Random(seed)
    monkeypatch.setenv("CROSSLANE_BUILD_DIR", str(tmp_path / "build"))
    outside = tmp_path / "outside"
    outside.mkdir()
    ctx = Context(cfg, Runner(Log(io.StringIO())))
    data = real_pack.read_bytes()
    outcomes: dict[str, int] = {}
    for index in range(25 * ROUNDS):
        hostile = tmp_path / f"fuzz-{index}.tar.gz"
        hostile.write_bytes(mutated_tar(data, rng))
        try:
            rows = artifacts.unpack(ctx, hostile)
            outcomes["unpacked"] = outcomes.get("unpacked", 0) + 1
            assert rows and rows[0].verdict is Verdict.PASS
        except CrosslaneError as exc:
            outcomes[type(exc).__name__] = outcomes.get(type(exc).__name__, 0) + 1
            assert "\n" not in exc.one_line()
        hostile.unlink()
    # Nothing but the build folder (made only when some mutation reached the unpack) and the empty one beside it.
    assert list(outside.iterdir()) == [] and {p.name for p in tmp_path.iterdir()} <= {"build", "outside"}
    assert sum(outcomes.values()) == 25 * ROUNDS and set(outcomes) - {"unpacked"}, outcomes



@pytest.fixture
def built(tmp_path: Path, sysroots: object) -> dict[str, str]:
    return build_canary(tmp_path)


@pytest.mark.parametrize("output", ["/dev/full", "/dev/null"])
def test_a_pack_is_written_to_a_regular_file_only(built: dict[str, str], output: str) -> None:
    done = invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", output, env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "not a regular file" in done.errors[0], done.out
    assert Path(output).is_char_device()


def test_a_pack_whose_gzip_trailer_is_wrong_is_refused(built: dict[str, str], tmp_path: Path) -> None:
    pack = tmp_path / "canary.tar.gz"
    assert invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", str(pack), env=built).rc == 0
    data = bytearray(pack.read_bytes())
    data[-8] ^= 0xFF  # the CRC-32 of gzip's trailer (the last 8 bytes: CRC-32, size)
    pack.write_bytes(bytes(data))
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(bytes(data))
    folder = tmp_path / "build" / "riscv64" / "canary"
    stamp = stamps.read(folder)
    done = invoke("unpack", "--input", str(pack), env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "not a readable pack" in done.errors[0], done.out
    assert stamps.read(folder) == stamp and json.dumps(stamp)


def test_a_pack_recompressed_with_xz_and_corrupted_is_refused(built: dict[str, str], tmp_path: Path) -> None:
    """tarfile reads any compression: a corrupt xz stream (lzma's own error, not an OSError) is one line too."""
    import lzma
    pack = tmp_path / "canary.tar.gz"
    assert invoke("pack", "--arch", "riscv64", "--component", "canary", "--output", str(pack), env=built).rc == 0
    data = bytearray(lzma.compress(gzip.decompress(pack.read_bytes())))
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))
    done = invoke("unpack", "--input", str(pack), env=built)
    assert done.rc == 2 and len(done.errors) == 1 and "Traceback" not in done.out, done.out

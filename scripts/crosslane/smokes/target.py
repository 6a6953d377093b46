"""Running programs inside a target: qemu-user with the sysroot and an explicit CPU profile."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar, cast

from crosslane import report
from crosslane.archs import Arch
from crosslane.config import Profile
from crosslane.context import Context
from crosslane.guest import cpython, guest_root, qemu
from crosslane.process import costs
from crosslane.process.runner import Result
from crosslane.report import Row

T = TypeVar("T")
U = TypeVar("U")


def qemu_prefix(ctx: Context, arch: Arch, profile: Profile) -> list[str]:
    guest_root.ensure(ctx.build_root, ctx.sysroot(arch))
    return qemu.target_command(ctx.qemu(arch), ctx.build_root, ctx.sysroot(arch), profile)


def run(ctx: Context, arch: Arch, profile: Profile, argv: Sequence[str | Path], *, timeout: float,
        env: dict[str, str] | None = None) -> Result:
    # A smoke of minutes says where it is: each target run's start and end, by profile and program.
    program = Path(str(argv[0])).name if argv else "?"
    ctx.log.info(f"    {profile.name}: {program} started")
    # The guest inherits qemu's own environment; qemu's -E would split a value at its commas.
    result = ctx.runner.run([*qemu_prefix(ctx, arch, profile), *map(str, argv)], env=env, timeout=timeout,
                            check=False, quiet=True)
    ended = "timed out" if result.timed_out else f"exit {result.returncode}"
    ctx.log.info(f"    {profile.name}: {program} {ended} after {result.seconds:.1f}s")
    return result


def python(ctx: Context, arch: Arch) -> Path:
    return cpython.locate(ctx.sysroot(arch).path, arch).interpreter


def per_item(items: Sequence[U], work: Callable[[U], T], *, parallel: bool = True) -> list[T]:
    """Run *work* for every item, in order of the items, in parallel (one per core) unless told otherwise:
    the runs are CPU-bound qemu processes. Each item's rows (its result, or the rows in a tuple or list it returns)
    carry what that item cost (costs.py)."""
    def each(item: U) -> T:
        with costs.measured() as meter:
            result = work(item)
        return with_time(result, meter)
    if not parallel or len(items) < 2:
        return [each(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(len(items), os.cpu_count() or 2)) as pool:
        return list(pool.map(costs.carried(each), items))


def with_time(result: T, meter: costs.Meter) -> T:
    """*result* with every Row in it (itself, or an element of a tuple or list) timed by *meter*."""
    if isinstance(result, Row):
        return cast(T, report.timed([result], meter.wall, meter.cpu)[0])
    # Plain ones only: a named tuple is the work's own value, left as it is.
    value: object = result
    if type(value) is tuple:
        return cast(T, tuple(with_time(item, meter) for item in value))
    if type(value) is list:
        return cast(T, [with_time(item, meter) for item in value])
    return result


def per_profile(profiles: Sequence[Profile], work: Callable[[Profile], T], *, parallel: bool = True) -> list[T]:
    return per_item(profiles, work, parallel=parallel)

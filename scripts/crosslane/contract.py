"""The one call every kind answers, built-in or plug-in: `run(request: Request) -> Outcome[P]`.

A recipe, a smoke kind and a suite kind are each a callable the registry names (registry.Entry.target). The stage
that uses one builds a `Request` and calls it through `run` here, so a plug-in is called exactly as the built-in
kinds are, and what it raises or returns that is not an `Outcome` of its kind's payload is the exit-3 line naming
its package (registry.Registry.contained, Registry.broken). The payload is what a stage needs beyond the report's
rows: a recipe's `recipes.Built` (the build row, what the gates read), a suite's `suites.SuiteCases`, nothing for a
smoke.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar, cast

from crosslane.report import Row

if TYPE_CHECKING:
    from crosslane.archs import Arch
    from crosslane.config import Component, Profile
    from crosslane.context import Context
    from crosslane.features.probes import Probes
    from crosslane.registry import Registry
    from crosslane.sources.worktree import Prepared

P = TypeVar("P")
P_co = TypeVar("P_co", covariant=True)


@dataclass(frozen=True, kw_only=True)
class Request:
    """What every kind's run gets: the run's context, the arch and component it works on, and what the stage knows."""

    ctx: Context
    arch: Arch
    component: str
    # smokes and suites: the profiles to run on (a component's cpu_extensions already added)
    profiles: tuple[Profile, ...] = ()
    # the run's probes, so a compiler is detected once per run (None: the kind makes its own)
    probes: Probes | None = None
    # recipes: the prepared source (fetched, copied, patched) when the entry says it needs_source, else None
    source: Prepared | None = None
    # recipes: build even when the stamp says the build is up to date
    force: bool = False

    @property
    def spec(self) -> Component:
        """The component's declaration in versions.toml."""
        return self.ctx.config.components[self.component]


@dataclass(frozen=True, kw_only=True)
class Outcome(Generic[P_co]):
    """What a kind's run gives: the rows for the report, and its kind's payload for the stage that called it."""

    rows: tuple[Row, ...]
    payload: P_co


def rows(found: Sequence[Row]) -> Outcome[None]:
    """A smoke's outcome: its rows, no payload."""
    return Outcome(rows=tuple(found), payload=None)


class Kind(Protocol[P_co]):
    """The shape of every kind's implementation."""

    def __call__(self, request: Request, /) -> Outcome[P_co]: ...


def run(registry: Registry, name: str, request: Request, payload: type[P]) -> Outcome[P]:
    """The kind *name* of *registry* run on *request*: its Outcome, checked to carry a *payload*."""
    implementation = registry.load(name)
    if not callable(implementation):
        raise registry.broken(name, f"is an object of type {type(implementation).__name__}, not a {registry.kind}'s "
                                    "run(request) -> Outcome")
    with registry.contained(name, "raised when run"):
        found: object = implementation(request)
    wanted = "None" if payload is type(None) else payload.__name__
    if not isinstance(found, Outcome):
        raise registry.broken(name, f"returned an object of type {type(found).__name__}, not a "
                                    f"crosslane.contract.Outcome (rows, payload: {wanted})")
    if not isinstance(found.rows, tuple) or not all(isinstance(row, Row) for row in found.rows):
        raise registry.broken(name, f"returned rows of type {type(found.rows).__name__}, not a tuple of "
                                    "crosslane.report.Row")
    if not isinstance(found.payload, payload):
        raise registry.broken(name, f"returned a payload of type {type(found.payload).__name__}, not {wanted}")
    return cast("Outcome[P]", found)

"""[cases.<name>]: a model × backend × quantize matrix with exclusions and per-backend CPU profiles, as
ExecuTorch's RISC-V CI defines its 17 jobs — data, expanded here, run by a smoke."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from crosslane.config.fields import path_name
from crosslane.config.keys import CASE_BACKENDS
from crosslane.config.reader import Table


@dataclass(frozen=True)
class Case:
    """One ExecuTorch case: a model exported for a backend, quantized or not, run on these profiles."""

    model: str
    backend: str
    quantize: bool
    profiles: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.model}-{self.backend}{'-q8' if self.quantize else ''}"


@dataclass(frozen=True, kw_only=True)
class CaseMatrix:
    """A [cases.*] table: the models x backends x quantize product, less its exclusions."""

    name: str
    models: tuple[str, ...]
    backends: tuple[str, ...]
    quantize: tuple[bool, ...]
    exclude: tuple[Mapping[str, object], ...]
    profiles: Mapping[str, tuple[str, ...]]
    default: tuple[str, ...]  # the models an arch's job runs; `--case all` runs every case
    # model -> why it cannot run here (a missing dependency, true today); such cases are SKIP rows.
    exempt: Mapping[str, str] = field(default_factory=dict)

    def cases(self, models: tuple[str, ...] | None = None) -> list[Case]:
        """Every case in models × backends × quantize order, minus the exclusions."""
        chosen = self.models if models is None else tuple(m for m in self.models if m in models)
        found = []
        for model, backend, quantize in itertools.product(chosen, self.backends, self.quantize):
            values: dict[str, object] = {"model": model, "backend": backend, "quantize": quantize}
            if any(all(values.get(k) == v for k, v in rule.items()) for rule in self.exclude):
                continue
            found.append(Case(model, backend, quantize, self.profiles.get(backend, ())))
        return found


def read(name: str, table: Table, profile_names: set[str]) -> CaseMatrix:
    models = table.strings("models")  # not empty: its declaration (keys.CASES)
    for index, model in enumerate(models):  # a case's name becomes folders of the cache and dist/
        path_name(Table({}, table.file, table.where("models")), index, model, "model")
    backends = table.strings("backends")
    for index, backend in enumerate(backends):
        if backend not in CASE_BACKENDS:
            Table({}, table.file, f"{table.path}.backends").fail(index, f"unknown backend '{backend}' "
                                                                        f"(known: {', '.join(CASE_BACKENDS)})")
    quantize = table.booleans("quantize")
    exclude = []
    for rule in table.tables("exclude"):
        keys = set(rule.data)
        if not keys or not keys <= {"model", "backend", "quantize"}:
            rule.fail(None, "an exclusion names model, backend and/or quantize")
        # read by their declared types: a rule of another type, or naming what the matrix lacks, never matches
        values: dict[str, object] = {}
        if rule.has("model"):
            values["model"] = model = rule.string("model")
            if model not in models:
                rule.fail("model", f"'{model}' is not in models")
        if rule.has("backend"):
            values["backend"] = backend = rule.string("backend")
            if backend not in backends:
                rule.fail("backend", f"'{backend}' is not in backends ({', '.join(backends)})")
        if rule.has("quantize"):
            values["quantize"] = rule.boolean("quantize")
        exclude.append(MappingProxyType(values))
    profiles_table = table.table("profiles")
    profiles = {}
    for backend in list(profiles_table.keys()):
        listed = profiles_table.strings(backend)
        unknown = [p for p in listed if p not in profile_names]
        if unknown:
            profiles_table.fail(backend, f"unknown CPU profile(s) {', '.join(unknown)} "
                                         f"(known: {', '.join(sorted(profile_names))})")
        profiles[backend] = listed
    profiles_table.finish(CASE_BACKENDS)
    default = table.strings("default", models)
    for index, model in enumerate(default):
        if model not in models:
            Table({}, table.file, f"{table.path}.default").fail(index, f"'{model}' is not in models")
    exempt_table = table.table("exempt")
    exempt = {model: exempt_table.string(model) for model in list(exempt_table.keys())}
    for model in exempt:
        if model not in models:
            exempt_table.fail(model, f"'{model}' is not in models")
    exempt_table.finish()
    matrix = CaseMatrix(name=name, models=models, backends=backends, quantize=quantize, exclude=tuple(exclude),
                        profiles=MappingProxyType(profiles), default=default, exempt=MappingProxyType(exempt))
    table.finish()
    return matrix

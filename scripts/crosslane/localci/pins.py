"""The actions a workflow uses, each by the commit its `uses:` pins (`owner/name[/path]@<40 hex> # vX.Y.Z`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from crosslane.errors import ConfigError
from crosslane.policy import workflow as workflow_rules

USES = re.compile(r"^(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)(?P<path>(?:/[^@\s]+)?)@(?P<ref>\S+)$")
COMMIT = re.compile(r"[0-9a-f]{40}")
# The version a pin's comment names: `uses: actions/checkout@<sha> # v4.2.2`.
COMMENT_TAG = re.compile(r"^[ \t]*(?:-[ \t]*)?uses:[ \t]*['\"]?(?P<uses>[^'\"\s#]+)['\"]?"
                         r"[ \t]*#[ \t]*(?P<tag>v?\d[\w.+-]*)", re.M)


@dataclass(frozen=True)
class ActionPin:
    """One action repository at one commit, and the jobs whose steps use it."""

    repo: str  # owner/name
    commit: str
    tag: str | None  # the version the pin's comment names, checked against the commit when staged
    jobs: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"https://github.com/{self.repo}"

    @property
    def reference(self) -> str:
        """What act's --local-repository replaces: the repository at the ref the workflow names."""
        return f"{self.repo}@{self.commit}"


def pins(workflow: Path) -> list[ActionPin]:
    """Every remote action *workflow* uses, one per repository and commit (a sub-path such as cache/restore is
    the same repository). A ref that is not a full commit, or a container action, is a one-line error."""
    text = workflow.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{workflow}: not YAML: {' '.join(str(exc).split())}", fix="fix the workflow") from None
    jobs = data.get("jobs") if isinstance(data, Mapping) else None
    if not isinstance(jobs, Mapping):
        raise ConfigError(f"{workflow}: no jobs", fix="a workflow has a `jobs:` mapping")
    tags: dict[str, str] = {}
    for found_tag in COMMENT_TAG.finditer(text):
        named = tags.setdefault(found_tag["uses"], found_tag["tag"])
        if named != found_tag["tag"]:
            raise ConfigError(f"{workflow}: {found_tag['uses']} is commented as {named} and as {found_tag['tag']}",
                              fix="one commit is one version: correct the comment")
    found: dict[tuple[str, str], tuple[str | None, list[str]]] = {}
    for job_name, job in jobs.items():
        if isinstance(job, Mapping) and "uses" in job:
            raise ConfigError(f"{workflow}: jobs.{job_name}.uses: a reusable workflow, which the local check does "
                              "not stage", fix="call its steps from this workflow, or leave the job out of the check")
        for index, step in workflow_rules.steps(job) if isinstance(job, Mapping) else ():
            uses = step.get("uses")
            if not isinstance(uses, str) or uses.startswith("./"):
                continue
            where = f"{workflow}: jobs.{job_name}.steps[{index}].uses"
            matched = USES.match(uses)
            if uses.startswith("docker://") or matched is None:
                raise ConfigError(f"{where}: {uses!r} is not an action repository pinned by commit",
                                  fix="use owner/name@<full commit> # <version>")
            # act runs <repo>/<path> of the staged tree: neither may climb out of it
            if {".", ".."} & {*matched["repo"].split("/"), *matched["path"].split("/")}:
                raise ConfigError(f"{where}: {uses!r} has a '.' or '..' component; an action's path is inside its "
                                  "repository", fix="name the action's folder as its repository has it")
            if not COMMIT.fullmatch(matched["ref"]):
                raise ConfigError(f"{where}: {uses!r} names a ref, not a commit (a ref can move)",
                                  fix=f"pin it: {matched['repo']}{matched['path']}@<40-hex commit> # {matched['ref']}")
            key = (matched["repo"], matched["ref"])
            users = found.setdefault(key, (tags.get(uses), []))[1]
            if str(job_name) not in users:
                users.append(str(job_name))
    return [ActionPin(repo, commit, tag, tuple(users)) for (repo, commit), (tag, users) in found.items()]


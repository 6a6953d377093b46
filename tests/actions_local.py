"""Run a GitHub Actions job's `run:` steps locally, in order, the way a runner would: in a clean clone of the
repository (what actions/checkout gives), with `bash --noprofile --norc -eo pipefail`, the workflow's, job's and
step's `env:` (expressions resolved from a given context), and the files Actions provides (GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY, GITHUB_ENV) plus GITHUB_ACTIONS/CI. `uses:` steps are not run: checkout is the clone,
setup-python is the interpreter whose folder leads PATH, caches and artifacts are absent (a cold run)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def resolve(text: str, context: Mapping[str, object]) -> str:
    """`${{ a.b.c }}` from nested dicts; anything else (functions, operators) resolves to "" as a missing value
    does in Actions."""
    def lookup(match: re.Match[str]) -> str:
        value: object = context
        for part in match.group(1).split("."):
            if not isinstance(value, Mapping) or part not in value:
                return ""
            value = value[part]
        return "" if value is None else str(value)
    return EXPRESSION.sub(lookup, text)


@dataclass
class JobRun:
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)  # step id -> its GITHUB_OUTPUT
    summary: str = ""
    logs: list[str] = field(default_factory=list)


def clean_clone(repo: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "--quiet", str(repo), str(dest)], check=True, timeout=120)
    return dest


def run_job(workflow: Mapping[str, object], job: str, workspace: Path, context: Mapping[str, object], *,
            path_first: Path, timeout: float = 1800) -> JobRun:
    jobs = workflow["jobs"]
    assert isinstance(jobs, Mapping)
    spec = jobs[job]
    runner_temp = workspace.parent / f"runner-temp-{job}"
    runner_temp.mkdir(exist_ok=True)
    summary = runner_temp / "step_summary.md"
    # The host's environment minus what the test run itself sets (a runner starts without it).
    foreign = ("GITHUB_", "PYTEST_", "COV_", "COVERAGE_", "CROSSLANE_", "VIRTUAL_ENV")
    base = {k: v for k, v in os.environ.items() if not k.startswith(foreign)}
    base |= {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(workspace),
             "RUNNER_TEMP": str(runner_temp), "GITHUB_STEP_SUMMARY": str(summary),
             "PATH": f"{path_first}:{os.environ['PATH']}"}
    for scope in (workflow.get("env"), spec.get("env")):
        if isinstance(scope, Mapping):
            base |= {k: resolve(str(v), context) for k, v in scope.items()}
    result = JobRun()
    for index, step in enumerate(spec["steps"]):
        script = step.get("run")
        if not isinstance(script, str):
            continue
        output, github_env = runner_temp / f"output-{index}", runner_temp / f"env-{index}"
        output.touch()
        github_env.touch()
        env = {**base, "GITHUB_OUTPUT": str(output), "GITHUB_ENV": str(github_env),
               **{k: resolve(str(v), context) for k, v in (step.get("env") or {}).items()}}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=timeout)
        result.logs.append(done.stdout + done.stderr)
        if done.returncode != 0:
            raise AssertionError(f"{job}: step {index} exited {done.returncode}:\n{script}\n{done.stdout[-3000:]}"
                                 f"\n{done.stderr[-3000:]}")
        if "id" in step:
            result.outputs[str(step["id"])] = dict(line.split("=", 1) for line in output.read_text().splitlines()
                                                   if "=" in line)
        for line in github_env.read_text().splitlines():
            if "=" in line:
                key, value = line.split("=", 1)
                base[key] = value
    result.summary = summary.read_text() if summary.is_file() else ""
    return result


def run_in_clean_clone(repo: Path, job: str, workspace: Path, context: Mapping[str, Any], *,
                       path_first: Path) -> tuple[JobRun, Path]:
    """The job of the repository's own workflow, in a fresh clone at *workspace* (github.workspace set)."""
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "ci.yml").read_text())
    clone = clean_clone(repo, workspace)
    github = {**dict(context.get("github") or {}), "workspace": str(clone)}
    return run_job(workflow, job, clone, {**context, "github": github}, path_first=path_first), clone

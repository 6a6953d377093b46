"""Every error crosslane reports on purpose: one line, a fix, a documented exit code.

Exit codes (also in README.md):
  0  success
  1  a verdict failed: a smoke, gate or floor said FAIL
  2  bad input: versions.toml, a command-line argument, a patch file or pin
  3  a prerequisite is missing: a host tool, a sysroot, the network, a non-Debian host, a working plug-in
  4  a patch conflicts with its source tree (the tree is left as it was)
  5  an external command run by a step failed
  6  integrity: what a mirror or the network served is not what versions.toml pins (hash, moved tag)
"""

from __future__ import annotations


class CrosslaneError(Exception):
    exit_code = 1

    def __init__(self, message: str, *, fix: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        # Evidence shown after the one-line message (e.g. the tail of a failed command's output).
        self.detail = detail

    def one_line(self) -> str:
        text = self.message
        if self.fix:
            text = f"{text}; {self.fix}"
        return " ".join(text.split("\n"))


class VerdictFailed(CrosslaneError):
    exit_code = 1


class ConfigError(CrosslaneError):
    """Bad input: the message already names the file and key path."""

    exit_code = 2


class UsageError(CrosslaneError):
    exit_code = 2


class MissingPrerequisite(CrosslaneError):
    exit_code = 3


class PatchConflict(CrosslaneError):
    exit_code = 4


class StepFailed(CrosslaneError):
    exit_code = 5


class IntegrityError(CrosslaneError):
    """What was served differs from the pin: not the user's input, so not exit 2."""

    exit_code = 6


class Terminated(BaseException):
    """SIGTERM arrived (CI cancelled the job, a user's kill): raised so every `finally` removes its partial work
    (a staging folder, a half-written pack) before the process ends with 143."""

    exit_code = 143

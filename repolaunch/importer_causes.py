"""Why an instance did not come out agreeing, typed as a `Cause`: read from a failed build
(`build_cause`, also for launches at HEAD), from validation's reason code
(`validation_cause`), from how FAIL_TO_PASS relates to the file's (`f2p_cause`), and from
the logs (a package registry out of reach: `unreachable`; tests that reached for the
network: `reached_for_network`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from repolaunch.importer_report import Cause, Relation

__all__ = ["NETWORK_SENSITIVE", "build_cause", "f2p_cause", "launch_cause",
           "reached_for_network", "unreachable", "unreachable_in_build",
           "unreachable_registry", "validation_cause"]

_INFRA_WORDS = ("sandbox", "engine", "docker", "image build", "cannot create", "died")


# A package registry that did not answer, or answered "not here", in a setup step's output:
# the host it was asked (curl/composer/bundler/npm/yarn/pip/cargo words for it).
_UNREACHABLE = re.compile(
    r"(?:Could not resolve host:?|Could not reach host|getaddrinfo \w+|Failed to connect to|"
    r"Couldn't connect to server|Failed to open TCP connection to|"
    r"Request URL: https?://|failed to download from|404 Not Found[^\n]*?https?://|"
    r"Git error: command `git clone [^`\n]*?https?://|Unknown host|UnknownHostException:|"
    r"Can't get https?://)"
    r"\s*(?:https?://)?([\w.-]+\.[a-z]{2,})")
_NOT_FOUND = re.compile(r"\b404\b|Not Found|Could not (?:resolve|reach) host|getaddrinfo|Git error|"
                        r"Unknown ?[Hh]ost|"
                        r"Failed to connect|Couldn't connect|Failed to open TCP connection")


def unreachable(transcript: list[Any], *, failed_only: bool = True) -> str | None:
    """The registry host a failed setup step could not get something from, if its output
    says so (a host out of reach, or a package version it no longer serves).
    ``failed_only=False``: any setup step's, for a step whose fallback (``|| ...``) made
    it exit 0 without what the registry would have given."""
    def field(a: Any, name: str, default: Any) -> Any:
        return a.get(name, default) if isinstance(a, dict) else getattr(a, name, default)

    steps = [a for a in transcript if field(a, "phase", "") == "setup"
             and (not failed_only or field(a, "exit_code", 0) != 0)]
    for step in reversed(steps if not failed_only else steps[-1:]):
        tail = str(field(step, "output_tail", ""))[-20_000:]
        m = _UNREACHABLE.search(tail) if _NOT_FOUND.search(tail) else None
        if m:
            return m.group(1)
    return None


def unreachable_registry(transcript: list[Any]) -> str | None:
    """The registry host any setup step could not reach (its step may have gone on
    without it): for a build whose tests then fail or report nothing."""
    return unreachable(transcript, failed_only=False)


def unreachable_in_build(logs: Path) -> str | None:
    """`unreachable` over every setup step of the build transcript kept in ``logs``."""
    try:
        data = json.loads((logs / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    steps = data.get("transcript") if isinstance(data, dict) else None
    return unreachable_registry(steps) if isinstance(steps, list) else None


def build_cause(failure: str | None, transcript: list[Any]) -> tuple[Cause, str]:
    """Why a build failed, typed, and its one line (the registry host named where a setup
    step could not reach one): the same reading for imports and for launches at HEAD."""
    why = (failure or "the environment did not build").splitlines()[0][:300]
    cause = launch_cause(why)
    host = unreachable(transcript) if cause == "env_build_failed" else None
    if host is not None:
        return "registry_unavailable", f"{host} (a registry this machine cannot reach); {why}"
    return cause, why


def launch_cause(failure: str) -> Cause:
    from repolaunch.build import UNAVAILABLE

    low = failure.lower()
    if UNAVAILABLE in low:
        return "toolchain_unavailable"
    if "test runner does not start" in low:
        return "runner_failed"
    if any(w in low for w in _INFRA_WORDS) and "setup failed" not in low:
        return "infrastructure"
    return "env_build_failed"


def f2p_cause(relation: Relation) -> Cause | None:
    return {"exact": None, "subset": "fail_to_pass_missing",
            "superset": "fail_to_pass_extra"}.get(relation, "fail_to_pass_differs")


# causes that tests failing for want of the network can produce
NETWORK_SENSITIVE = ("no_fail_to_pass", "fail_to_pass_missing", "fail_to_pass_differs",
                     "runner_failed")


def reached_for_network(log_dir: Path) -> bool:
    from repolaunch.diagnose import needs_network

    return any(needs_network(p.read_text(encoding="utf-8", errors="replace"))
               for p in sorted(log_dir.glob("*.log")))


def validation_cause(reason: str | None, detail: str, tests_ran: bool) -> Cause:
    if reason == "env_build_failed":
        return "infrastructure" if detail.startswith("sandbox") else "runner_failed"
    if reason in ("test_patch_failed", "patch_failed", "timeout", "no_fail_to_pass",
                  "gold_breaks_tests"):
        return reason  # type: ignore[return-value]
    return "runner_failed" if not tests_ran else "fail_to_pass_differs"

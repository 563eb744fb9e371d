"""What an import reports: per instance (`InstanceReport`, with a typed `Cause` from `CAUSES`
when FAIL_TO_PASS is not identical to the file's), per file (`ImportReport`), and how two
test lists agree (`agreement`: exact, subset, superset, overlap or disjoint).

`InstanceError` is the one-line failure that stops one instance; the import records it and
goes on with the next.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["CAUSES", "Agreement", "Cause", "ImportReport", "InstanceError", "InstanceReport",
           "Relation", "Status", "agreement"]

Relation = Literal["exact", "subset", "superset", "overlap", "disjoint"]
Status = Literal["agree", "disagree", "rejected", "built", "found", "error"]
Cause = Literal["invalid_instance", "repo_unavailable", "commit_unavailable",
                "env_build_failed", "toolchain_unavailable", "registry_unavailable",
                "runner_failed",
                "test_patch_failed", "patch_failed",
                "timeout", "no_fail_to_pass", "gold_breaks_tests", "fail_to_pass_missing",
                "fail_to_pass_extra", "fail_to_pass_differs", "tests_need_network",
                "infrastructure"]
CAUSES: dict[str, str] = {
    "invalid_instance": "the row cannot be read as an instance",
    "repo_unavailable": "the repository is neither under --repos nor clonable",
    "commit_unavailable": "the base commit is not in the repository",
    "env_build_failed": "the dependencies did not install",
    "toolchain_unavailable": "the code needs an interpreter or toolchain of an era no "
                             "Debian suite here has (Python before 3.9, for one)",
    "registry_unavailable": "a package registry the setup needs cannot be reached from here, "
                            "or no longer serves a pinned version (the host is named)",
    "runner_failed": "the environment built but its tests do not start or report nothing",
    "test_patch_failed": "the test patch does not apply at the base commit",
    "patch_failed": "the gold patch does not apply over the test patch",
    "timeout": "a test run went past its time limit",
    "no_fail_to_pass": "no test fails before the fix and passes after it",
    "gold_breaks_tests": "a test passing before the fix fails after it",
    "fail_to_pass_missing": "ours is a strict subset of the file's FAIL_TO_PASS",
    "fail_to_pass_extra": "ours is a strict superset of the file's FAIL_TO_PASS",
    "fail_to_pass_differs": "ours and the file's FAIL_TO_PASS overlap or are disjoint",
    "tests_need_network": "tests reached for the network, which validation denies (the "
                          "dataset's lists were made with it)",
    "infrastructure": "the engine or a sandbox failed (not the instance's fault; retried)",
}


class InstanceError(RuntimeError):
    """One instance cannot go on; the message is the one-line reason."""

    def __init__(self, message: str, cause: Cause = "infrastructure") -> None:
        super().__init__(message)
        self.cause: Cause = cause


class Agreement(BaseModel):
    relation: Relation
    ours: int
    theirs: int
    both: int
    only_ours: list[str] = Field(default_factory=list)
    only_theirs: list[str] = Field(default_factory=list)

    @property
    def jaccard(self) -> float:
        union = self.ours + self.theirs - self.both
        return 1.0 if union == 0 else round(self.both / union, 4)


def agreement(ours: list[str], theirs: list[str], *, form: Callable[[str], str] = str
              ) -> Agreement:
    """How our list relates to theirs, each id put in ``form`` first."""
    a, b = {form(t) for t in ours}, {form(t) for t in theirs}
    both = a & b
    relation: Relation
    if a == b:
        relation = "exact"
    elif a < b:
        relation = "subset"
    elif a > b:
        relation = "superset"
    elif both:
        relation = "overlap"
    else:
        relation = "disjoint"
    return Agreement(relation=relation, ours=len(a), theirs=len(b), both=len(both),
                     only_ours=sorted(a - b), only_theirs=sorted(b - a))


class InstanceReport(BaseModel):
    instance_id: str
    repo: str = ""
    language: str | None = None  # what the checkout was detected as (when it got that far)
    status: Status
    cause: Cause | None = None  # why FAIL_TO_PASS is not identical (None: it is)
    error: str | None = None  # one line, for status "error"
    repo_path: str | None = None
    env_image: str | None = None
    built: bool = False  # an environment image exists for the instance
    tests_ran: bool = False  # some run reported per-test results
    python: str | None = None
    resolved_as_of: str | None = None  # what the environment really resolved as of
    install_set: str | None = None
    verified: bool | None = None
    reason: str | None = None  # validation's reason code when not verified
    detail: str = ""
    fail_to_pass: Agreement | None = None
    pass_to_pass: Agreement | None = None
    test_command: str | None = None
    registered: bool = False
    # files of the base commit the mirror lacks and no release carried: checked out empty
    missing_files: list[str] = Field(default_factory=list)
    log_dir: str | None = None
    seconds: float = 0.0


class ImportReport(BaseModel):
    path: str
    instances: list[InstanceReport] = Field(default_factory=list)
    validate_available: bool = True

    def summary(self) -> dict[str, int]:
        c = Counter(r.status for r in self.instances)
        out = {"read": len(self.instances), **{k: c.get(k, 0) for k in
               ("agree", "disagree", "rejected", "built", "found", "error")}}
        for side in ("fail_to_pass", "pass_to_pass"):
            rel = Counter(getattr(r, side).relation for r in self.instances
                          if getattr(r, side) is not None)
            out.update({f"{side}_{k}": v for k, v in sorted(rel.items())})
        return out

    def errors(self) -> list[str]:
        return [f"{r.instance_id}: {r.error}" for r in self.instances if r.status == "error"]

    def causes(self) -> dict[str, int]:
        return dict(Counter(r.cause for r in self.instances if r.cause).most_common())

"""Open an instance: a sandbox from an env image with the task's commit checked out.

An instance is the env image plus a checkout at the commit, made without a new image: the
image holds the repository with its history, and `git checkout -f` + `git clean -fd` (which
keeps git-ignored files such as installed dependencies and build caches) move it to the
commit in well under a second.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from envs.models import EnvSpec
from envs.sandbox import GIT as _GIT
from envs.sandbox import Sandbox, SandboxError


class InstanceError(SandboxError):
    """The instance could not be made (image missing, commit unknown); one line."""


# The work tree as the environment's setup left it (a lock file it updated, a build config it
# wrote: what the tests need), kept when the image is made as a commit on the checkout's.
SETUP_REF = "refs/envfactory/setup"


def setup_overlay(commit: str) -> str:
    """Shell: after a checkout of `commit` (which drops what the setup changed in the work
    tree), the files the setup changed put back from `SETUP_REF`, when that was made on
    `commit`; the index stays the commit's, so they read as changes as they did after the
    setup. Only those files are written (a rewrite of every file makes build tools rebuild
    everything)."""
    c = shlex.quote(commit)
    return (f"if s=$({_GIT} rev-parse -q --verify {SETUP_REF}^ 2>/dev/null) && "
            f'[ "$s" = "$({_GIT} rev-parse -q --verify {c}^{{commit}})" ]; then '
            f"{_GIT} diff -z --name-only --no-renames --diff-filter=d {c} {SETUP_REF} "
            f"| xargs -0 -r {_GIT} checkout -q {SETUP_REF} -- && {_GIT} reset -q; fi")


def checkout_script(commit: str) -> str:
    c = shlex.quote(commit)
    # Refreshing the index first keeps git from rewriting files whose stat data changed
    # in the image layers (a rewrite makes build tools rebuild everything).
    return (f"git cat-file -e {c}^{{commit}} 2>/dev/null || "
            f"{{ echo 'commit {commit} is not in the env image' >&2; exit 3; }}; "
            f"git update-index -q --refresh >/dev/null 2>&1; "
            f"git -c advice.detachedHead=false checkout -qf {c} && git clean -fdq && "
            + setup_overlay(commit))


def open_instance(spec: EnvSpec, *, network: bool | None = None,
                  env: Mapping[str, str] | None = None,
                  labels: Mapping[str, str] | None = None) -> Sandbox:
    """Start a hardened sandbox for the spec; check out spec.checkout if set."""
    if not spec.image:
        raise InstanceError(f"environment {spec.name!r} has no built image")
    sb = Sandbox.start(spec.image, network=spec.network if network is None else network,
                       limits=spec.limits, workdir=spec.workdir,
                       env={**spec.env, **(env or {})}, labels=dict(labels or {}))
    if spec.checkout:
        try:
            res = sb.exec(checkout_script(spec.checkout), timeout=120)
        except BaseException:
            sb.close()
            raise
        if res.exit_code != 0:
            sb.close()
            raise InstanceError(f"checkout of {spec.checkout[:12]} failed: "
                                f"{' '.join((res.stderr or res.stdout).strip().splitlines()[-1:])[:200]}")
    return sb

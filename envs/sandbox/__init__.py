"""The hardened Docker sandbox every flow runs untrusted code in.

A `Sandbox` is one long-lived container (`docker-init` + `sleep infinity`) started with
no network, all capabilities dropped, no new privileges, pids / memory (no swap) / CPU
limits, and labels that say who owns it. Commands run in it through `exec`, which adds
a wall-clock timeout on both sides (GNU `timeout` in the container, a host deadline that
kills what is left), caps the output it keeps (head + tail of each stream), decodes it
with replacement and tells OOM kills and timeouts apart.

Files go in and out through the engine's archive API (`put_file`, `put_dir`,
`get_file`); patches are applied with `git apply`, falling back to a fuzzy `patch`
(`apply_patch`); `diff` shows what changed, untracked files included, without touching
the repository's index; `snapshot` / `restore` save and roll back either the whole
container (an image) or a few paths (a tar inside the container).

`kill_all` ends every process the execs left behind (servers, fork bombs) and keeps
the sandbox usable. Leftovers of crashed processes are found by label and removed by
`gc()`; a sandbox that is neither closed nor collected is removed at interpreter exit.

Engine quirk (dockerd 20.10, also seen with the docker CLI): after an exec whose
background children keep its stdout open (`server &`), the engine holds back the *next*
exec for about 3.5 s. Redirect such children (`server >/dev/null 2>&1 &`) to avoid it.

This module is the package's public face; `core.py` says where each part lives.
"""

from envs.sandbox.container import INTERNAL_DIR
from envs.sandbox.core import Sandbox
from envs.sandbox.errors import DiffError, SandboxDied, SandboxError
from envs.sandbox.execution import KILL_AFTER_S
from envs.sandbox.labels import (
    CREATED_LABEL,
    KIND_LABEL,
    LABEL,
    OWNER_LABEL,
    SNAPSHOT_OF_LABEL,
)
from envs.sandbox.labels import owner as _owner  # noqa: F401  (tests import it so)
from envs.sandbox.leftovers import gc
from envs.sandbox.patches import GIT, PatchResult
from envs.sandbox.snapshots import Snapshot

__all__ = [
    "CREATED_LABEL",
    "GIT",
    "INTERNAL_DIR",
    "KILL_AFTER_S",
    "KIND_LABEL",
    "LABEL",
    "OWNER_LABEL",
    "SNAPSHOT_OF_LABEL",
    "DiffError",
    "PatchResult",
    "Sandbox",
    "SandboxDied",
    "SandboxError",
    "Snapshot",
    "gc",
]

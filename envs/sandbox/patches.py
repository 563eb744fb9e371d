"""Changes to a sandbox's work tree: apply a patch, show the diff, list changed paths."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from docker.errors import DockerException, NotFound

from envs.models import ExecResult
from envs.sandbox.container import INTERNAL_DIR
from envs.sandbox.errors import DiffError, SandboxError, first_error, short
from envs.sandbox.execution import ExecOps
from envs.sandbox.files import FileOps

# git as every flow runs it in a container: the work tree's owner differs from root's, and
# paths come out as written (not octal-escaped)
GIT = "git -c safe.directory='*' -c core.quotepath=false"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree
_DIFF_END = "--envfactory-diff-end--"  # diff's last line: its output is whole


@dataclass(frozen=True)
class PatchResult:
    applied: bool
    method: str | None  # "git apply", "patch --fuzz", "git apply --reject", "empty" or None
    reason: str
    log: str


class PatchOps(ExecOps, FileOps):
    """apply_patch, diff, changed_paths."""

    def apply_patch(self, patch: str, *, workdir: str | None = None,
                    partial: bool = False) -> PatchResult:
        """Apply a unified diff: `git apply`, else a fuzzy `patch` (only if its dry run
        passes, so a failure leaves nothing behind), else, if `partial`, `git apply
        --reject` (applies what it can, leaves .rej files)."""
        if not patch.strip():
            return PatchResult(True, "empty", "empty patch", "")
        if not patch.endswith("\n"):
            patch += "\n"  # git apply calls a missing final newline a corrupt patch
        wd = self._abs(workdir or self.workdir)
        pfile = f"{INTERNAL_DIR}/patch.diff"
        # Our scratch directory is world-writable (sticky), so commands running as the
        # image's non-root user can use it too.
        self._put_archive({pfile: (patch, 0o644)}, dirs={INTERNAL_DIR: 0o1777})
        q = shlex.quote(pfile)
        logs: list[str] = []
        reasons: list[str] = []

        def attempt(label: str, script: str) -> ExecResult:
            res = self._sh(script, f"`{label}`", workdir=wd)
            logs.append(f"$ {label}  (exit {res.exit_code})\n{res.output}".rstrip())
            return res

        res = attempt("git apply --verbose", f"{GIT} apply --verbose {q}")
        if res.exit_code == 0:
            return PatchResult(True, "git apply", "applied cleanly", "\n".join(logs))
        reasons.append(f"git apply: {first_error(res.output)}")

        popts = f"--batch --forward --no-backup-if-mismatch --fuzz=5 -p1 -i {q}"
        res = attempt("patch --dry-run", f"patch --dry-run {popts}")
        if res.exit_code == 0:
            res = attempt("patch --fuzz=5", f"patch {popts}")
            if res.exit_code == 0:
                return PatchResult(True, "patch --fuzz", "applied with fuzz", "\n".join(logs))
        reasons.append(f"patch: {_first_patch_error(res.output)}")

        if partial:
            res = attempt("git apply --verbose --reject", f"{GIT} apply --verbose --reject {q}")
            applied = bool(re.search(r"^(Applied patch .* cleanly|Hunk #\d+ applied)",
                                     res.output, re.M))
            if applied:
                rejected = re.findall(r"^Rejected hunk #\d+\.?", res.output, re.M)
                why = (f"partially applied, {len(rejected)} hunk(s) rejected (.rej files left)"
                       if rejected else "applied")
                return PatchResult(True, "git apply --reject", why, "\n".join(logs))
            reasons.append(f"git apply --reject: {first_error(res.output)}")
        return PatchResult(False, None, "patch does not apply: " + "; ".join(reasons),
                           "\n".join(logs))

    def changed_paths(self) -> list[str]:
        """Paths the container added or changed against its image (the engine's diff; its
        own bookkeeping files included). Deleted paths are not listed."""
        self._check_open()
        try:
            changes = self._client.api.diff(self.id) or []
        except NotFound as exc:
            raise self._died("before diff") from exc
        except (DockerException, OSError) as exc:
            raise SandboxError(f"cannot list changed paths: {short(exc)}") from exc
        return [c["Path"] for c in changes if c.get("Kind") in (0, 1)]

    def diff(self, *, workdir: str | None = None, base: str = "HEAD",
             max_bytes: int = 1 << 30) -> str:
        """`git diff --binary` of the work tree against `base`, untracked files included
        (ignored ones not). SandboxError past `max_bytes`.

        Uses a throwaway copy of the index, so the repository's own index is untouched.
        """
        wd = self._abs(workdir or self.workdir)
        qb = shlex.quote(base)
        script = f"""set -e
gitdir=$({GIT} rev-parse --absolute-git-dir)
mkdir -p {INTERNAL_DIR}
idx={INTERNAL_DIR}/diff-index.$$
trap 'rm -f "$idx"' EXIT
# -p: the copy keeps the index's mtime, by which git knows to re-read a file changed in the
# same second as the index was written; a fresh one makes a same-size edit look unchanged
if [ -f "$gitdir/index" ]; then cp -p "$gitdir/index" "$idx"; else rm -f "$idx"; fi
base={qb}
if ! {GIT} rev-parse -q --verify "$base^{{commit}}" >/dev/null; then
  if [ "$base" = HEAD ]; then base={_EMPTY_TREE}; else echo "unknown base: $base" >&2; exit 3; fi
fi
GIT_INDEX_FILE="$idx" {GIT} add -A .
GIT_INDEX_FILE="$idx" {GIT} diff --cached --binary --no-color --no-ext-diff --no-textconv \
  "$base"
echo {_DIFF_END}
"""
        res = self._sh(script, "diff", workdir=wd, max_output=max_bytes)
        if res.exit_code != 0:
            raise DiffError(f"diff failed in {wd}: {first_error(res.stderr or res.stdout)}")
        if res.stdout_truncated:
            raise DiffError(f"the diff is over {max_bytes >> 20} MiB")
        # An empty diff must mean "no changes", never "the output got lost on the way".
        if not res.stdout.endswith(_DIFF_END + "\n"):
            raise SandboxError("the diff's output arrived incomplete (no end marker)")
        return res.stdout[: -len(_DIFF_END) - 1]


def _first_patch_error(text: str) -> str:
    """GNU patch's first failure, with the file it was checking."""
    current = None
    for ln in (ln.strip() for ln in text.splitlines()):
        m = re.match(r"(?:checking|patching) file (.+)", ln)
        if m:
            current = m.group(1).strip("'\"")
            continue
        if re.search(r"FAILED|can't find file|No such file|malformed|Only garbage|"
                     r"Reversed|already exists|doesn't exist|not a regular", ln):
            return f"{current}: {ln}"[:300] if current and current not in ln else ln[:300]
    return first_error(text)

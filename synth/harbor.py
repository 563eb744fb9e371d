"""The real Harbor (PyPI `harbor`) run against exported tasks: its lint, oracle and nop agents.

Harbor needs Python >= 3.12 and Docker Compose v2; the project's venv is 3.11 and Debian
bookworm packages only Compose v1. So `ensure()` makes a separate venv (`.venv-harbor/`)
from a 3.12+ interpreter and, where `docker compose` is missing, puts a Compose CLI plugin
into that venv: Debian's newest docker-compose package (a newer suite's static binary), else
one built from Compose's Go module. Both steps are idempotent and cached.

    python -m synth.harbor ensure             # make the venv (and Compose) once
    python -m synth.harbor check TASK_DIR     # lint, oracle run, nop run; JSON out
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from envs.errors import InfraError
from envs.files import atomic_write, locked

HARBOR_VERSION = "0.26.0"
COMPOSE_MODULE = "github.com/docker/compose/v5"
COMPOSE_VERSION = "v5.6.0"
REPO = Path(__file__).resolve().parents[1]
DEFAULT_HOME = REPO / ".venv-harbor"
PYTHON_ENV = "ENVFACTORY_HARBOR_PYTHON"  # an explicit interpreter wins over the search


class HarborError(InfraError):
    """Harbor could not be installed or run; the message says why."""


def _tail(text: str | bytes | None, n: int = 2000) -> str:
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return (text or "")[-n:]


def _is_312(python: str) -> bool:
    try:
        out = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == "True"


def find_python() -> Path | None:
    """A Python >= 3.12 interpreter: $ENVFACTORY_HARBOR_PYTHON, PATH, then pyenv's versions."""
    candidates = [os.environ.get(PYTHON_ENV, "")]
    candidates += [shutil.which(f"python3.{minor}") or "" for minor in (12, 13, 14)]
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(f"{pyenv}/versions/3.1[2-9]*/bin/python"))
    for c in candidates:
        if c and Path(c).is_file() and _is_312(c):
            return Path(c)
    return None


def _run(cmd: Sequence[str], what: str, timeout: float, **kw: object) -> str:
    try:
        out = subprocess.run(list(cmd), capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as exc:
        raise HarborError(f"{what} timed out after {timeout:.0f}s: {_tail(exc.stdout)}") from exc
    except OSError as exc:
        raise HarborError(f"{what}: {exc}") from exc
    if out.returncode != 0:
        raise HarborError(f"{what} failed (exit {out.returncode}): {_tail(out.stderr or out.stdout)}")
    return out.stdout


def _ensure_venv(home: Path, python: Path | None) -> None:
    marker = home / ".harbor-version"
    if (home / "bin/harbor").is_file() and marker.is_file() \
            and marker.read_text().strip() == HARBOR_VERSION:
        return
    python = python or find_python()
    if python is None:
        raise HarborError(f"harbor {HARBOR_VERSION} needs Python >= 3.12 and none was found "
                          f"(set {PYTHON_ENV}, or install one with pyenv)")
    if not (home / "bin/python").is_file():
        _run([str(python), "-m", "venv", str(home)], "making the harbor venv", 300)
    # uv resolves and links harbor's ~150 dependencies in seconds where pip takes minutes.
    _run([str(home / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
          "uv"], "pip install uv", 600)
    _run([str(home / "bin/uv"), "pip", "install", "-q", "--python", str(home / "bin/python"),
          f"harbor=={HARBOR_VERSION}"], f"uv pip install harbor=={HARBOR_VERSION}", 900)
    atomic_write(marker, HARBOR_VERSION + "\n")


def _has_compose(env: dict[str, str]) -> bool:
    try:
        out = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True,
                             timeout=30, env=env)
    except (OSError, subprocess.SubprocessError):
        return False
    # v2+ answers "Docker Compose version v2.x"; anything else is not the plugin.
    return out.returncode == 0 and "Docker Compose version" in out.stdout


def _build_compose(plugin: Path) -> None:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).is_file():
        raise HarborError("harbor needs `docker compose` (v2+) and neither it nor Go (to build "
                          f"{COMPOSE_MODULE}@{COMPOSE_VERSION}) is installed")
    env = {**os.environ, "GOFLAGS": "-buildvcs=false"}
    info = json.loads(_run([go, "mod", "download", "-json", f"{COMPOSE_MODULE}@{COMPOSE_VERSION}"],
                           "downloading the Compose module", 600, env=env))
    plugin.parent.mkdir(parents=True, exist_ok=True)
    # Built inside the module's own directory so its go.mod (and its excludes) apply, which
    # `go install module@version` refuses to honour.
    _run([go, "build", "-trimpath", "-ldflags",
          f"-s -w -X {COMPOSE_MODULE}/internal.Version={COMPOSE_VERSION}",
          "-o", str(plugin), "./cmd"], "building docker compose", 900, cwd=info["Dir"], env=env)


# Debian's newest docker-compose package is a static Compose v2 CLI plugin, a 13 MB download
# where building the Go module takes minutes on 2 cores. Older than this it cannot load the
# compose files Harbor writes (trixie's 2.26 fails `harbor lint`; forky's 2.40 passes).
COMPOSE_MIN = (2, 30)
COMPOSE_SUITES = ("sid", "forky", "trixie")


def _version_key(debian_version: str) -> tuple[int, ...]:
    upstream = debian_version.split(":")[-1].split("-")[0]
    return tuple(int(p) for p in re.findall(r"\d+", upstream)[:3])


def _debian_compose(plugin: Path) -> bool:
    """Install Debian's newest docker-compose (>= COMPOSE_MIN) as the plugin; False when no
    suite of the mirror serves one."""
    import lzma
    import urllib.request

    from envs.config import get_settings

    mirror = get_settings().debian_mirror.rstrip("/")
    best: tuple[tuple[int, ...], str] | None = None
    for suite in COMPOSE_SUITES:
        try:
            with urllib.request.urlopen(f"{mirror}/dists/{suite}/main/binary-amd64/Packages.xz",
                                        timeout=60) as resp:
                index = lzma.decompress(resp.read()).decode(errors="replace")
        except (OSError, lzma.LZMAError):
            continue
        m = re.search(r"^Package: docker-compose\n(?:(?!\n\n).)*?^Version: (\S+)\n"
                      r"(?:(?!\n\n).)*?^Filename: (\S+)$", index, re.M | re.S)
        if m and (best is None or _version_key(m.group(1)) > best[0]):
            best = (_version_key(m.group(1)), m.group(2))
    if best is None or best[0] < COMPOSE_MIN:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        deb = Path(tmp) / "compose.deb"
        try:
            urllib.request.urlretrieve(f"{mirror}/{best[1]}", deb)
        except OSError:
            return False
        _run(["dpkg-deb", "-x", str(deb), tmp], "unpacking docker-compose", 120)
        found = Path(tmp) / "usr/libexec/docker/cli-plugins/docker-compose"
        if not found.is_file():
            return False
        plugin.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(found, plugin)
    return True


def _compose_env(home: Path, env: dict[str, str]) -> dict[str, str]:
    """Extra variables under which `docker compose` works: none when it already does."""
    if _has_compose(env):
        return {}
    config = home / "docker"
    plugin = config / "cli-plugins/docker-compose"
    if not plugin.is_file() and not (shutil.which("dpkg-deb") and _debian_compose(plugin)):
        _build_compose(plugin)
    # DOCKER_CONFIG only moves the CLI's plugin and auth lookup; the engine is still reached
    # through DOCKER_HOST or the default socket, as envfactory reaches it.
    extra = {"DOCKER_CONFIG": str(config)}
    if not _has_compose({**env, **extra}):
        raise HarborError(f"{plugin} does not answer `docker compose version`")
    return extra


@dataclass(frozen=True)
class Trial:
    """One Harbor trial as its result.json records it."""

    agent: str
    reward: float | None
    error: str | None = None


@dataclass(frozen=True)
class Report:
    """Harbor's verdict on one task: lint findings, and the reward of each agent run."""

    task_dir: str
    lint: list[str]
    trials: dict[str, Trial] = field(default_factory=dict)
    seconds: float = 0.0

    def reward(self, agent: str) -> float | None:
        trial = self.trials.get(agent)
        return trial.reward if trial else None

    @property
    def ok(self) -> bool:
        """Lint-clean, the oracle solves it and doing nothing does not."""
        return not self.lint and self.reward("oracle") == 1.0 and self.reward("nop") == 0.0


@dataclass(frozen=True)
class Harbor:
    """An installed Harbor and the environment its CLI runs under."""

    home: Path
    extra_env: dict[str, str]

    @property
    def exe(self) -> Path:
        return self.home / "bin/harbor"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}  # ours is 3.11
        # Offline: no telemetry, and LiteLLM's bundled price map instead of a fetch + retries.
        env.update(HARBOR_TELEMETRY="0", LITELLM_LOCAL_MODEL_COST_MAP="True")
        env.update(self.extra_env)
        return env

    def lint(self, task_dir: Path) -> list[str]:
        """`harbor lint` with its default rules (plus the task's own lint config)."""
        try:
            out = subprocess.run([str(self.exe), "lint", "--json", str(task_dir)],
                                 capture_output=True, text=True, timeout=120, env=self.env())
        except (OSError, subprocess.SubprocessError) as exc:
            raise HarborError(f"harbor lint: {exc}") from exc
        if out.returncode not in (0, 1):
            raise HarborError(f"harbor lint failed (exit {out.returncode}): {_tail(out.stderr)}")
        return [f"{f['rule']} {f['path']}: {f['message']}" for f in json.loads(out.stdout or "[]")]

    def run(self, task_dir: Path, agents: Sequence[str], jobs_dir: Path,
            timeout: float = 900.0) -> dict[str, Trial]:
        """One `harbor run` job with one trial per agent (concurrently) on the docker env."""
        jobs_dir = Path(jobs_dir).resolve()
        jobs_dir.mkdir(parents=True, exist_ok=True)
        name = f"{Path(task_dir).name}-{'-'.join(agents)}-{time.time_ns()}"
        config = jobs_dir / f"{name}.json"
        atomic_write(config, json.dumps({
            "job_name": name, "jobs_dir": str(jobs_dir), "n_concurrent_trials": len(agents),
            "quiet": True, "environment": {"type": "docker", "delete": True},
            "agents": [{"name": a} for a in agents],
            "tasks": [{"path": str(Path(task_dir).resolve())}],
        }))
        _run([str(self.exe), "run", "--config", str(config), "--yes"], "harbor run", timeout,
             env=self.env())
        trials: dict[str, Trial] = {}
        for result in sorted((jobs_dir / name).glob("*/result.json")):
            data = json.loads(result.read_text())
            rewards = (data.get("verifier_result") or {}).get("rewards") or {}
            exc = data.get("exception_info")
            agent = data["agent_info"]["name"]
            trials[agent] = Trial(
                agent=agent, reward=rewards.get("reward"),
                error=f"{exc['exception_type']}: {exc['exception_message']}" if exc else None)
        missing = set(agents) - set(trials)
        if missing:
            raise HarborError(f"harbor run wrote no trial result for {sorted(missing)} "
                              f"under {jobs_dir / name}")
        return trials

    def check(self, task_dir: Path, jobs_dir: Path) -> Report:
        """Lint the task, then run the oracle and the nop agent on it."""
        t0 = time.monotonic()
        findings = self.lint(task_dir)
        trials = self.run(task_dir, ("oracle", "nop"), jobs_dir)
        return Report(task_dir=str(task_dir), lint=findings, trials=trials,
                      seconds=round(time.monotonic() - t0, 1))


def ensure(home: Path = DEFAULT_HOME, python: Path | None = None) -> Harbor:
    """Harbor installed in `home` (made on first use) and a working `docker compose`."""
    home = Path(home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    with locked(home / ".lock"):
        _ensure_venv(home, python)
        return Harbor(home=home, extra_env=_compose_env(home, dict(os.environ)))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m synth.harbor", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("ensure", help="install harbor (and docker compose) if missing")
    chk = sub.add_parser("check", help="harbor lint + oracle and nop runs of exported tasks")
    chk.add_argument("task_dirs", nargs="+", type=Path)
    chk.add_argument("--jobs-dir", type=Path, default=Path("harbor-jobs"))
    args = ap.parse_args(argv)
    try:
        harbor = ensure()
        if args.cmd == "ensure":
            print(json.dumps({"harbor": str(harbor.exe), "version": HARBOR_VERSION,
                              "env": harbor.extra_env}))
            return 0
        reports = [harbor.check(d, args.jobs_dir) for d in args.task_dirs]
    except HarborError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for r in reports:
        print(json.dumps({**asdict(r), "ok": r.ok}))
    return 0 if all(r.ok for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())

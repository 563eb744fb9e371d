"""The side venv `.venv-verifiers/` the verifiers tests run in (test infrastructure).

verifiers 0.4.0 pins mcp==2.0.0 while openenv (in the main venv, for `envfactory serve`)
needs mcp<2, so the two cannot share a venv. The side venv holds the `verifiers` extra (the
pin is read from pyproject.toml, so there is one) and then a `.pth` file that APPENDS the main
venv's site-packages and the repository root to sys.path: envfactory, docker, SQLAlchemy...
come from the main venv, while verifiers, mcp 2 and openai resolve first from the side venv.

    python -m tests.envs.verifiers_venv     # make it (idempotent); prints its python
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import tomllib

from envs.files import locked

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv-verifiers"
PTH_NAME = "zz-envfactory-main-venv.pth"
STAMP_NAME = ".envfactory-stamp"


class SideVenvError(RuntimeError):
    """The side venv could not be made; the message says why."""


def requirements() -> list[str]:
    """The `verifiers` extra exactly as pyproject.toml writes it."""
    with open(REPO / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    return list(project["optional-dependencies"]["verifiers"])


def _main_site() -> Path:
    # The venv running this code (pytest's) is the "main" one whose packages get appended.
    return Path(sysconfig.get_paths()["purelib"])


def _stamp(reqs: list[str]) -> str:
    # Anything that changes what the venv must hold or what its .pth points at.
    key = {"reqs": reqs, "python": sys._base_executable, "version": sys.version,
           "main_site": str(_main_site()), "repo": str(REPO)}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()


def _run(cmd: list[str], what: str, timeout: float) -> None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise SideVenvError(f"{what} timed out after {timeout:.0f}s") from exc
    except OSError as exc:
        raise SideVenvError(f"{what}: {exc}") from exc
    if out.returncode != 0:
        raise SideVenvError(f"{what} failed (exit {out.returncode}): "
                            f"{(out.stderr or out.stdout)[-3000:]}")


def _side_site(python: Path) -> Path:
    out = subprocess.run([str(python), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, timeout=60, check=True)
    return Path(out.stdout.strip())


def python(venv: Path = VENV) -> Path:
    return venv / "bin" / "python"


def ensure(venv: Path = VENV) -> Path:
    """Make (or bring up to date) the side venv; returns its python. A second call with the
    same pin, interpreter and main venv only reads the stamp."""
    reqs = requirements()
    stamp = _stamp(reqs)
    stamp_file = venv / STAMP_NAME
    py = python(venv)
    if py.is_file() and stamp_file.is_file() and stamp_file.read_text().strip() == stamp:
        return py
    # `..venv-*.lock` in .gitignore: beside the venv, since the venv may not exist yet.
    with locked(venv.with_name(f".{venv.name}.lock")):
        if py.is_file() and stamp_file.is_file() and stamp_file.read_text().strip() == stamp:
            return py  # another worker made it while this one waited
        stamp_file.unlink(missing_ok=True)
        if not py.is_file() or not _usable(py):
            shutil.rmtree(venv, ignore_errors=True)
            # The base interpreter, not the main venv's: a venv of a venv would inherit nothing
            # useful and some tools refuse it. Same version, so compiled wheels from the main
            # venv (torch, pydantic-core, ...) load in the side one.
            _run([sys._base_executable, "-m", "venv", str(venv)], "python -m venv", 300)
        site = _side_site(py)
        # Without the .pth while installing: pip/uv must see (and so never replace or remove)
        # only the side venv's own packages, never the main venv's.
        (site / PTH_NAME).unlink(missing_ok=True)
        _install(py, reqs)
        (site / PTH_NAME).write_text(f"{_main_site()}\n{REPO}\n")
        stamp_file.write_text(stamp + "\n")
    return py


def _usable(py: Path) -> bool:
    try:
        out = subprocess.run([str(py), "-c", "import sys; print(sys.version)"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == sys.version


def _install(py: Path, reqs: list[str]) -> None:
    # uv resolves and links verifiers' ~100 dependencies in seconds where pip takes a minute
    # or more; uv itself is one wheel from pip's cache.
    uv = py.parent / "uv"
    if not uv.is_file():
        _run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "uv"],
             "pip install uv", 600)
    _run([str(uv), "pip", "install", "-q", "--python", str(py), *reqs],
         f"uv pip install {' '.join(reqs)}", 1200)


if __name__ == "__main__":
    t0 = time.monotonic()
    print(ensure(), f"({time.monotonic() - t0:.1f}s)")

"""`envfactory doctor`: what this machine has, what is missing, and (with --fix) the remedy."""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Callable
from typing import Any

from envs import ca, engine, images
from envs.config import get_settings


def _check(name: str, ok: bool, detail: str, required: bool = True) -> dict[str, Any]:
    return {"name": name, "ok": ok, "detail": detail, "required": required}


def run_checks(*, fix: bool = False, log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    s = get_settings()
    checks = [_check("python", True, platform.python_version())]
    is_root = os.geteuid() == 0
    checks.append(_check("root", is_root, "yes" if is_root else
                         "no (installing or starting the engine and debootstrap need root)",
                         required=False))
    try:
        if fix:
            engine.ensure_engine(log=log)
        i = engine.info()
        checks.append(_check("docker engine", True,
                             f"{i.server_version}, {i.storage_driver}, cgroups v{i.cgroup_version}"
                             f" ({i.cgroup_driver}), root {i.root_dir}"))
        engine_ok = True
    except engine.EngineError as exc:
        checks.append(_check("docker engine", False, str(exc)))
        engine_ok = False
    bootstrap = shutil.which("debootstrap")
    checks.append(_check("debootstrap", bootstrap is not None or is_root,
                         bootstrap or "missing (installed on first base build when root)",
                         required=False))
    try:
        bundle = ca.detect()
        checks.append(_check("CA bundle", True, "injection off" if bundle is None else
                             f"{bundle.path} ({bundle.source}, {len(bundle)} certificates)"))
    except ca.CAError as exc:
        checks.append(_check("CA bundle", False, str(exc)))
    if engine_ok:
        try:
            missing = [n for n in images.recipes() if not images.exists(images.plan(n).tag)]
            checks.append(_check(
                "images", not missing,
                "all current" if not missing else
                f"not built: {', '.join(missing)} (run `envfactory images build`)",
                required=False))
        except Exception as exc:  # a broken CA override shows up above; keep doctor going
            checks.append(_check("images", False, str(exc).splitlines()[0], required=False))
    try:
        from envs.registry import Registry

        with Registry() as reg:
            reg.list_images()
        checks.append(_check("registry", True, _redact(s.registry_url)))
    except Exception as exc:
        checks.append(_check("registry", False, f"{_redact(s.registry_url)}: "
                             f"{str(exc).splitlines()[0][:200]}"))
    free = shutil.disk_usage(s.home if s.home.exists() else "/").free
    checks.append(_check("disk", free > 10 * 2**30, f"{free / 2**30:.0f} GiB free",
                         required=False))
    return checks


def _redact(url: str) -> str:
    # Never print a database password.
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url

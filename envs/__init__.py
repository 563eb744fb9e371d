"""envs: what an environment is, how to use it, how to verify it.

The public façade; implementation lives in modules named for what they hold. Heavy
modules (Docker, SQLAlchemy) load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from envs.models import (
    EnvSpec,
    ExecResult,
    FailureKind,
    ImageRecord,
    Language,
    Limits,
    RunRecord,
    SWETask,
    TerminalTask,
    TestResult,
    TestStatus,
)

_LAZY = {
    "Registry": "envs.registry",
    "Sandbox": "envs.sandbox",
    "Settings": "envs.config",
    "get_settings": "envs.config",
}

__all__ = [
    "EnvSpec",
    "ExecResult",
    "FailureKind",
    "ImageRecord",
    "Language",
    "Limits",
    "Registry",
    "RunRecord",
    "SWETask",
    "Sandbox",
    "Settings",
    "TerminalTask",
    "TestResult",
    "TestStatus",
    "get_settings",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'envs' has no attribute {name!r}")
    return getattr(import_module(module), name)

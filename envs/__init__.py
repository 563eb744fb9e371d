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

# name -> module, or (module, attribute) where the façade name differs
_LAZY: dict[str, str | tuple[str, str]] = {
    "ApplyPatch": "envs.api",
    "Environment": "envs.api",
    "Observation": "envs.api",
    "Pool": "envs.pool",
    "PoolConfig": "envs.pool",
    "ReadFile": "envs.api",
    "Recipe": "envs.pool",
    "Registry": "envs.registry",
    "ResetMode": "envs.pool",
    "Shell": "envs.api",
    "StepResult": "envs.api",
    "Submit": "envs.api",
    "SyncEnvironment": "envs.api",
    "VerifyResult": "envs.api",
    "WriteFile": "envs.api",
    "acheck_env": "envs.check",
    "check_env": "envs.check",
    "find_tasks": ("envs.query", "find"),
    "load_environment": "envs.api",
    "make": "envs.api",
    "sample_tasks": ("envs.query", "sample"),
    "split_tasks": ("envs.query", "split"),
    "Sandbox": "envs.sandbox",
    "Settings": "envs.config",
    "get_settings": "envs.config",
}

__all__ = [
    "ApplyPatch",
    "EnvSpec",
    "Environment",
    "ExecResult",
    "FailureKind",
    "ImageRecord",
    "Language",
    "Limits",
    "Observation",
    "Pool",
    "PoolConfig",
    "ReadFile",
    "Recipe",
    "Registry",
    "ResetMode",
    "RunRecord",
    "SWETask",
    "Sandbox",
    "Settings",
    "Shell",
    "StepResult",
    "Submit",
    "SyncEnvironment",
    "TerminalTask",
    "TestResult",
    "TestStatus",
    "VerifyResult",
    "WriteFile",
    "acheck_env",
    "check_env",
    "find_tasks",
    "get_settings",
    "load_environment",
    "make",
    "sample_tasks",
    "split_tasks",
]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'envs' has no attribute {name!r}")
    module, attr = target if isinstance(target, tuple) else (target, name)
    return getattr(import_module(module), attr)

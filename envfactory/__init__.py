"""envfactory."""

from typing import Any

# verifiers (>= 0.4) imports a taskset id as a top-level module and takes the Taskset, Harness
# and Env it exports: `vf-eval envfactory`, `--env.taskset.id envfactory`. Lazy, so importing
# envfactory does not need the verifiers extra.
__all__ = ["EnvfactoryEnv", "EnvfactoryHarness", "EnvfactoryTaskset"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from envs import verifiers_env

        return getattr(verifiers_env, name)
    raise AttributeError(f"module 'envfactory' has no attribute {name!r}")

"""The one typed configuration of envfactory.

Every field can be set by an environment variable `ENVFACTORY_<FIELD>` (for example
`ENVFACTORY_DB_URL`, `ENVFACTORY_CA_BUNDLE`); the CLI's global options are built from it.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "envfactory"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENVFACTORY_", extra="ignore", frozen=True)

    home: Path = Field(default_factory=_default_home, description="where state is kept")
    db_url: str | None = Field(
        default=None, description="SQLAlchemy URL of the registry (default: SQLite under home)"
    )
    ca_bundle: str | None = Field(
        default=None,
        description="PEM bundle to inject into images; 'none' disables; default: auto-detect",
    )
    debian_suite: str = Field(default="bookworm", description="Debian suite of the base image")
    debian_mirror: str = Field(
        default="http://deb.debian.org/debian", description="apt mirror for base images"
    )
    base_source: str = Field(
        default="auto",
        description="how the Debian base is made: auto (pull, else debootstrap), pull, debootstrap",
    )
    image_prefix: str = Field(default="envfactory", description="repository prefix of image tags")
    docker_timeout: int = Field(default=600, description="seconds for one Docker API call")
    sandbox_memory: str = Field(default="2g", description="default memory limit of a sandbox")
    sandbox_pids: int = Field(default=512, description="default pids limit of a sandbox")
    sandbox_cpus: float = Field(default=2.0, description="default CPU limit of a sandbox")
    output_bytes: int = Field(default=4 * 1024 * 1024, description="cap per output stream")
    workers: int = Field(default=2, description="local worker processes")
    executor: str = Field(default="local", description="where jobs run: local (a process "
                          "pool here) or celery (`envfactory worker` processes via broker_url)")
    broker_url: str = Field(default="redis://127.0.0.1:6379/0",
                            description="Celery broker of the celery executor")
    queue_lease_s: float = Field(default=30.0, description="seconds a queued job's claim lasts "
                                 "without a heartbeat before another worker takes it over")
    queue_visibility_s: float = Field(default=300.0, description="seconds Redis waits before "
                                      "redelivering a message no worker acknowledged")
    queue_max_attempts: int = Field(default=3, description="claims of a queued job that never "
                                    "finishes (its workers die) before it is failed")
    llm_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint for synth's optional LLM drafter"
    )
    llm_model: str = Field(default="default", description="model name sent to llm_url")
    llm_api_key: str | None = Field(default=None, description="bearer token for llm_url")
    serve_token: str | None = Field(
        default=None, description="bearer token of `envfactory serve` and of its clients "
        "(envs.make(task, remote=URL))")
    policy_model: str = Field(
        default="smollm2", description="the bundled policy: smollm2 (SmolLM2-135M-Instruct) or tiny"
    )
    policy_device: str = Field(default="cpu", description="torch device of the policy: cpu, cuda")
    policy_lora_rank: int = Field(default=8, description="LoRA rank of the trained adapter")

    @property
    def registry_url(self) -> str:
        if self.db_url:
            return self.db_url
        return f"sqlite:///{self.home / 'registry.sqlite'}"

    @property
    def runs_dir(self) -> Path:
        return self.home / "runs"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings_cache() -> None:
    """Forget the cached settings (tests change ENVFACTORY_* variables)."""
    get_settings.cache_clear()

"""A Gymnasium adapter: one task as a `gymnasium.Env` with text spaces.

    env = envs.gym.TaskEnv("envfactory__pyclamp-1")     # or gymnasium.make("envfactory/Task-v0", task=...)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("cat clamp.py")
    obs, reward, terminated, truncated, info = env.step('{"type": "submit"}')   # graded
    env.close()

Actions are text (shell, JSON or a tool call as JSON), observations the text the agent would
read. The reward is 0 until Submit, which verifies (`info["verdict"]`); an infrastructure
failure gives reward 0 with `info["verdict"].reward is None`, so a trainer can drop it.
"""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium import spaces

from envs.actions import Observation
from envs.api import SyncEnvironment, Task

MAX_TEXT = 1 << 20


class AnyText(spaces.Text):
    """A Text space holding any string up to max_length (an agent's output and a command's
    output are not drawn from a small charset)."""

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length


class TaskEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, task: Task | str, *, render_mode: str | None = None,
                 **env_kwargs: Any) -> None:
        self.observation_space = AnyText(max_length=MAX_TEXT)
        self.action_space = AnyText(max_length=MAX_TEXT)
        self.render_mode = render_mode
        self._env = SyncEnvironment(task, auto_verify=True, **env_kwargs)
        self._last: Observation | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        obs, info = self._env.reset(seed=seed, rollout_id=(options or {}).get("rollout_id"))
        self._last = obs
        return obs.text, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        res = self._env.step(action)
        self._last = res.observation
        return res.observation.text, res.reward, res.terminated, res.truncated, res.info

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self._last is not None:
            return self._last.text
        return None

    def close(self) -> None:
        self._env.close()


def register() -> None:
    """Make `gymnasium.make("envfactory/Task-v0", task=...)` work (idempotent)."""
    if "envfactory/Task-v0" not in gymnasium.registry:
        gymnasium.register(id="envfactory/Task-v0", entry_point="envs.gym:TaskEnv",
                           disable_env_checker=True)


register()

"""The Gymnasium adapter: a terminal task played through gymnasium's own API."""

from __future__ import annotations

import gymnasium
import pytest

import envs.gym  # noqa: F401  (registers envfactory/Task-v0)
from envs.gym import AnyText, TaskEnv
from tests.envs.test_api import terminal_task

pytestmark = pytest.mark.docker


def test_text_spaces_hold_any_text():
    space = AnyText(max_length=10)
    assert space.contains("ü → $ {}") and not space.contains("x" * 11) and not space.contains(3)


def test_a_task_through_gymnasium(base_image):
    task = terminal_task(base_image, task_id="gym-add")
    env = gymnasium.make("envfactory/Task-v0", task=task, render_mode="ansi")
    assert isinstance(env.unwrapped, TaskEnv)
    try:
        obs, info = env.reset(seed=3)
        assert "/app/input.txt" in obs and info["seed"] == 3
        obs, reward, terminated, truncated, info = env.step("cat /app/input.txt")
        assert obs.startswith("3 4") and reward == 0.0 and not terminated
        assert env.render() == obs
        obs, reward, terminated, truncated, info = env.step('{"type": "nope"}')
        assert obs.startswith("[not an action") and not terminated
        env.step(task.solution)
        obs, reward, terminated, truncated, info = env.step('{"type": "submit"}')
        assert terminated and not truncated and reward == 1.0
        assert info["verdict"].reward == 1.0
        env.reset(seed=4)  # a fresh episode: nothing solved
        *_, reward, terminated, _, info = env.step('{"type": "submit"}')
        assert terminated and reward == 0.0 and not info["verdict"].is_infrastructure
    finally:
        env.close()

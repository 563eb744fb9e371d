"""The registry's one error type, and its messages kept to one line."""

from __future__ import annotations

from envs.errors import InfraError

__all__ = ["RegistryError", "one_line"]


class RegistryError(InfraError):
    """The registry cannot be opened or used; the message says why in one line."""


def one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc) or type(exc).__name__
    return " ".join(text.split("\n")[0].split())

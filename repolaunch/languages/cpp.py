"""C++: the same build systems and test tooling as C (see `repolaunch.languages.c`), with
GoogleTest, Catch2 and doctest reports read structurally."""

from __future__ import annotations

from envs.models import Language
from repolaunch.languages import register
from repolaunch.languages.c import NativePlugin


@register("cpp")
class CppPlugin(NativePlugin):
    language = Language.CPP

"""C++: the same build systems and test tooling as C (see `repolaunch.languages.c`), with
GoogleTest, Catch2 and doctest reports read structurally."""

from __future__ import annotations

from envs.models import Language
from repolaunch.languages import Traits, register
from repolaunch.languages.c import NATIVE_BUILD_FILES, NativePlugin


@register("cpp")
class CppPlugin(NativePlugin):
    language = Language.CPP
    traits = Traits(
        image_family="cpp",
        extensions=(".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp",
                    ".ixx", ".cppm"),
        build_files=NATIVE_BUILD_FILES,
        test_files=(r"test_\w+\.(cc|cpp|cxx|hpp|hh|h)",
                    r"\w+_(tests?|unittest|gtest)\.(cc|cpp|cxx|hpp|h)",
                    r"\w+Tests?\.(cc|cpp|cxx)", r"tests?\.(cc|cpp|cxx)"),
        github_names=("C++",),
    )

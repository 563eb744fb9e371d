"""JUnit XML: Maven Surefire, Gradle, pytest --junitxml, PHPUnit --log-junit, GoogleTest
--gtest_output=xml, ctest --output-junit, Catch2/doctest junit reporters, go-junit-report.

Status: a ``<failure>`` child is FAILED, ``<error>`` ERROR, ``<skipped>`` SKIPPED
(pytest's ``type="pytest.xfail"`` is XFAIL); GoogleTest ``status="notrun"`` (DISABLED_)
and ``result="skipped|suppressed"`` are SKIPPED; a ctest test that could not run
(``status="notrun"``, "Unable to find executable") is ERROR, as ctest counts it failed. Surefire's ``<flakyFailure>`` alone
means the test passed on a rerun, so it is PASSED.

Test ids follow each ecosystem's own convention (what SWE-bench-style FAIL_TO_PASS
lists contain), chosen by flavor -- ``junit:<flavor>``, or detected when not given:

- ``java``    ``package.Class#method`` (a trailing ``()`` from JUnit 5 is dropped)
- ``pytest``  the node id, ``tests/test_x.py::TestC::test_name[param]``
- ``gtest``   ``Suite.Test`` (``Inst/Suite.Test/0`` for parametrized tests)
- ``phpunit`` ``Namespace\\Class::method`` (``... with data set #0`` kept)
- ``name``    the testcase name alone: ctest, Catch2, doctest, go-junit-report
  (aliases ``ctest``, ``catch2``, ``doctest``, ``go``)
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from envs.models import TestStatus
from envs.reports._xml import XmlDocument, read_xml
from envs.reports.registry import STATUS_RANK, ParseContext, ReportParseError, register

FLAVORS = ("auto", "java", "pytest", "gtest", "phpunit", "name", "ctest", "catch2", "doctest", "go")
_NAME_ALIASES = {"ctest", "catch2", "doctest", "go"}
_PYTHON_MODULE = re.compile(r"test_[a-z0-9_]+|[a-z0-9_]+_test")
_CPP_SOURCE = re.compile(r"\.(c|cc|cpp|cxx|c\+\+|h|hh|hpp|hxx|ipp|inl)$", re.I)


def detect_flavor(doc: XmlDocument) -> str:
    """Which tool wrote this JUnit XML, from attributes only that tool writes."""
    roots = [r for r in doc.roots if r.tag in ("testsuites", "testsuite")]
    cases = list(doc.iter("testcase"))
    suites = list(doc.iter("testsuite"))
    if any(r.tag == "testsuites" and r.get("name") == "AllTests" for r in roots) or any(
        "value_param" in c.attrib
        or "type_param" in c.attrib
        or ("result" in c.attrib and "status" in c.attrib)
        for c in cases
    ):
        return "gtest"
    if any(
        "class" in c.attrib or "assertions" in c.attrib or (c.get("file") or "").endswith(".php")
        for c in cases
    ):
        return "phpunit"
    if any(s.get("name") == "pytest" for s in suites) or any(
        (c.get("file") or "").endswith(".py") for c in cases
    ):
        return "pytest"
    named = [c for c in cases if c.get("name")]
    name_flavored = bool(named) and all(_is_name_flavored(c) for c in named)
    if name_flavored and any(c.get("classname") for c in named):
        # before the module-name guess: a ctest test named "parser_test" (classname =
        # name) or a Catch2 binary "calc_test" (classname "calc_test.global") is no
        # Python module
        return "name"
    if any(
        _PYTHON_MODULE.fullmatch(part)
        for c in cases
        for part in (c.get("classname") or "").split(".")
    ):
        return "pytest"  # a custom junit_suite_name, but test_x / x_test module names
    if name_flavored:
        return "name"
    return "java"


def _is_name_flavored(case: ET.Element) -> bool:
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    return (
        not classname
        or classname == name
        or classname.endswith(".global")  # Catch2: <binary>.global
        or bool(_CPP_SOURCE.search(classname))  # doctest: classname is the source file
        or ("/" in classname and name.startswith(("Test", "Example", "Fuzz", "Benchmark")))  # go
    )


def _ctest_could_not_run(case: ET.Element, skipped: ET.Element) -> bool:
    """ctest writes status="notrun" both for tests that skipped themselves
    (SKIP_RETURN_CODE, SKIP_REGULAR_EXPRESSION) and for tests that could not run
    ("Unable to find executable", a failed fixture), which it counts as failures."""
    if (case.get("status") or "").lower() != "notrun":
        return False
    message = skipped.get("message") or ""
    return bool(message) and not message.startswith("SKIP_") and message != "Disabled"


def _status(case: ET.Element) -> tuple[TestStatus, str | None]:
    status, message = TestStatus.PASSED, None
    for child in case:
        tag = child.tag
        if tag == "failure":
            candidate = TestStatus.FAILED
        elif tag == "error":
            candidate = TestStatus.ERROR
        elif tag == "skipped":
            kind = (child.get("type") or "").lower()
            candidate = TestStatus.XFAIL if kind == "pytest.xfail" else TestStatus.SKIPPED
        else:
            continue
        if candidate is TestStatus.SKIPPED and _ctest_could_not_run(case, child):
            candidate = TestStatus.ERROR
        if STATUS_RANK[candidate] >= STATUS_RANK[status]:
            status = candidate
            message = child.get("message") or (child.text or "").strip() or None
    if status is TestStatus.PASSED:
        gtest_status = (case.get("status") or "").lower()
        result = (case.get("result") or "").lower()
        if gtest_status in ("notrun", "disabled") or result in ("skipped", "suppressed"):
            status = TestStatus.SKIPPED
        elif gtest_status == "fail":  # ctest without a <failure> child
            status = TestStatus.FAILED
    return status, message


def _pytest_id(classname: str, name: str, file: str | None) -> str:
    """Invert pytest's junitxml ``mangle_test_address``: classname is the node id's path
    with ``/`` -> ``.`` and ``.py`` dropped, plus the class names."""
    if not classname:
        # collection errors: classname="" and name is the dotted module path
        if name.endswith(".py") or "/" in name:
            return name
        return name.replace(".", "/") + ".py"
    if file and file.endswith(".py"):
        module = file[:-3].replace("\\", ".").replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            rest = classname[len(module) + 1 :]
            return "::".join([file.replace("\\", "/"), *(rest.split(".") if rest else []), name])
    parts = classname.split(".")
    # the trailing CapWords components are classes (TestC, nested TestC.TestInner);
    # what precedes is the module path. At least one module component remains.
    split = len(parts)
    while split > 1 and parts[split - 1][:1].isupper():
        split -= 1
    module = "/".join(parts[:split]) + ".py"
    return "::".join([module, *parts[split:], name])


def _case_id(case: ET.Element, suite_name: str, flavor: str) -> str:
    name = (case.get("name") or "").strip()
    classname = (case.get("classname") or "").strip()
    if flavor == "pytest":
        return _pytest_id(classname, name, case.get("file"))
    if flavor == "gtest":
        suite = classname or suite_name
        return f"{suite}.{name}" if suite else name
    if flavor == "phpunit":
        cls = (case.get("class") or "").strip() or classname.replace(".", "\\")
        return f"{cls}::{name}" if cls else name
    if flavor == "name":
        return name
    # java
    if name.endswith("()"):
        name = name[:-2]
    return f"{classname}#{name}" if classname else name


@register(
    "junit",
    kind="structured",
    variants=FLAVORS,
    description="JUnit XML (Surefire, Gradle, pytest, PHPUnit, GoogleTest, ctest, Catch2, doctest)",
)
def parse_junit(text: str, ctx: ParseContext) -> None:
    doc = read_xml(text, "junit")
    cases = list(doc.iter("testcase"))
    known_root = any(r.tag in ("testsuites", "testsuite") for r in doc.roots)
    if not known_root and not cases:
        raise ReportParseError(f"junit: not a JUnit report (root element <{doc.roots[0].tag}>)")
    flavor = ctx.variant or "auto"
    if flavor in _NAME_ALIASES:
        flavor = "name"
    if flavor == "auto":
        flavor = detect_flavor(doc)
    ctx.resolved_format = f"junit:{flavor}"

    suite_of = {
        id(child): suite.get("name") or ""
        for suite in doc.iter("testsuite")
        for child in suite
        if child.tag == "testcase"
    }

    incomplete = 0
    for case in cases:
        if not doc.is_complete(case):
            incomplete += 1
            continue
        if not (case.get("name") or "").strip():
            ctx.warn("empty-id", "a <testcase> without a name attribute was dropped")
            continue
        status, message = _status(case)
        ctx.add(
            _case_id(case, suite_of.get(id(case), ""), flavor),
            status,
            duration=(case.get("time") or "").replace(",", "") or None,
            message=message,
        )

    if doc.error is not None or incomplete:
        if ctx.result_count == 0 and not any(doc.is_complete(r) for r in doc.roots):
            raise ReportParseError(
                f"junit: unreadable report ({doc.error or 'unclosed elements'}); no complete testcase"
            )
        ctx.warn(
            "truncated",
            f"report ends early ({doc.error or 'unclosed elements'}); "
            f"kept {ctx.result_count} complete testcases, dropped {incomplete} incomplete",
        )

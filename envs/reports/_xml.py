"""A hardened, truncation-tolerant XML reader for test reports.

Why not ``xml.etree.ElementTree.fromstring``: a report is untrusted (a patch controls
the tests that write it), and it is often cut short (a killed runner, capped output).

- Any DTD is refused: a ``<!DOCTYPE`` (and with it every ``<!ENTITY``) raises
  ReportParseError before an entity can be declared, so neither "billion laughs"
  expansion nor external entities are possible. Test reports never need a DTD.
  This is checked by expat's own doctype event, not by searching the text, so a
  ``<!DOCTYPE html>`` inside a failure message's CDATA is fine.
- The tree is built from expat events, so when the data ends early (or turns into
  garbage) every element closed before that point is intact and marked complete.
- Several documents one after another (``cat surefire-reports/*.xml``) are all read.
- Characters XML forbids (ANSI escapes in captured output) are replaced first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.parsers import expat

from envs.reports.registry import ReportParseError

_INVALID_XML_CHARS = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ERR = expat.errors.codes
_NEXT_DOCUMENT_ERRORS = {
    _ERR[expat.errors.XML_ERROR_JUNK_AFTER_DOC_ELEMENT],
    _ERR[expat.errors.XML_ERROR_MISPLACED_XML_PI],
}
_MAX_DOCUMENTS = 10_000
# Real reports nest a few levels (PHPUnit suites, doctest subcases); a cap keeps every
# per-element walk over descendants linear in the input however it is nested.
MAX_DEPTH = 256


class _Refused(Exception):
    pass


class _TooDeep(Exception):
    pass


@dataclass
class XmlDocument:
    roots: list[ET.Element] = field(default_factory=list)
    complete: set[int] = field(default_factory=set)  # id() of every closed element
    error: str | None = None  # why reading stopped early, if it did

    def is_complete(self, elem: ET.Element) -> bool:
        return id(elem) in self.complete

    def iter(self, *tags: str) -> Iterator[ET.Element]:
        """Elements in document order (iteratively: depth is attacker-controlled)."""
        wanted = set(tags)
        stack = list(reversed(self.roots))
        while stack:
            elem = stack.pop()
            if not wanted or elem.tag in wanted:
                yield elem
            stack.extend(reversed(list(elem)))


def iter_within(elem: ET.Element, *tags: str) -> Iterator[ET.Element]:
    wanted = set(tags)
    stack = list(reversed(list(elem)))
    while stack:
        node = stack.pop()
        if not wanted or node.tag in wanted:
            yield node
        stack.extend(reversed(list(node)))


def read_xml(text: str, what: str) -> XmlDocument:
    doc = XmlDocument()
    data = _INVALID_XML_CHARS.sub("\ufffd", text).encode("utf-8")
    pos = 0
    view = memoryview(data)  # each document is parsed from a zero-copy slice
    for n in range(_MAX_DOCUMENTS + 1):
        if n == _MAX_DOCUMENTS:
            doc.error = f"more than {_MAX_DOCUMENTS} documents; the rest was not read"
            break
        start = data.find(b"<", pos)
        if start < 0:
            break
        pos = start  # text before or between documents (log lines) is skipped
        consumed, error, root_closed = _parse_one(view, pos, doc, what)
        if error is None:
            break
        if root_closed and error[0] in _NEXT_DOCUMENT_ERRORS and consumed > 0:
            pos += consumed
            continue
        doc.error = error[1]
        break
    if not doc.roots:
        raise ReportParseError(f"{what}: not XML" + (f" ({doc.error})" if doc.error else ""))
    return doc


def _parse_one(
    data: memoryview, pos: int, doc: XmlDocument, what: str
) -> tuple[int, tuple[int, str] | None, bool]:
    """Parse one document starting at ``pos``. Returns (bytes consumed before the error,
    (error code, message) or None, whether the root element closed)."""
    parser = expat.ParserCreate(encoding="utf-8")  # we already decoded; ignore the declaration
    parser.buffer_text = True
    stack: list[ET.Element] = []
    root_closed = False

    def start(tag: str, attrs: dict[str, str]) -> None:
        if len(stack) >= MAX_DEPTH:
            raise _TooDeep
        elem = ET.Element(tag, attrs)
        if stack:
            stack[-1].append(elem)
        else:
            doc.roots.append(elem)
        stack.append(elem)

    def end(tag: str) -> None:
        nonlocal root_closed
        elem = stack.pop()
        doc.complete.add(id(elem))
        if not stack:
            root_closed = True

    def chars(text: str) -> None:
        if stack:
            elem = stack[-1]
            elem.text = (elem.text or "") + text

    def refuse(*_args: object) -> None:
        raise _Refused

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    try:
        parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    except AttributeError:  # pragma: no cover - very old pyexpat
        pass
    try:
        parser.Parse(data[pos:], True)
    except _Refused:
        raise ReportParseError(
            f"{what}: the report declares a DTD or entities; refused (reports never need one)"
        ) from None
    except _TooDeep:
        return (
            parser.CurrentByteIndex,
            (-1, f"elements nested deeper than {MAX_DEPTH}"),
            root_closed,
        )
    except expat.ExpatError as exc:
        consumed = parser.ErrorByteIndex if parser.ErrorByteIndex >= 0 else 0
        return (
            consumed,
            (exc.code, f"{expat.errors.messages[exc.code]} at line {exc.lineno}"),
            root_closed,
        )
    return len(data) - pos, None, root_closed

"""ChatML rendering with tools, and tool-call parsing, for the bundled policy.

SmolLM2's own chat template knows no tools, so the server renders conversations itself in
the same ChatML it was trained on: tools are described in the system message, and a tool
call is `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in the assistant's text.

`render_suffix` renders only the messages after the last assistant turn, so a multi-turn
rollout's prompt is the previous prompt ids + the generated ids + the suffix ids: the
generated tokens are never decoded and re-encoded (token in, token out).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

IM_START, IM_END = "<|im_start|>", "<|im_end|>"
DEFAULT_SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)


def tools_preamble(tools: list[dict[str, Any]] | None) -> str:
    """The text that tells the model which functions it may call and how."""
    if not tools:
        return ""
    specs = [t.get("function", t) for t in tools]
    lines = "\n".join(json.dumps({"name": s.get("name"), "description": s.get("description", ""),
                                  "parameters": s.get("parameters", {})}, sort_keys=True)
                      for s in specs)
    return ("\n\nYou may call these functions. To call one, answer with "
            "<tool_call>{\"name\": <name>, \"arguments\": <object>}</tool_call>\n" + lines)


def _content(msg: dict[str, Any]) -> str:
    content = msg.get("content") or ""
    if isinstance(content, list):  # OpenAI content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    text = str(content)
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        args = fn.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass
        text += "<tool_call>" + json.dumps({"name": fn.get("name"), "arguments": args}) \
            + "</tool_call>"
    return text


def _one(msg: dict[str, Any]) -> str:
    return f"{IM_START}{msg.get('role', 'user')}\n{_content(msg)}{IM_END}\n"


def render(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """The whole prompt: system (with the tools), the turns, and the assistant header."""
    msgs = list(messages)
    if not msgs or msgs[0].get("role") != "system":
        msgs.insert(0, {"role": "system", "content": DEFAULT_SYSTEM})
    first = dict(msgs[0])
    first["content"] = _content(first) + tools_preamble(tools)
    return "".join(_one(m) for m in [first, *msgs[1:]]) + f"{IM_START}assistant\n"


def render_suffix(messages: list[dict[str, Any]]) -> str:
    """The text after a generated assistant turn (which ended with <|im_end|>): the
    newline the template puts after it, the new messages, and the assistant header."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return "\n" + "".join(_one(m) for m in messages[last + 1:]) + f"{IM_START}assistant\n"


def parse_tool_calls(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Split generated text into plain content and OpenAI-style tool calls. A call whose
    JSON does not parse is kept as text (the environment then answers `[not an action]`)."""
    calls: list[dict[str, Any]] = []
    for m in _CALL.finditer(text):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            continue
        args = obj.get("arguments", {})
        calls.append({"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                      "function": {"name": obj["name"], "arguments": json.dumps(args)}})
    content = _CALL.sub("", text).strip() if calls else text
    return content, calls


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
    """How the model should write one call (used for SFT targets)."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"

"""ChatML rendering with tools, and tool-call parsing."""

from __future__ import annotations

import json

from policy.chat import parse_tool_calls, render, render_suffix, tool_call_text

TOOLS = [{"type": "function", "function": {"name": "shell", "description": "run a command",
                                           "parameters": {"type": "object"}}}]


def test_render_puts_tools_in_the_system_message_and_ends_with_the_assistant_header():
    text = render([{"role": "user", "content": "hi"}], TOOLS)
    assert text.startswith("<|im_start|>system\nYou are a helpful AI assistant")
    assert '"name": "shell"' in text and "<tool_call>" in text
    assert text.endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")


def test_suffix_renders_only_what_follows_the_last_assistant_turn():
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
            {"role": "tool", "tool_call_id": "c1", "content": "out"}]
    assert render_suffix(msgs) == ("\n<|im_start|>tool\nout<|im_end|>\n"
                                   "<|im_start|>assistant\n")


def test_tool_calls_parse_and_bad_json_stays_text():
    content, calls = parse_tool_calls("ok " + tool_call_text("shell", {"command": "ls"}))
    assert content == "ok" and calls[0]["function"]["name"] == "shell"
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "ls"}
    text = "<tool_call>{not json</tool_call>"
    assert parse_tool_calls(text) == (text, [])

"""Actions from whatever a model writes: models, dicts, JSON, shell text, tool calls; a
one-line ActionError for anything else; the same actions as function tools."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from envs.actions import (
    ActionError,
    ApplyPatch,
    Observation,
    ReadFile,
    Shell,
    Submit,
    WriteFile,
    parse_action,
    tool_call_id,
    tools,
)


def call(name: str, arguments, ident: str = "call_1") -> dict:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_the_plain_forms():
    assert parse_action("ls -la") == Shell(command="ls -la")
    assert parse_action('{"type": "read_file", "path": "a.py"}') == ReadFile(path="a.py")
    assert parse_action({"type": "submit"}) == Submit()
    assert parse_action(Submit()) == Submit()


def test_shell_that_starts_with_a_brace_is_shell():
    assert parse_action("{ echo a; echo b; } > out.txt") == \
        Shell(command="{ echo a; echo b; } > out.txt")


@pytest.mark.parametrize("bad, says", [
    ({"type": "read_file"}, "read_file: path: Field required"),
    ({"type": "fly"}, "unknown action type 'fly'; known: shell, read_file"),
    ({"path": "x"}, "unknown action type None"),
    (["ls"], "not list"),
    (42, "not int"),
    ({"type": "shell", "command": "ls", "sudo": True}, "sudo: Extra inputs"),
])
def test_anything_else_is_one_line_action_error(bad, says):
    with pytest.raises(ActionError) as info:
        parse_action(bad)
    assert says in str(info.value) and "\n" not in str(info.value)


def test_tool_calls_as_dicts_json_and_sdk_objects():
    assert parse_action(call("read_file", '{"path": "a.py"}')) == ReadFile(path="a.py")
    assert parse_action(call("write_file", {"path": "p", "content": "c"})) == \
        WriteFile(path="p", content="c")
    assert parse_action(json.dumps(call("submit", ""))) == Submit()
    sdk = SimpleNamespace(id="call_9", type="function",
                          function=SimpleNamespace(name="apply_patch", arguments='{"patch": "d"}'))
    assert parse_action(sdk) == ApplyPatch(patch="d") and tool_call_id(sdk) == "call_9"
    assert tool_call_id(call("shell", "{}", "abc")) == "abc"
    assert tool_call_id("ls") is None and tool_call_id({"type": "submit"}) is None


@pytest.mark.parametrize("bad, says", [
    (call("rm_rf", "{}"), "unknown tool 'rm_rf'; known: shell, read_file, write_file"),
    (call("shell", '{"command": "ls"'), "shell: arguments are not JSON"),
    (call("shell", "[1]"), "shell: arguments must be a JSON object"),
    (call("shell", "{}"), "shell: command: Field required"),
])
def test_bad_tool_calls_are_action_errors(bad, says):
    with pytest.raises(ActionError) as info:
        parse_action(bad)
    assert says in str(info.value)


def test_tools_are_function_tools_made_from_the_models():
    by_name = {t["function"]["name"]: t["function"] for t in tools()}
    assert list(by_name) == ["shell", "read_file", "write_file", "apply_patch", "submit"]
    assert all(t["type"] == "function" for t in tools())
    shell = by_name["shell"]["parameters"]
    assert shell["required"] == ["command"] and shell["additionalProperties"] is False
    assert set(shell["properties"]) == {"command", "timeout"}  # the discriminator stays out
    assert shell["properties"]["timeout"]["type"] == "number"
    assert by_name["write_file"]["parameters"]["required"] == ["path", "content"]
    assert by_name["submit"]["parameters"]["properties"] == {}
    assert "bash" in by_name["shell"]["description"]
    json.dumps(tools())  # what a chat API is sent


def test_a_tool_call_is_answered_by_a_tool_message():
    obs = Observation.result("hello", "call_1")
    assert obs.messages == [{"role": "tool", "tool_call_id": "call_1", "content": "hello"}]
    assert Observation.result("hi").messages == [{"role": "user", "content": "hi"}]

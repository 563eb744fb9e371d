"""What an agent can do in an episode, and what it sees back.

Actions come as pydantic models, dicts, JSON strings, plain shell text, or OpenAI-style tool
calls (`{"id", "function": {"name", "arguments"}}`); `tools()` gives the same actions as
function tools for a chat model. Whatever the model wrote, `read_step` answers with an
action or a one-line `ActionError`: one bad generation is the agent's mistake, never an
exception that takes a batch down.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

SYSTEM_PROMPT = ("You are working in a Linux sandbox. Act with the actions shell, read_file, "
                 "write_file, apply_patch; send submit when you are done.")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Shell(_Frozen):
    """Run a bash command in the repository's directory; returns its output and exit code."""

    type: Literal["shell"] = "shell"
    command: str = Field(description="the bash command line")
    timeout: float | None = Field(default=None, description="seconds; default: the step limit")


class ReadFile(_Frozen):
    """Read a file (up to 1 MiB)."""

    type: Literal["read_file"] = "read_file"
    path: str = Field(description="absolute, or relative to the working directory")


class WriteFile(_Frozen):
    """Write a whole file, creating its directories."""

    type: Literal["write_file"] = "write_file"
    path: str = Field(description="absolute, or relative to the working directory")
    content: str = Field(description="the file's new content")


class ApplyPatch(_Frozen):
    """Apply a unified diff (as `git diff` prints it) to the working tree."""

    type: Literal["apply_patch"] = "apply_patch"
    patch: str = Field(description="the unified diff")


class Submit(_Frozen):
    """Say the work is done; the episode ends and is graded."""

    type: Literal["submit"] = "submit"


ACTIONS: tuple[type[_Frozen], ...] = (Shell, ReadFile, WriteFile, ApplyPatch, Submit)
Action = Annotated[Union[Shell, ReadFile, WriteFile, ApplyPatch, Submit],
                   Field(discriminator="type")]
AnyAction = Union[Shell, ReadFile, WriteFile, ApplyPatch, Submit]
_ACTION = TypeAdapter(Action)
_BY_NAME = {m.model_fields["type"].default: m for m in ACTIONS}


class ActionError(ValueError):
    """The model's output is not an action; the message is one line for the agent to read."""


def _one_line(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors()[:3]:
        where = ".".join(str(p) for p in e["loc"] if p not in _BY_NAME) or "action"
        parts.append(f"{where}: {e['msg']}")
    return "; ".join(parts)


def parse_action(action: Any) -> AnyAction:
    """An action from a model, a dict, a JSON object string, plain text (a shell command) or a
    tool call. Raises ActionError (one line) when it is none of these."""
    if isinstance(action, ACTIONS):
        return action  # type: ignore[return-value]
    if isinstance(action, str):
        text = action.strip()
        if not text.startswith("{"):
            return Shell(command=action)
        try:
            action = json.loads(text)
        except json.JSONDecodeError:
            return Shell(command=action)  # `{ a; b; } > f` is shell, not broken JSON
        if not isinstance(action, dict):
            raise ActionError("expected a JSON object")
    if _is_tool_call(action):
        return _from_tool_call(action)
    if not isinstance(action, dict):
        raise ActionError(f"an action is a dict, a JSON object or text, not "
                          f"{type(action).__name__}")
    kind = action.get("type")
    if kind not in _BY_NAME:
        raise ActionError(f"unknown action type {kind!r}; known: {', '.join(_BY_NAME)}")
    try:
        return _ACTION.validate_python(action)
    except ValidationError as exc:
        raise ActionError(f"{kind}: {_one_line(exc)}") from None


# --------------------------------------------------------------------------- tool calls


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _is_tool_call(obj: Any) -> bool:
    fn = _get(obj, "function")
    return fn is not None and _get(fn, "name") is not None


def tool_call_id(action: Any) -> str | None:
    """The id of a tool call (dict or SDK object), or None for any other action."""
    if not _is_tool_call(action):
        return None
    ident = _get(action, "id")
    return str(ident) if ident is not None else None


def _from_tool_call(call: Any) -> AnyAction:
    fn = _get(call, "function")
    name = str(_get(fn, "name"))
    model = _BY_NAME.get(name)
    if model is None:
        raise ActionError(f"unknown tool {name!r}; known: {', '.join(_BY_NAME)}")
    raw = _get(fn, "arguments")
    if raw is None or raw == "":
        args: Any = {}
    elif isinstance(raw, str):
        try:
            args = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ActionError(f"{name}: arguments are not JSON ({exc.msg} at column "
                              f"{exc.colno})") from None
    else:
        args = raw
    if not isinstance(args, dict):
        raise ActionError(f"{name}: arguments must be a JSON object")
    try:
        return model.model_validate({**args, "type": name})  # type: ignore[return-value]
    except ValidationError as exc:
        raise ActionError(f"{name}: {_one_line(exc)}") from None


def tools() -> list[dict[str, Any]]:
    """The actions as OpenAI-style function tools, made from the models themselves."""
    out = []
    for model in ACTIONS:
        schema = model.model_json_schema()
        props = {k: {kk: vv for kk, vv in v.items() if kk not in ("title", "default")}
                 for k, v in schema.get("properties", {}).items() if k != "type"}
        for prop in props.values():  # `float | None` reads better as a plain number
            if "anyOf" in prop:
                kinds = [a for a in prop.pop("anyOf") if a.get("type") != "null"]
                prop.update(kinds[0] if len(kinds) == 1 else {"anyOf": kinds})
        out.append({"type": "function", "function": {
            "name": model.model_fields["type"].default,
            "description": (model.__doc__ or "").strip(),
            "parameters": {"type": "object", "properties": props,
                           "required": [k for k in schema.get("required", []) if k != "type"],
                           "additionalProperties": False}}})
    return out


# --------------------------------------------------------------------------- observations


class Observation(_Frozen):
    """What the agent sees: plain text, and the same as chat messages to append."""

    text: str
    messages: list[dict[str, str]]

    @classmethod
    def prompt(cls, text: str) -> Observation:
        return cls(text=text, messages=[{"role": "system", "content": SYSTEM_PROMPT},
                                        {"role": "user", "content": text}])

    @classmethod
    def result(cls, text: str, call_id: str | None = None) -> Observation:
        """A step's answer: a tool message for a tool call, a user message otherwise."""
        if call_id is not None:
            return cls(text=text, messages=[{"role": "tool", "tool_call_id": call_id,
                                             "content": text}])
        return cls(text=text, messages=[{"role": "user", "content": text}])

"""Validates request bodies arena sends against the official SDKs' own request types.

Usage: python3 tests/sdk/validate.py FORMAT BODY.json [BODY.json ...]

FORMAT is one of openai_chat, openai_responses, anthropic, gemini. Each body is checked
against the SDK's request type (chat: CompletionCreateParams{NonStreaming,Streaming};
Responses: ResponseCreateParams{NonStreaming,Streaming}; Anthropic:
MessageCreateParams{NonStreaming,Streaming}; Gemini: google-genai's Content, Tool and
GenerationConfig in their REST (camelCase) spelling). A key the type does not declare is an
error, as is a value of the wrong type or a missing required key. Prints one line per problem
and exits 1 when there is any; 2 when an SDK is missing.

The OpenAI and Anthropic request types are TypedDicts, which pydantic would accept with extra
keys; they are walked here by their annotations instead, strictly.
"""

from __future__ import annotations

import collections.abc
import json
import sys
import types
import typing

try:
    import typing_extensions
except ImportError:  # pragma: no cover
    typing_extensions = typing


class Invalid(Exception):
    pass


def _is_typeddict(tp) -> bool:
    return isinstance(tp, type) and (
        typing.is_typeddict(tp) or typing_extensions.is_typeddict(tp)
    )


def _hints(td):
    return typing_extensions.get_type_hints(td, include_extras=True)


def _required_keys(td, hints) -> set:
    """The keys `td` requires. `__required_keys__` cannot be trusted under
    `from __future__ import annotations` (the SDKs' modules use it), so they are read from the
    annotations: `Required[...]` is required, `NotRequired[...]` is not, and any other key is
    required when the TypedDict that declares it is total."""
    required = set()
    for key, hint in hints.items():
        origin = typing_extensions.get_origin(hint)
        if origin is typing_extensions.Required:
            required.add(key)
        elif origin is typing_extensions.NotRequired:
            continue
        elif getattr(_declaring(td, key), "__total__", True):
            required.add(key)
    return required


def _declaring(td, key):
    """The TypedDict among `td` and its bases that declares `key` first."""
    for base in getattr(td, "__orig_bases__", ()):
        if _is_typeddict(base) and key in getattr(base, "__annotations__", {}):
            return _declaring(base, key)
    return td


def _strip(tp):
    """Drops Required/NotRequired/Annotated wrappers."""
    while True:
        origin = typing_extensions.get_origin(tp)
        if origin in (typing_extensions.Required, typing_extensions.NotRequired, typing.Annotated,
                      getattr(typing_extensions, "Annotated", None), getattr(typing_extensions, "ReadOnly", None)):
            tp = typing_extensions.get_args(tp)[0]
            continue
        return tp


def check(value, tp, path: str) -> None:
    """Raises Invalid when `value` (parsed JSON) is not of type `tp`."""
    tp = _strip(tp)
    if tp is typing.Any or tp is object:
        return
    if isinstance(tp, typing.TypeVar):
        return
    if isinstance(tp, typing_extensions.TypeAliasType if hasattr(typing_extensions, "TypeAliasType") else ()):
        return check(value, tp.__value__, path)
    if tp is type(None) or tp is None:
        if value is not None:
            raise Invalid(f"{path}: expected null, got {type(value).__name__}")
        return
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        errors = []
        for arm in args:
            try:
                check(value, arm, path)
                return
            except Invalid as e:
                errors.append(str(e))
                # The arm whose `type` matches the value's says what is wrong.
                if isinstance(value, dict) and _is_typeddict(_strip(arm)):
                    hint = _hints(_strip(arm)).get("type")
                    if hint is not None and value.get("type") in typing_extensions.get_args(_strip(hint)):
                        raise
        # The most specific error (the longest path) says best what went wrong.
        raise Invalid(max(errors, key=lambda e: e.split(":")[0].count(".") + e.split(":")[0].count("[")))
    if origin in (typing.Literal, typing_extensions.Literal):
        if value not in args or type(value) is not type(args[args.index(value)] if value in args else value):
            raise Invalid(f"{path}: {value!r} is not one of {list(args)}")
        return
    if _is_typeddict(tp):
        if not isinstance(value, dict):
            raise Invalid(f"{path}: expected an object ({tp.__name__}), got {type(value).__name__}")
        hints = _hints(tp)
        required = _required_keys(tp, hints)
        for key in value:
            if key not in hints:
                raise Invalid(f"{path}.{key}: unknown key (not in {tp.__name__})")
        for key in required:
            if key not in value:
                raise Invalid(f"{path}.{key}: required by {tp.__name__}, missing")
        for key, item in value.items():
            check(item, hints[key], f"{path}.{key}")
        return
    if origin in (dict, collections.abc.Mapping, typing.Dict) or tp in (dict, typing.Dict):
        if not isinstance(value, dict):
            raise Invalid(f"{path}: expected an object, got {type(value).__name__}")
        if args:
            for key, item in value.items():
                check(item, args[1], f"{path}.{key}")
        return
    if origin in (list, tuple, collections.abc.Iterable, collections.abc.Sequence, typing.List) or (
        origin is not None and getattr(origin, "__name__", "") in ("SequenceNotStr",)
    ) or getattr(tp, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            raise Invalid(f"{path}: expected an array, got {type(value).__name__}")
        for i, item in enumerate(value):
            check(item, args[0] if args else typing.Any, f"{path}[{i}]")
        return
    if tp is str:
        if not isinstance(value, str):
            raise Invalid(f"{path}: expected a string, got {type(value).__name__}")
        return
    if tp is bool:
        if not isinstance(value, bool):
            raise Invalid(f"{path}: expected a boolean, got {type(value).__name__}")
        return
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(f"{path}: expected an integer, got {value!r}")
        return
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise Invalid(f"{path}: expected a number, got {value!r}")
        return
    if isinstance(tp, type) and issubclass(tp, (bytes, )):
        raise Invalid(f"{path}: bytes cannot come from JSON")
    # Anything else (file handles, PathLike, ...) cannot come from JSON.
    raise Invalid(f"{path}: cannot check against {tp!r}")


def _one_of(body, candidates, path="$"):
    errors = []
    for tp in candidates:
        try:
            check(body, tp, path)
            return
        except Invalid as e:
            errors.append(str(e))
    raise Invalid(" | ".join(errors))


def validate_openai_chat(body):
    from openai.types.chat import completion_create_params as p
    tp = p.CompletionCreateParamsStreaming if body.get("stream") else p.CompletionCreateParamsNonStreaming
    check(body, tp, "$")


def validate_openai_responses(body):
    from openai.types.responses import response_create_params as p
    tp = p.ResponseCreateParamsStreaming if body.get("stream") else p.ResponseCreateParamsNonStreaming
    check(body, tp, "$")


def validate_anthropic(body):
    from anthropic.types import message_create_params as p
    tp = p.MessageCreateParamsStreaming if body.get("stream") else p.MessageCreateParamsNonStreaming
    check(body, tp, "$")


def _genai_strict(model_cls, value, path):
    """Validates `value` as google-genai's `model_cls` (its models forbid unknown keys) and
    requires the REST spelling: dumping it back by alias must give the same JSON."""
    import pydantic
    try:
        model = model_cls.model_validate(value)
    except pydantic.ValidationError as e:
        raise Invalid(f"{path}: {model_cls.__name__}: {e}")
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    if dumped != value:
        raise Invalid(
            f"{path}: not {model_cls.__name__}'s REST spelling: sent {json.dumps(value)[:400]}, "
            f"the SDK writes {json.dumps(dumped)[:400]}"
        )


def validate_gemini(body):
    from google.genai import types as t
    if not isinstance(body, dict):
        raise Invalid("$: expected an object")
    # The REST GenerateContentRequest's fields arena may send (the SDK's GenerateContentConfig
    # splits these out of its config when it writes the request).
    known = {"contents", "systemInstruction", "tools", "toolConfig", "generationConfig",
             "safetySettings", "cachedContent", "labels"}
    for key in body:
        if key not in known:
            raise Invalid(f"$.{key}: unknown key (not in GenerateContentRequest)")
    if "contents" not in body:
        raise Invalid("$.contents: required, missing")
    for i, c in enumerate(body["contents"]):
        _genai_strict(t.Content, c, f"$.contents[{i}]")
    if "systemInstruction" in body:
        _genai_strict(t.Content, body["systemInstruction"], "$.systemInstruction")
    for i, tool in enumerate(body.get("tools", [])):
        _genai_strict(t.Tool, tool, f"$.tools[{i}]")
    if "toolConfig" in body:
        _genai_strict(t.ToolConfig, body["toolConfig"], "$.toolConfig")
    if "generationConfig" in body:
        _genai_strict(t.GenerationConfig, body["generationConfig"], "$.generationConfig")
    for i, s in enumerate(body.get("safetySettings", [])):
        _genai_strict(t.SafetySetting, s, f"$.safetySettings[{i}]")


VALIDATORS = {
    "openai_chat": validate_openai_chat,
    "openai_responses": validate_openai_responses,
    "anthropic": validate_anthropic,
    "gemini": validate_gemini,
}


def main(argv):
    if len(argv) < 3 or argv[1] not in VALIDATORS:
        print(__doc__, file=sys.stderr)
        return 64
    try:
        import openai, anthropic, google.genai  # noqa: F401
    except ImportError as e:
        print(f"missing SDK: {e}", file=sys.stderr)
        return 2
    failed = False
    for name in argv[2:]:
        with open(name) as f:
            body = json.load(f)
        try:
            VALIDATORS[argv[1]](body)
            print(f"ok {name}")
        except Invalid as e:
            failed = True
            print(f"INVALID {name}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

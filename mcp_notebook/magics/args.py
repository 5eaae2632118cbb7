"""Tool and prompt arguments from a magic line: ``key=value`` words, ``--json``, or a cell body.

Values are typed against the tool's ``input_schema`` so that what the user sees is what the
server gets: a string parameter keeps ``012`` as the string "012", integers, numbers and booleans
parse, arrays and objects read as JSON. Anything wrong becomes a ``UsageError`` that lists the
tool's parameters, before anything is sent. A prompt's arguments are text; they are checked against
the names it declares (``check_prompt_arguments``), also before anything is sent.
"""

from __future__ import annotations

import json
import math
from typing import Any

from IPython.core.error import UsageError

from ..core.json_value import NotFinite, check_finite, read_json
from ..core.text import Flag, mcp_line, spell_out
from ..forms.model import FALSE_WORDS, TRUE_WORDS, compiled_validator, parse_answer_value

__all__ = [
    "build_arguments",
    "check_prompt_arguments",
    "describe_parameters",
    "parse_body",
    "parse_json_object",
    "parse_pairs",
]


def parse_pairs(words: list[str]) -> dict[str, str]:
    """``["a=1", "b=x y"]`` -> ``{"a": "1", "b": "x y"}`` (values still raw text)."""
    pairs: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise UsageError(f"expected key=value, got {word!r}")
        pairs[key] = value
    return pairs


def parse_json_object(text: str, what: str = "--json") -> dict[str, Any]:
    try:
        value = read_json(text)
    except NotFinite as exc:
        raise UsageError(f"{what}: {exc}") from None
    except ValueError as exc:
        raise UsageError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def parse_body(body: str) -> dict[str, Any]:
    """A ``%%mcp call`` cell body: a JSON object, or YAML when PyYAML is installed."""
    if not body.strip():
        return {}
    try:
        value = read_json(body)
    except NotFinite as exc:
        raise UsageError(f"the cell body: {exc}") from None
    except ValueError as json_error:
        try:
            import yaml
        except ImportError:
            raise UsageError(f"the cell body is not valid JSON: {json_error}") from None
        try:
            value = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            raise UsageError(f"the cell body is neither JSON nor YAML: {exc}") from None
        try:
            check_finite(value)  # YAML's .nan and .inf, which JSON cannot carry
        except NotFinite as exc:
            raise UsageError(f"the cell body: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"the cell body must be an object of arguments, got {type(value).__name__}")
    return value


def _types_of(prop: dict[str, Any]) -> list[str]:
    typ = prop.get("type")
    if isinstance(typ, list):
        return [t for t in typ if isinstance(t, str)]
    if isinstance(typ, str):
        return [typ]
    types: list[str] = []
    for alt in prop.get("anyOf", []) + prop.get("oneOf", []):
        if isinstance(alt, dict):
            types.extend(_types_of(alt))
    return types


def convert(name: str, raw: str, prop: dict[str, Any]) -> Any:
    """One ``key=value`` text converted to the parameter's type."""
    types = _types_of(prop)
    if not types or types == ["null"]:
        return _untyped(name, raw)
    if "string" in types and ("enum" in prop or len(types) == 1 or not _looks_like_json_of(raw, types)):
        return raw
    # The value reads as JSON of another member of the union: that member first, whatever the
    # order the schema lists them in ("5" for string|integer is 5, "null" for string|null is None).
    refused: NotFinite | None = None
    for typ in sorted(types, key=lambda t: t == "string"):
        try:
            return _convert_to(typ, raw)
        except NotFinite as exc:
            refused = exc
        except ValueError:
            continue
    if refused is not None:
        raise UsageError(f"argument {name}={raw!r}: {refused}")
    wanted = " or ".join(types)
    raise UsageError(f"argument {name}={raw!r}: expected {wanted}")


def _untyped(name: str, raw: str) -> Any:
    """A ``key=value`` with no type to go by: JSON when it reads as JSON, else the text; never NaN or Infinity."""
    try:
        return parse_answer_value(raw)
    except NotFinite as exc:
        raise UsageError(f"argument {name}={raw!r}: {exc}") from None


def _looks_like_json_of(raw: str, types: list[str]) -> bool:
    try:
        value = json.loads(raw)
    except ValueError:
        return False
    names = {bool: "boolean", int: "integer", float: "number", list: "array", dict: "object", type(None): "null"}
    kind = names.get(type(value), "string")
    return kind in types or (kind == "integer" and "number" in types)


def _convert_to(typ: str, raw: str) -> Any:
    text = raw.strip()
    if typ == "string":
        return raw
    if typ == "integer":
        return int(text)
    if typ == "number":
        number = float(text)
        if not math.isfinite(number):  # JSON has no NaN or Infinity: the SDK would send null
            raise NotFinite(text)
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if typ == "boolean":
        if text.lower() in TRUE_WORDS:
            return True
        if text.lower() in FALSE_WORDS:
            return False
        raise ValueError(text)
    if typ == "null":
        if text in ("null", "none", "None", ""):
            return None
        raise ValueError(text)
    value = read_json(text)
    if typ == "array" and isinstance(value, list):
        return value
    if typ == "object" and isinstance(value, dict):
        return value
    raise ValueError(text)


def describe_parameters(schema: dict[str, Any] | None) -> str:
    """``name: string (required), count: integer`` for error messages and tables."""
    props = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or [])
    if not props:
        return "(no parameters)"
    parts = []
    for name, prop in props.items():
        types = "|".join(_types_of(prop if isinstance(prop, dict) else {})) or "any"
        parts.append(f"{name}: {types}{' (required)' if name in required else ''}")
    return ", ".join(parts)


def build_arguments(
    tool_name: str,
    schema: dict[str, Any] | None,
    pairs: dict[str, str],
    json_args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Typed, validated arguments for a call; ``UsageError`` names the problem and the parameters."""
    schema = schema or {"type": "object", "properties": {}}
    props: dict[str, Any] = schema.get("properties") or {}
    closed = schema.get("additionalProperties") is not True
    arguments = dict(json_args or {})
    required = set(schema.get("required") or [])
    for key, raw in pairs.items():
        if key not in props:
            if closed:
                raise UsageError(f"{tool_name} has no parameter {key!r}. Parameters: {describe_parameters(schema)}")
            arguments[key] = _untyped(key, raw)
            continue
        prop = props[key] if isinstance(props[key], dict) else {}
        if raw.strip() == "null" and key not in required and _mirrored(prop):
            arguments[key] = None  # key=null of an optional header argument: sent as null, its header left out
            continue
        arguments[key] = convert(key, raw, prop)
    unknown = [k for k in arguments if k not in props]
    if unknown and closed and props:
        raise UsageError(f"{tool_name} has no parameter {unknown[0]!r}. Parameters: {describe_parameters(schema)}")
    missing = [name for name in schema.get("required") or [] if name not in arguments]
    if missing:
        raise UsageError(f"{tool_name} needs {', '.join(missing)}. Parameters: {describe_parameters(schema)}")
    # An explicit null of an optional argument whose schema does not allow null is still sent where the
    # tool mirrors it into a header (SEP-2243: the header is then left out, which is how a client says
    # "none"); the schema check judges the other arguments. Anywhere else a null is the schema's to allow.
    nulls = {
        k
        for k, v in arguments.items()
        if v is None and k not in required and isinstance(props.get(k), dict) and _mirrored(props[k])
    }
    _validate(tool_name, schema, {k: v for k, v in arguments.items() if k not in nulls})
    return arguments


def _mirrored(prop: dict[str, Any]) -> bool:
    """Whether the tool mirrors this argument into an HTTP header (``x-mcp-header``, SEP-2243)."""
    return isinstance(prop.get("x-mcp-header"), str)


def _validate(tool_name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    import jsonschema

    try:
        validator = compiled_validator(schema)
        if validator.is_valid(arguments):
            return
        error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    except Exception:  # noqa: BLE001 - SchemaError, re.error, TypeError, unresolvable $ref, ...
        return  # a broken schema is the server's own business; let the server judge the arguments
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "arguments"
        raise UsageError(f"{tool_name}: {where}: {error.message}. Parameters: {describe_parameters(schema)}")


def check_prompt_arguments(label: str, declared: list[Any] | None, arguments: dict[str, Any]) -> None:
    """Refuse a prompt's line that lacks a required argument or names one the prompt does not declare.

    As a tool call's arguments are checked against its ``inputSchema``, so a prompt's are against its
    listed ``arguments`` (each a ``name`` and whether it is ``required``), before anything is sent: a
    server answers a missing one with an internal error (-32603) that does not say what was missing.
    ``declared`` is ``None`` when the server lists no such prompt (or no prompts): it judges then.
    The argument names are the server's: spelled out in the text, encoded by ``mcp_line`` in the line.
    """
    if declared is None:
        return
    names = [a.name for a in declared]
    described = (
        ", ".join(f"{spell_out(a.name)}{' (required)' if a.required else ''}" for a in declared) or "(no arguments)"
    )
    unknown = [k for k in arguments if k not in names]
    if unknown:
        raise UsageError(f"{label} has no argument {spell_out(unknown[0])!r}. Arguments: {described}")
    missing = [a.name for a in declared if a.required and a.name not in arguments]
    if not missing:
        return
    plain = [n for n in missing if "=" not in n and not n.startswith("-")]  # NAME=VALUE reads back as NAME
    others = {n: "VALUE" for n in missing if n not in plain}
    words = [f"{n}=VALUE" for n in plain] + ([Flag("--json"), json.dumps(others, ensure_ascii=False)] if others else [])
    given = ", with the arguments you gave" if arguments else ""
    raise UsageError(
        f"{label} needs {', '.join(spell_out(n) for n in missing)}; nothing was sent. Arguments: {described}. "
        f"Run {mcp_line('%mcp', 'prompt', label, *words)}{given}"
    )

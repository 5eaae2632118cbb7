"""The elicitation form as data: schema -> fields, preset answers, typing and validation.

One model serves the ipywidgets form (``forms.widgets``) and headless runs alike, so a person filling
the form and ``--answer``/``--answers``/``--accept-defaults`` produce identical content for
identical values. No widgets here.

MCP's elicitation schema is deliberately small: a flat object whose properties are strings
(``minLength``/``maxLength``, ``format`` email/uri/date/date-time), integers and numbers
(``minimum``/``maximum``), booleans, single-selects (plain ``enum``, titled ``oneOf`` of
``const``/``title``, legacy ``enum`` + ``enumNames``) and multi-selects (``items.enum`` or
``items.anyOf``, ``minItems``/``maxItems``), each with an optional ``default``. Anything outside
that subset (nested objects, ``$ref``, unknown types, free lists) is marked unsupported with the
reason, and the UI falls back to a JSON editor validated against the same schema.

Size limits (``limits.Limits``, the ``max_schema_depth`` and ``max_form_fields`` settings) are
checked first, by counting, before anything walks the schema recursively or builds a widget: a
form with more fields (or values) than the limit also falls back to the JSON editor, and a
schema nested deeper than the limit is never compiled by ``jsonschema`` (its answer cannot be
checked, so it can only be declined), so a hostile schema costs no more than the limits.

What an untouched form sends (and so what a headless run sends): the preset answer, else the
schema's default, else nothing, except an optional checkbox, which shows and sends ``false``.
A required field with nothing to send is an error naming it (headless) or an inline "required"
(interactive).

Why this module is long: the whole elicitation schema subset, as data (every field kind, its
typing from preset text, its ``jsonschema`` check), so that widgets and headless answers share one
definition; a new field kind touches this module and ``widgets.py`` only.
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlparse

from ..core.json_value import NotFinite, read_json
from ..core.limits import Limits, schema_size
from ..core.text import Flag, mcp_line

__all__ = [
    "FALSE_WORDS",
    "TRUE_WORDS",
    "Answers",
    "FieldSpec",
    "FormModel",
    "MissingAnswer",
    "Question",
    "answer_words",
    "compiled_validator",
    "parse_answer_value",
    "wire_problem",
]

Kind = Literal["text", "integer", "number", "boolean", "choice", "multi"]
CHECKBOX_LIMIT = 12  # a multi-select with more choices than this is one list widget, not one tick box each
VALUES_PER_FIELD = 100  # a form's schema may hold this many JSON values per allowed field (choices, titles...)
FORMATS = {"email", "uri", "date", "date-time"}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "on"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "off"})
"""What a person may type for a boolean (lower-cased), in a form field or a ``key=value`` word."""


class MissingAnswer(ValueError):
    """A required field has neither an answer nor a default (headless)."""

    def __init__(self, field: FieldSpec, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class Answers:
    """Preset answers for a flow: ``--answer``, ``--answers``, ``--accept-defaults``, ``--decline``, ``--cancel``.

    Headless runs answer from them alone. Interactive runs send them without waiting when they
    answer every question of a round validly (``--confirm`` shows the form instead); otherwise
    they prefill the form.

    ``decline`` names the questions a headless run declines: NAME matches an elicitation whose form
    has a field NAME, or whose input-request key is NAME (2026-07-28). ``cancel`` cancels every one.
    """

    fields: dict[str, Any] = field(default_factory=dict)
    accept_defaults: bool = False
    decline: list[str] = field(default_factory=list)  # --decline NAME (repeatable)
    cancel: bool = False  # --cancel
    confirm: bool = False  # --confirm: an interactive run shows the form even when these presets answer it
    raw: dict[str, str] = field(default_factory=dict)  # FIELD -> VALUE as typed in ``--answer``, for text fields

    def __bool__(self) -> bool:
        return bool(self.fields) or self.accept_defaults or bool(self.decline) or self.cancel

    def refusal(self, key: str, field_names: list[str]) -> Literal["cancel", "decline"] | None:
        """``"cancel"`` or ``"decline"`` when the presets refuse the question ``key`` (fields ``field_names``), else ``None``."""
        if self.cancel:
            return "cancel"
        if any(name == key or name in field_names for name in self.decline):
            return "decline"
        return None


def answer_words(field: str) -> list[str]:
    """The words of a line that answer ``field`` with a placeholder, for ``mcp_line`` to encode.

    ``--answer FIELD=VALUE`` splits at the first ``=``, so a server's field name holding one would
    answer another field, and one starting with ``-`` would read as a flag of its own: such a name
    is answered with ``--answers {"FIELD": "VALUE"}`` instead.
    """
    if "=" in field or field.startswith("-"):
        return [Flag("--answers"), json.dumps({field: "VALUE"}, ensure_ascii=False)]
    return [Flag("--answer"), f"{field}=VALUE"]


def parse_answer_value(text: str) -> Any:
    """VALUE of ``--answer FIELD=VALUE`` (or of a ``key=value`` argument with no type to go by):
    JSON when it parses, else the plain string. ``NaN``, ``Infinity`` (and ``1e999``) raise
    ``NotFinite``: JSON has no such number, and sent they would reach the server as ``null``."""
    try:
        return read_json(text)
    except NotFinite:
        raise
    except ValueError:
        return text


@dataclass
class FieldSpec:
    """One form field, with everything the widget and the validator need."""

    name: str
    kind: Kind
    title: str
    description: str = ""
    required: bool = False
    default: Any = None
    has_default: bool = False
    options: list[tuple[Any, str]] = field(default_factory=list)  # (value, label)
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None

    def coerce(self, value: Any) -> Any:
        """Bring a preset or widget value to the schema's type; ``ValueError`` when impossible."""
        if value is None:
            return None
        if self.kind == "text" or self.kind == "choice":
            if isinstance(value, (datetime, date)):
                return value.isoformat()
            if isinstance(value, bool):
                value = "true" if value else "false"
            text = value if isinstance(value, str) else json.dumps(value)
            if self.kind == "choice":
                return self._option_value(text)
            return text
        if self.kind == "boolean":
            if isinstance(value, bool):
                return value
            lowered = str(value).strip().lower()
            if lowered in TRUE_WORDS:
                return True
            if lowered in FALSE_WORDS:
                return False
            raise ValueError(f"expected true or false, got {value!r}")
        if self.kind == "integer":
            if isinstance(value, bool):
                raise ValueError(f"expected a whole number, got {value!r}")
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, int):
                return value
            text = str(value).strip()
            try:
                return int(text)
            except ValueError:
                pass
            try:  # "36.0" or "1e3" typed by a person: still a whole number
                number = float(text)
            except ValueError:
                raise ValueError(f"expected a whole number, got {value!r}") from None
            if not math.isfinite(number):
                raise NotFinite(text)
            if number.is_integer():
                return int(number)
            raise ValueError(f"expected a whole number, got {value!r}")
        if self.kind == "number":
            if isinstance(value, bool):
                raise ValueError(f"expected a number, got {value!r}")
            if isinstance(value, float) and not math.isfinite(value):
                raise NotFinite(str(value))
            if isinstance(value, (int, float)):
                return value
            text = str(value).strip()
            try:
                return int(text)
            except ValueError:
                pass
            try:
                number = float(text)
            except ValueError:
                raise ValueError(f"expected a number, got {value!r}") from None
            if not math.isfinite(number):  # NaN, Infinity: JSON has none, the server would get null
                raise NotFinite(text)
            return number
        # multi-select
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()] if value.strip() else []
        if not isinstance(value, (list, tuple)):
            value = [value]
        return [self._option_value(str(v)) for v in value]

    def _option_value(self, text: str) -> Any:
        """Accept an option's value or its label (people type what they see)."""
        for value, _label in self.options:
            if text == value:
                return value
        for value, label in self.options:
            if text == label:
                return value
        return text  # left to the validator, which names the allowed values

    @property
    def label(self) -> str:
        return self.title or self.name

    @property
    def hint(self) -> str:
        """The field's constraints in a few words, shown under it (``1–40 characters``)."""

        def num(x: float) -> str:
            return f"{x:g}"

        if self.kind == "text":
            lo, hi = self.min_length, self.max_length
            if lo and hi is not None:
                return f"{lo}–{hi} characters"
            if lo:
                return f"at least {lo} character{'s' if lo != 1 else ''}"
            if hi is not None:
                return f"at most {hi} characters"
            return {
                "email": "an e-mail address",
                "uri": "a web address (URI)",
                "date-time": "date and time, e.g. 2026-07-28T09:30:00Z",
            }.get(self.format or "", "")
        if self.kind in ("integer", "number"):
            what = "a whole number" if self.kind == "integer" else "a number"
            low, high = self.minimum, self.maximum  # floats, where the text bounds above are ints
            if low is not None and high is not None:
                return f"{what} from {num(low)} to {num(high)}"
            if low is not None:
                return f"{what} ≥ {num(low)}"
            if high is not None:
                return f"{what} ≤ {num(high)}"
            return what
        if self.kind == "multi":
            lo, hi = self.min_items, self.max_items
            if lo and hi is not None:
                return f"choose {lo} to {hi}" if lo != hi else f"choose {lo}"
            if lo:
                return f"choose at least {lo}"
            if hi is not None:
                return f"choose at most {hi}"
        return ""


@dataclass
class FormModel:
    """An elicitation form: the server's message, fields, and whether the schema fits the subset."""

    schema: dict[str, Any]
    message: str = ""
    fields: list[FieldSpec] = field(default_factory=list)
    supported: bool = True
    reason: str = ""
    limits: Limits = field(default_factory=Limits)
    limited: str = ""  # which size limit kept the form from widgets: "", "depth", "fields" or "size"

    @property
    def checkable(self) -> bool:
        """Whether an answer can be checked against the schema (not when it is nested too deep)."""
        return self.limited != "depth"

    @classmethod
    def from_schema(cls, schema: dict[str, Any] | None, message: str = "", limits: Limits | None = None) -> FormModel:
        schema = dict(schema or {"type": "object", "properties": {}})
        model = cls(schema=schema, message=message, limits=limits or Limits())
        model.limited, why = _over_limits(schema, model.limits)
        if model.limited:
            model.supported, model.reason = False, why
            return model
        try:
            model.fields = _fields(schema)
        except _Unsupported as exc:
            model.supported, model.reason, model.fields = False, str(exc), []
            if _checkable(schema) is not schema:
                model.reason += (
                    " (some references point outside the schema the client received, so those parts are not checked)"
                )
        return model

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def names(self) -> list[str]:
        if self.supported:
            return [f.name for f in self.fields]
        return list((self.schema.get("properties") or {}).keys())

    def initial(self, answers: Answers | None = None) -> dict[str, Any]:
        """Values to prefill: preset answers over defaults (typed; bad presets stay raw)."""
        answers = answers or Answers()
        values: dict[str, Any] = {}
        if not self.supported:
            props = self.schema.get("properties") or {}
            values = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
            values.update({k: v for k, v in answers.fields.items() if k in props})
            return values
        for spec in self.fields:
            if spec.name in answers.fields:
                typed = answers.raw.get(spec.name) if spec.kind == "text" else None
                try:
                    values[spec.name] = typed if typed is not None else spec.coerce(answers.fields[spec.name])
                except ValueError:
                    values[spec.name] = answers.fields[spec.name]
            elif spec.has_default:
                values[spec.name] = spec.default
        return values

    def headless_content(self, answers: Answers, server: str = "") -> dict[str, Any]:
        """The content a headless run sends; ``MissingAnswer`` names a required field nobody answered.

        Without ``--accept-defaults`` a form is accepted only when at least one of its fields was
        answered explicitly; the other fields then take what an untouched form shows (defaults,
        and ``false`` for an optional checkbox), which is what a person pressing Accept sends.
        """
        asked = self.names
        answered = [name for name in asked if name in answers.fields]
        if not answered and not answers.accept_defaults and asked:
            first = self.field(asked[0]) if self.supported else None
            spec = first or FieldSpec(name=asked[0], kind="text", title=asked[0])
            raise MissingAnswer(spec, self._missing_text(spec, server))
        content = self.initial(answers)
        for spec in self.fields:
            if spec.required and content.get(spec.name) is None:
                raise MissingAnswer(spec, self._missing_text(spec, server))
            if spec.kind == "boolean" and content.get(spec.name) is None:
                content[spec.name] = False  # the unchecked box a person would send
        return {k: v for k, v in content.items() if v is not None}

    def _missing_text(self, spec: FieldSpec, server: str) -> str:
        who = f"{server} asks" if server else "The server asks"
        what = f" ({spec.description})" if spec.description else ""
        message = f': "{self.message}"' if self.message else ""
        return (
            f"{who}{message} and field {spec.name!r}{what} has no answer. "
            f"Headless runs answer from presets: add {mcp_line(*answer_words(spec.name))}"
            + (" or --accept-defaults" if spec.has_default or not spec.required else "")
            + "."
        )

    def validate(self, content: dict[str, Any]) -> dict[str, str]:
        """Field name -> message for every problem (``""`` key for form-level ones).

        Checks the content against the requested schema with ``jsonschema`` (formats asserted),
        then that every value is one an MCP answer can carry at all.
        """
        import jsonschema

        errors: dict[str, str] = {}
        if not isinstance(content, dict):
            return {"": "the answer must be a JSON object"}
        if not self.checkable:  # never handed to jsonschema (or any recursive walk): it could exhaust the stack
            return {"": f"{self.reason}; decline it instead"}
        try:
            validator = compiled_validator(_checkable(self.schema), formats=True)
            found = list(validator.iter_errors(content))
        except jsonschema.exceptions.SchemaError as exc:
            return {"": f"the server's schema is not valid JSON Schema: {exc.message}"}
        except Exception as exc:  # noqa: BLE001 - e.g. referencing.exceptions.Unresolvable
            return {"": f"the server's schema cannot be checked: {exc}"}
        for error in found:
            path = list(error.absolute_path)
            if error.validator == "required" and not path:
                missing = re.findall(r"'([^']+)' is a required property", error.message)
                name = missing[0] if missing else ""
                errors.setdefault(name, "required")
                continue
            name = str(path[0]) if path else ""
            errors.setdefault(name, _friendly(error))
        for name, value in content.items():
            problem = wire_problem(value)
            if problem and name not in errors:
                errors[name] = problem
        for spec in self.fields:  # --answer ratio=NaN stays text (see answer_fields): say why it is no number
            if spec.kind in ("number", "integer") and isinstance(content.get(spec.name), str):
                try:
                    spec.coerce(content[spec.name])
                except NotFinite as exc:
                    errors[spec.name] = str(exc)
                except ValueError:
                    pass
        return errors


def wire_problem(value: Any) -> str:
    """Why ``value`` cannot travel in an MCP ``ElicitResult`` (``""`` when it can).

    The protocol carries only strings, numbers, booleans, null and lists of strings; a schema
    outside the subset may ask for more, and the answer can then only be declined.
    """
    if value is None or isinstance(value, (str, bool, int, float)):
        return ""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ""
    return "MCP answers carry only text, numbers, true/false or a list of strings; this value cannot be sent"


class _Unsupported(Exception):
    pass


def _over_limits(schema: dict[str, Any], limits: Limits) -> tuple[str, str]:
    """``(which limit, why)`` when the schema is too deep or too large for widgets; ``("", "")`` otherwise.

    Counts only (no recursion, nothing built), so a form of a million fields is refused at once.
    """
    most_depth, most_fields = limits.max_schema_depth, limits.max_form_fields
    most_values = most_fields * VALUES_PER_FIELD
    depth, values = schema_size(schema, most_depth)
    if depth > most_depth:
        return "depth", (
            f"the schema is nested more than {most_depth} levels deep (%config MCPMagics.max_schema_depth), "
            "so it is not shown as a form and no answer to it can be checked"
        )
    props = schema.get("properties")
    fields = count = len(props) if isinstance(props, dict) else 0
    if count <= most_fields and isinstance(props, dict):
        for prop in props.values():  # each tick box of a short multi-select is a widget of its own
            items = prop.get("items") if isinstance(prop, dict) else None
            if isinstance(items, dict):
                choices = items.get("enum") or items.get("anyOf") or items.get("oneOf")
                if isinstance(choices, list) and len(choices) <= CHECKBOX_LIMIT:
                    count += max(len(choices) - 1, 0)
    if values > most_values:  # before "fields": a huge schema is not even dumped for the JSON editor's preview
        return "size", (
            f"the schema holds {values:,} values, more than the {most_values:,} this notebook shows as widgets "
            f"({VALUES_PER_FIELD} per field of %config MCPMagics.max_form_fields)"
        )
    if count > most_fields:
        return "fields", (
            f"the form has {fields:,} fields{f' ({count:,} with their tick boxes)' if count != fields else ''}, more than the "
            f"{most_fields:,} this notebook shows as widgets (%config MCPMagics.max_form_fields)"
        )
    return "", ""


def _checkable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` that cannot be resolved inside it replaced by ``{}``.

    The wire models keep only ``type``/``properties``/``required`` at the top of a requested
    schema, so a server's ``$defs`` never arrive; and remote references are never fetched. What
    cannot be resolved is not checked (returns ``schema`` itself when nothing had to change).
    """
    changed = False

    def resolves(ref: str) -> bool:
        if not ref.startswith("#"):
            return False
        node: Any = schema
        for part in [p.replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p]:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False
        return True

    def walk(node: Any) -> Any:
        nonlocal changed
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str) and not resolves(node["$ref"]):
                changed = True
                node = {k: v for k, v in node.items() if k != "$ref"}
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(schema)
    return out if changed else schema


def _fields(schema: dict[str, Any]) -> list[FieldSpec]:
    if schema.get("type", "object") != "object":
        raise _Unsupported("the requested schema is not an object")
    if "$ref" in schema or "$defs" in schema or "definitions" in schema:
        raise _Unsupported("the schema uses references ($ref), which MCP forms do not allow")
    for key in ("allOf", "anyOf", "oneOf", "not", "if", "patternProperties", "dependentSchemas"):
        if key in schema:
            raise _Unsupported(f"the schema combines sub-schemas ({key}), which MCP forms do not allow")
    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            raise _Unsupported(f"field {name!r} has no schema")
        out.append(_field(name, prop, name in required))
    return out


def _options(name: str, entries: Any) -> list[tuple[Any, str]]:
    if not isinstance(entries, list) or not entries:
        raise _Unsupported(f"field {name!r} offers no choices")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or "const" not in entry:
            raise _Unsupported(f"field {name!r} has a choice without a const value")
        out.append((entry["const"], str(entry.get("title", entry["const"]))))
    return out


def _field(name: str, prop: dict[str, Any], required: bool) -> FieldSpec:
    if "$ref" in prop:
        raise _Unsupported(f"field {name!r} uses a reference ($ref)")
    typ = prop.get("type")
    if typ is None and ("enum" in prop or "oneOf" in prop):
        typ = "string"  # a bare enum of strings: read as the single-select it obviously is
    spec = FieldSpec(
        name=name,
        kind="text",
        title=str(prop.get("title") or ""),
        description=str(prop.get("description") or ""),
        required=required,
        default=prop.get("default"),
        has_default="default" in prop,
    )
    if typ == "string":
        if "oneOf" in prop:
            spec.kind = "choice"
            spec.options = _options(name, prop["oneOf"])
        elif "enum" in prop:
            values = prop["enum"]
            if not isinstance(values, list) or not values:
                raise _Unsupported(f"field {name!r} offers no choices")
            labels = prop.get("enumNames")
            if not isinstance(labels, list) or len(labels) != len(values):
                labels = values
            spec.kind = "choice"
            spec.options = [(v, str(label)) for v, label in zip(values, labels, strict=True)]
        else:
            spec.format = prop.get("format")  # other formats render as text; jsonschema still checks them
            spec.min_length, spec.max_length = prop.get("minLength"), prop.get("maxLength")
        return spec
    if typ in ("integer", "number"):
        spec.kind = typ
        spec.minimum, spec.maximum = prop.get("minimum"), prop.get("maximum")
        return spec
    if typ == "boolean":
        spec.kind = "boolean"
        return spec
    if typ == "array":
        items = prop.get("items")
        if not isinstance(items, dict):
            raise _Unsupported(f"field {name!r} is a list without a fixed set of choices")
        if "enum" in items:
            if not isinstance(items["enum"], list) or not items["enum"]:
                raise _Unsupported(f"field {name!r} offers no choices")
            spec.options = [(v, str(v)) for v in items["enum"]]
        elif "anyOf" in items or "oneOf" in items:
            spec.options = _options(name, items.get("anyOf") or items.get("oneOf"))
        else:
            raise _Unsupported(f"field {name!r} is a list without a fixed set of choices")
        spec.kind = "multi"
        spec.min_items, spec.max_items = prop.get("minItems"), prop.get("maxItems")
        return spec
    if typ == "object":
        raise _Unsupported(f"field {name!r} is a nested object; MCP forms hold only flat fields")
    raise _Unsupported(f"field {name!r} has type {json.dumps(typ)}, outside MCP's subset")


def _friendly(error: Any) -> str:
    """jsonschema's messages, shortened to what a form shows next to a field."""
    v, expected = error.validator, error.validator_value
    if v == "minLength":
        return f"at least {expected} character{'s' if expected != 1 else ''}"
    if v == "maxLength":
        return f"at most {expected} characters"
    if v == "minimum":
        return f"must be ≥ {expected}"
    if v == "maximum":
        return f"must be ≤ {expected}"
    if v == "exclusiveMinimum":
        return f"must be > {expected}"
    if v == "exclusiveMaximum":
        return f"must be < {expected}"
    if v == "minItems":
        return f"choose at least {expected}"
    if v == "maxItems":
        return f"choose at most {expected}"
    if v == "format":
        return {
            "email": "not a valid e-mail address",
            "uri": "not a valid URI (e.g. https://example.com)",
            "date": "not a valid date (YYYY-MM-DD)",
            "date-time": "not a valid date and time (e.g. 2026-07-28T09:30:00Z)",
        }.get(str(expected), f"not a valid {expected}")
    if v in ("enum", "const", "oneOf", "anyOf"):
        return "not one of the choices"
    if v == "type":
        return f"must be {_a(expected)}"
    if v == "pattern":
        return f"does not match the pattern {expected}"
    if v == "uniqueItems":
        return "choose each option once"
    if v == "additionalProperties":
        return error.message
    return error.message


def _a(expected: Any) -> str:
    names = {
        "string": "text",
        "integer": "a whole number",
        "number": "a number",
        "boolean": "true or false",
        "array": "a list",
        "object": "an object",
        "null": "empty",
    }
    if isinstance(expected, list):
        return " or ".join(names.get(str(e), str(e)) for e in expected)
    return names.get(str(expected), str(expected))


def compiled_validator(schema: dict[str, Any], formats: bool = False) -> Any:
    """A compiled validator per distinct schema: servers ask the same questions round after round
    and tools are called again and again, and building a jsonschema validator costs more than
    checking a value with it. ``formats`` asserts ``format`` (MCP's four without optional extras)."""
    return _compiled(json.dumps(schema, sort_keys=True, default=str), formats)


@functools.lru_cache(maxsize=256)  # a pure function's memo, bounded: the schema's JSON text is the key
def _compiled(schema_json: str, formats: bool) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    validator_cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return validator_cls(schema, format_checker=_format_checker() if formats else None)


def _is_uri(value: Any) -> bool:
    if not isinstance(value, str) or any(c.isspace() for c in value):
        return not isinstance(value, str)
    parsed = urlparse(value)
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*$", parsed.scheme or "")) and bool(parsed.netloc or parsed.path)


def _is_date_time(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    if "T" not in value.upper():
        raise ValueError("no time part")
    return bool(datetime.fromisoformat(value[:-1] + "+00:00" if value.upper().endswith("Z") else value))


@functools.cache
def _format_checker() -> Any:
    """jsonschema's format checks, with MCP's four formats checked without optional extras."""
    import jsonschema

    checker = jsonschema.FormatChecker()
    checker.checks("email")(lambda v: not isinstance(v, str) or bool(_EMAIL.match(v)))
    checker.checks("uri")(_is_uri)
    checker.checks("date", raises=ValueError)(
        lambda v: not isinstance(v, str) or (len(v) == 10 and bool(date.fromisoformat(v)))
    )
    checker.checks("date-time", raises=ValueError)(_is_date_time)
    return checker


@dataclass
class Question:
    """One elicitation of a round, with its form model (``None`` for URL mode): what a form, or the presets, answer."""

    key: str
    params: Any
    form: FormModel | None
    context: str = ""  # ours, shown above the question: e.g. that several calls could be asking

    @property
    def is_url(self) -> bool:
        return getattr(self.params, "mode", "form") == "url"

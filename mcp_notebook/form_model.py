"""The elicitation form as data: schema -> fields, preset answers, typing and validation.

One model serves the ipywidgets form (``forms.py``) and headless runs alike, so a person filling
the form and ``--answer``/``--answers``/``--accept-defaults`` produce identical content. No widgets
here. MCP's elicitation schema is deliberately small (a flat object of primitive fields); anything
outside that subset is marked unsupported, and the UI falls back to a JSON editor.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlparse

__all__ = ["Answers", "FieldSpec", "FormModel", "MissingAnswer", "parse_answer_value"]

Kind = Literal["text", "integer", "number", "boolean", "choice", "multi"]
FORMATS = {"email", "uri", "date", "date-time"}
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class MissingAnswer(ValueError):
    """A required field has neither an answer nor a default (headless)."""

    def __init__(self, field: FieldSpec, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass
class Answers:
    """Preset answers for a flow: ``--answer``, ``--answers`` and ``--accept-defaults``."""

    fields: dict[str, Any] = field(default_factory=dict)
    accept_defaults: bool = False

    def __bool__(self) -> bool:
        return bool(self.fields) or self.accept_defaults


def parse_answer_value(text: str) -> Any:
    """``--answer FIELD=VALUE``: VALUE is JSON when it parses, else the plain string."""
    try:
        return json.loads(text)
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
            if lowered in {"true", "yes", "y", "1", "on"}:
                return True
            if lowered in {"false", "no", "n", "0", "off"}:
                return False
            raise ValueError(f"expected true or false, got {value!r}")
        if self.kind == "integer":
            if isinstance(value, bool):
                raise ValueError(f"expected an integer, got {value!r}")
            if isinstance(value, float) and value.is_integer():
                return int(value)
            if isinstance(value, int):
                return value
            try:
                return int(str(value).strip())
            except ValueError:
                raise ValueError(f"expected an integer, got {value!r}") from None
        if self.kind == "number":
            if isinstance(value, bool):
                raise ValueError(f"expected a number, got {value!r}")
            if isinstance(value, (int, float)):
                return value
            try:
                number = float(str(value).strip())
            except ValueError:
                raise ValueError(f"expected a number, got {value!r}") from None
            return int(number) if number.is_integer() and "." not in str(value) else number
        # multi-select
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()] if value.strip() else []
        if not isinstance(value, (list, tuple)):
            value = [value]
        return [self._option_value(str(v)) for v in value]

    def _option_value(self, text: str) -> Any:
        """Accept an option's value or its label (people type what they see)."""
        for value, label in self.options:
            if text == value:
                return value
        for value, label in self.options:
            if text == label:
                return value
        return text  # left to the validator, which names the allowed values

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass
class FormModel:
    """An elicitation form: the server's message, fields, and whether the schema fits the subset."""

    schema: dict[str, Any]
    message: str = ""
    fields: list[FieldSpec] = field(default_factory=list)
    supported: bool = True
    reason: str = ""

    @classmethod
    def from_schema(cls, schema: dict[str, Any] | None, message: str = "") -> FormModel:
        schema = dict(schema or {"type": "object", "properties": {}})
        model = cls(schema=schema, message=message)
        try:
            model.fields = _fields(schema)
        except _Unsupported as exc:
            model.supported, model.reason, model.fields = False, str(exc), []
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
                try:
                    values[spec.name] = spec.coerce(answers.fields[spec.name])
                except ValueError:
                    values[spec.name] = answers.fields[spec.name]
            elif spec.has_default:
                values[spec.name] = spec.default
        return values

    def headless_content(self, answers: Answers, server: str = "") -> dict[str, Any]:
        """The content a headless run sends; ``MissingAnswer`` names a required field nobody answered.

        Without ``--accept-defaults`` a form is accepted only when at least one of its fields was
        answered explicitly; optional fields then take their defaults too (what a person who
        presses Accept without touching them sends).
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
        return {k: v for k, v in content.items() if v is not None}

    def _missing_text(self, spec: FieldSpec, server: str) -> str:
        who = f"{server} asks" if server else "The server asks"
        what = f" ({spec.description})" if spec.description else ""
        message = f': "{self.message}"' if self.message else ""
        return (
            f"{who}{message} and field {spec.name!r}{what} has no answer. "
            f"Headless runs answer from presets: add --answer {spec.name}=VALUE"
            + (" or --accept-defaults" if spec.has_default or not spec.required else "")
            + "."
        )

    def validate(self, content: dict[str, Any]) -> dict[str, str]:
        """Field name -> message for every problem (``""`` key for form-level ones)."""
        import jsonschema

        errors: dict[str, str] = {}
        validator_cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft202012Validator)
        validator = validator_cls(self.schema, format_checker=_format_checker())
        for error in validator.iter_errors(content):
            path = list(error.absolute_path)
            if error.validator == "required":
                missing = re.findall(r"'([^']+)' is a required property", error.message)
                name = missing[0] if missing else ""
                errors.setdefault(name, "required")
                continue
            name = str(path[0]) if path else ""
            errors.setdefault(name, _friendly(error))
        return errors


class _Unsupported(Exception):
    pass


def _fields(schema: dict[str, Any]) -> list[FieldSpec]:
    if schema.get("type", "object") != "object":
        raise _Unsupported("the requested schema is not an object")
    if "$ref" in schema or "$defs" in schema or "definitions" in schema:
        raise _Unsupported("the schema uses references ($ref), which MCP forms do not allow")
    required = set(schema.get("required") or [])
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            raise _Unsupported(f"field {name!r} has no schema")
        out.append(_field(name, prop, name in required))
    return out


def _field(name: str, prop: dict[str, Any], required: bool) -> FieldSpec:
    if "$ref" in prop:
        raise _Unsupported(f"field {name!r} uses a reference ($ref)")
    typ = prop.get("type")
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
            spec.options = [(o["const"], str(o.get("title", o["const"]))) for o in prop["oneOf"] if "const" in o]
        elif "enum" in prop:
            spec.kind = "choice"
            labels = prop.get("enumNames") or prop["enum"]
            spec.options = [(v, str(label)) for v, label in zip(prop["enum"], labels)]
        else:
            fmt = prop.get("format")
            if fmt is not None and fmt not in FORMATS:
                raise _Unsupported(f"field {name!r} has format {fmt!r}, outside MCP's subset")
            spec.format = fmt
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
        items = prop.get("items") or {}
        if "enum" in items:
            spec.options = [(v, str(v)) for v in items["enum"]]
        elif "anyOf" in items or "oneOf" in items:
            spec.options = [(o["const"], str(o.get("title", o["const"]))) for o in items.get("anyOf") or items["oneOf"]]
        else:
            raise _Unsupported(f"field {name!r} is a list without a fixed set of choices")
        spec.kind = "multi"
        spec.min_items, spec.max_items = prop.get("minItems"), prop.get("maxItems")
        return spec
    raise _Unsupported(f"field {name!r} has type {typ!r}, outside MCP's subset")


def _friendly(error: Any) -> str:
    """jsonschema's messages, shortened to what a form shows next to a field."""
    v, expected = error.validator, error.validator_value
    if v == "minLength":
        return f"at least {expected} characters"
    if v == "maxLength":
        return f"at most {expected} characters"
    if v == "minimum":
        return f"must be ≥ {expected}"
    if v == "maximum":
        return f"must be ≤ {expected}"
    if v == "minItems":
        return f"choose at least {expected}"
    if v == "maxItems":
        return f"choose at most {expected}"
    if v == "format":
        return f"not a valid {expected}"
    if v in ("enum", "const", "oneOf", "anyOf"):
        return "not one of the choices"
    if v == "type":
        return f"must be {expected}"
    return error.message


_CHECKER: Any = None


def _format_checker() -> Any:
    """The four formats MCP allows, checked without optional jsonschema extras."""
    global _CHECKER
    if _CHECKER is None:
        import jsonschema

        checker = jsonschema.FormatChecker(formats=())
        checker.checks("email")(lambda v: not isinstance(v, str) or bool(_EMAIL.match(v)))
        checker.checks("uri")(lambda v: not isinstance(v, str) or bool(urlparse(v).scheme and (urlparse(v).netloc or urlparse(v).path)))
        checker.checks("date", raises=ValueError)(lambda v: not isinstance(v, str) or bool(date.fromisoformat(v)))
        checker.checks("date-time", raises=ValueError)(
            lambda v: not isinstance(v, str) or ("T" in v.upper() and bool(datetime.fromisoformat(v.replace("Z", "+00:00"))))
        )
        _CHECKER = checker
    return _CHECKER

"""Cost of building an elicitation form from its schema, against building the same widgets by hand.

F1  ``ElicitationPanel`` for a 50-field schema (schema -> ``FormModel`` -> widgets, what the
    notebook does for each request) / the identical widget tree written out by hand with
    ipywidgets, no schema involved (target <= 2.0).

Both sides run in this process, alternating in blocks, and the best block of each side is kept.
Each side builds ``--forms`` forms per block; the widgets are closed after each block, outside
the timing. Widgets are built without a front end (as in any kernel before it syncs).

Usage: python bench/forms.py [--forms 5] [--blocks 5] [--fields 50] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any

TARGET = 2.0


def schema_with(fields: int) -> dict[str, Any]:
    """A flat elicitation schema cycling through every field kind, with titles, descriptions, defaults."""
    kinds: list[dict[str, Any]] = [
        {"type": "string", "minLength": 1, "maxLength": 40},
        {"type": "string", "format": "email", "default": "ada@example.com"},
        {"type": "string", "format": "uri"},
        {"type": "string", "format": "date", "default": "2026-07-28"},
        {"type": "string", "format": "date-time"},
        {"type": "integer", "minimum": 0, "maximum": 150, "default": 36},
        {"type": "number", "minimum": 0, "maximum": 1},
        {"type": "boolean", "default": True},
        {"type": "string", "enum": ["red", "green", "blue"], "default": "green"},
        {
            "type": "string",
            "oneOf": [
                {"const": "s", "title": "Small"},
                {"const": "m", "title": "Medium"},
                {"const": "l", "title": "Large"},
            ],
        },
        {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c", "d"]}, "maxItems": 3, "default": ["a"]},
    ]
    props = {
        f"f{i}": {**kinds[i % len(kinds)], "title": f"Field {i}", "description": f"what field {i} is for"}
        for i in range(fields)
    }
    return {"type": "object", "properties": props, "required": [f"f{i}" for i in range(0, fields, 3)]}


def build_ours(schema: dict[str, Any]) -> Any:
    """What the notebook does for one request: the form model, then the panel."""
    from mcp.types import ElicitRequestFormParams

    from mcp_notebook.forms.model import Answers, FormModel, Question
    from mcp_notebook.forms.widgets import ElicitationPanel

    params = ElicitRequestFormParams(message="Fill in the form", requested_schema=schema)
    question = Question("q", params, FormModel.from_schema(params.requested_schema, params.message))
    return ElicitationPanel("bench", [question], Answers(), lambda results: None).widget


def build_by_hand(schema: dict[str, Any]) -> Any:
    """The same widget tree, written out by hand for this schema (no schema logic at run time)."""
    import datetime as dt

    import ipywidgets as w

    def field(name: str, label: str, control: Any, help_text: str) -> Any:
        control.add_class("mcp-input")
        row = w.HBox([w.HTML(f"<b>{label}</b>", layout=w.Layout(width="170px", flex="0 0 auto")), control])
        helper = w.HTML(f"<small>{help_text}</small>", layout=w.Layout(margin="0 0 0 174px"))
        error = w.HTML("", layout=w.Layout(margin="0 0 0 174px", display="none"))
        box = w.VBox([row, helper, error], layout=w.Layout(margin="3px 0"))
        box.add_class("mcp-field")
        box.add_class(f"mcp-field-{name}")
        return box

    boxes = [w.HTML("<div><b>bench</b> asks:</div><div>Fill in the form</div>")]
    for i, (name, prop) in enumerate(schema["properties"].items()):
        kind = i % 11
        size = w.Layout(width="340px")
        if kind in (0, 1, 2, 4):
            control = w.Text(
                value=prop.get("default", ""), placeholder="name@example.com" if kind == 1 else "", layout=size
            )
        elif kind == 3:
            control = w.DatePicker(value=dt.date(2026, 7, 28), layout=w.Layout(width="auto"))
        elif kind in (5, 6):
            control = w.Text(value=str(prop.get("default", "")), placeholder="a number from 0 to 1", layout=size)
        elif kind == 7:
            control = w.Checkbox(value=True, indent=False, layout=w.Layout(width="auto"))
        elif kind == 8:
            control = w.Dropdown(
                options=[("red", "red"), ("green", "green"), ("blue", "blue")], value="green", layout=size
            )
        elif kind == 9:
            control = w.Dropdown(
                options=[("—", None), ("Small", "s"), ("Medium", "m"), ("Large", "l")], value=None, layout=size
            )
        else:
            ticks = [
                w.Checkbox(
                    value=v == "a", description=v, indent=False, layout=w.Layout(width="auto", margin="0 12px 0 0")
                )
                for v in "abcd"
            ]
            control = w.Box(ticks, layout=w.Layout(flex_flow="row wrap", width="340px"))
        boxes.append(field(name, prop["title"], control, prop["description"]))
    boxes.append(w.HTML("", layout=w.Layout(display="none")))
    question = w.VBox(boxes, layout=w.Layout(border="1px solid #ccc", padding="8px", margin="4px 0"))
    buttons = [w.Button(description="Accept", button_style="primary", icon="check"), w.Button(description="Decline", icon="times"),
               w.Button(description="Cancel", icon="ban")]  # fmt: skip
    panel = w.VBox([question, w.HBox([*buttons, w.HTML("")])])
    panel.add_class("mcp-elicitation")
    return panel


def _close(widget: Any) -> None:
    for child in getattr(widget, "children", ()) or ():
        _close(child)
    widget.close()


def per_form(build: Callable[[dict[str, Any]], Any], schema: dict[str, Any], forms: int) -> float:
    start = time.perf_counter()
    built = [build(schema) for _ in range(forms)]
    elapsed = (time.perf_counter() - start) / forms
    for widget in built:
        _close(widget)
    return elapsed


def measure(fields: int, forms: int, blocks: int) -> dict[str, float]:
    schema = schema_with(fields)
    build_ours(schema), build_by_hand(schema)  # warm imports and caches on both sides
    ours, hand = [], []
    for _ in range(blocks):
        hand.append(per_form(build_by_hand, schema, forms))
        ours.append(per_form(build_ours, schema, forms))
    return {"ours_ms": min(ours) * 1e3, "hand_ms": min(hand) * 1e3, "ratio": min(ours) / min(hand)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fields", type=int, default=50)
    parser.add_argument("--forms", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.fields, args.forms, args.blocks)
    if args.json:
        print(json.dumps({f"F1 {args.fields}-field form": {**result, "target": TARGET}}, indent=2))
        return 0
    verdict = "ok" if result["ratio"] <= TARGET else "OVER"
    print(f"{'measure':28} {'ours':>10} {'by hand':>10} {'ratio':>7} {'target':>7}")
    print(
        f"{'F1 ' + str(args.fields) + '-field form':28} {result['ours_ms']:8.2f}ms {result['hand_ms']:8.2f}ms {result['ratio']:7.3f} {'<= ' + str(TARGET):>7} {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

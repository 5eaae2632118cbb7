"""A map's rows in and results out: lists, pandas DataFrames and Series, and the failure table.

``arguments_of`` reads each row as the tool's arguments (a DataFrame's columns by name, renamed with
``columns``, or one ``column`` for a one-argument tool; plain values for a one-argument tool);
``result_frame`` puts each row's result beside the input (``result_value``: the structured content,
``X`` for a lone ``{"result": X}``, the object or array a JSON text holds), and ``failure_table``
names the rows that failed, their arguments masked where secret.
"""

from __future__ import annotations

import builtins
import importlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.redact import masked, secret_arguments
from ..core.text import content_text, one_line
from ..errors import FlowError, SessionError
from ..notebook.display import Table
from .rows import Outcome

__all__ = [
    "ARGS_CHARS",
    "ERROR_CHARS",
    "SHOWN_FAILURES",
    "arguments_of",
    "failure_table",
    "is_dask",
    "is_pandas",
    "is_series",
    "pandas_module",
    "result_frame",
    "result_value",
    "row_text",
    "show_table",
]


ARGS_CHARS = 80  # characters of a failed row's arguments shown in the table


ERROR_CHARS = 160


SHOWN_FAILURES = 20  # rows of the failure table; the rest are counted


def _from(rows: Any, package: str) -> bool:
    module = type(rows).__module__
    return module == package or module.startswith(package + ".")


def is_pandas(rows: Any) -> bool:
    return _from(rows, "pandas") and hasattr(rows, "to_dict") and hasattr(rows, "columns")


def is_series(rows: Any) -> bool:
    return _from(rows, "pandas") and type(rows).__name__ == "Series"


def is_dask(rows: Any) -> bool:
    return _from(rows, "dask") and hasattr(rows, "to_delayed")


def _single_argument(schema: Mapping[str, Any]) -> str:
    """The argument a one-argument tool takes (its one property, else its one required property)."""
    properties = list((schema.get("properties") or {}).keys())
    required = [str(n) for n in schema.get("required") or []]
    if len(properties) == 1:
        return str(properties[0])
    if len(required) == 1:
        return required[0]
    raise SessionError(
        f"plain values (or column=) need a tool with one argument; this one takes {', '.join(builtins.map(str, properties)) or 'none'}: give rows as dicts or a DataFrame",
        kind="bad_input",
    )  # fmt: skip


def arguments_of(
    rows: Any, schema: Mapping[str, Any], columns: Mapping[str, str] | None, column: str | None
) -> tuple[list[dict[str, Any]], Any]:
    """Each row's arguments, and the DataFrame they came from (``None`` for other inputs)."""
    rename = dict(columns or {})
    if is_pandas(rows):
        frame = rows
        if column is not None:
            if column not in frame.columns:
                raise SessionError(f"the DataFrame has no column {column!r}", kind="bad_input")
            name = rename.get(column) or _single_argument(schema)
            return [{name: _plain(v)} for v in frame[column].tolist()], frame
        records = frame.rename(columns=rename).to_dict(orient="records")
        return [{str(k): _plain(v) for k, v in record.items()} for record in records], frame
    if is_series(rows):
        name = _single_argument(schema)
        return [{name: _plain(v)} for v in rows.tolist()], None
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise SessionError(
            f"rows must be a list of argument dicts, a DataFrame or an iterable of values, not {type(rows).__name__}",
            kind="bad_input",
        )
    arguments: list[dict[str, Any]] = []
    single: str | None = None
    for row in rows:
        if isinstance(row, Mapping) and column is None:
            arguments.append({rename.get(str(k), str(k)): v for k, v in row.items()})
            continue
        single = single or _single_argument(schema)
        value = row[column] if column is not None and isinstance(row, Mapping) else row
        arguments.append({rename.get(column or "", single): value})
    return arguments, None


def _plain(value: Any) -> Any:
    """A DataFrame cell as JSON-ready Python: numpy scalars become ints and floats, NaN stays a float."""
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    return value


def failure_table(
    failures: list[tuple[int, dict[str, Any], FlowError]], schema: Mapping[str, Any], total: int, label: str
) -> Table:
    """Row index, arguments (secret ones masked), error: one line per failed row, the first ``SHOWN_FAILURES`` of them.

    Compact on purpose: 900 failed rows of one cause would bury the cell; the rest are counted
    in a note (``MapError.failures`` and the kept results have them all).
    """
    rows = [
        [i, row_text(a, schema, ARGS_CHARS), one_line(_error_text(e, label), ERROR_CHARS)]
        for i, a, e in failures[:SHOWN_FAILURES]
    ]
    notes = [f"... and {len(failures) - SHOWN_FAILURES} more failed rows"] if len(failures) > SHOWN_FAILURES else []
    return Table(
        ["row", "arguments", "error"],
        rows,
        title=f"{len(failures)} of {total} calls of {label} failed",
        notes=notes,
        wrap=True,
    )


def _error_text(error: FlowError, label: str) -> str:
    """The error without the ``SERVER.TOOL`` every row of the table shares (named in its title)."""
    text = str(error)
    for prefix in (f"{label} returned an error: ", f"{label} failed: ", f"{label} "):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return text


def row_text(arguments: Mapping[str, Any], schema: Mapping[str, Any], width: int) -> str:
    """A row's arguments as one line, ``name='value', ...``, secret ones masked, cut to ``width``."""
    return one_line(
        ", ".join(f"{k}={v!r}" for k, v in masked(arguments, secret_arguments(arguments, schema)).items()), width
    )


def show_table(table: Table) -> None:
    """The failure table in the cell (or IPython's output); a script without IPython gets the outcomes only."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython is a dependency
        return
    if get_ipython() is not None:
        display(table)


def result_frame(frame: Any, outcomes: list[Outcome], expand: bool) -> Any:
    """The input DataFrame plus ``result`` (each result's value, ``result_value``, or its ``FlowError``) or, expanded, its structured content's keys."""
    pd = pandas_module()
    if not expand:
        out = frame.copy()
        out["result"] = [o if isinstance(o, FlowError) else result_value(o) for o in outcomes]
        return out
    records = [{} if isinstance(o, FlowError) else _structured(o) for o in outcomes]
    expanded = pd.DataFrame.from_records(records, index=frame.index)
    if any(isinstance(o, FlowError) for o in outcomes):
        expanded["error"] = [o if isinstance(o, FlowError) else None for o in outcomes]
    expanded = expanded.rename(
        columns={c: f"{c}_result" for c in expanded.columns if c in frame.columns}
    )  # never overwrite an input column
    return pd.concat([frame, expanded], axis=1)


def pandas_module() -> Any:
    """pandas, imported only for a DataFrame's results (an optional dependency, without type stubs here)."""
    return importlib.import_module("pandas")


def result_value(result: Any) -> Any:
    """A result as one value for a DataFrame cell: a value, not the JSON text of one.

    The structured content (a dict; a ``{"result": X}`` alone, the SDK's wrapping of a tool that
    returns a plain value, is ``X``, as ``expand=True`` makes it a column named ``result``), else
    the text of a single text block; a text (or a wrapped string) that holds a JSON object or
    array is that object or array. Other texts stay text, also one that reads as a number: only
    the tool's structured output says it is one.
    """
    content = getattr(result, "structured_content", None)
    blocks = list(getattr(result, "content", []) or [])
    if isinstance(content, Mapping):
        value = content["result"] if list(content) == ["result"] else dict(content)
        return _json_value(value) if isinstance(value, str) else value
    if len(blocks) == 1 and getattr(blocks[0], "type", None) == "text":
        return _json_value(str(blocks[0].text))
    return content_text(blocks)


def _json_value(text: str) -> Any:
    """The object or array ``text`` holds as JSON, else ``text`` itself."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    return text


def _structured(result: Any) -> dict[str, Any]:
    """A result's structured content as one row; a tool without any gives its text as ``result``."""
    content = getattr(result, "structured_content", None)
    if isinstance(content, Mapping):
        return dict(content)
    return {"result": content_text(result.content)}

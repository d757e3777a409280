"""A study's trials as one table (Optuna's ``trials_dataframe``) and its exports.

One record per trial, in trial order, with Optuna's column names where Optuna has one:

* ``number``, ``value`` (None until told, and for failed or abandoned trials), ``state``
  (``pending``, ``complete``, ``fail``, ``abandoned``);
* ``datetime_start`` / ``datetime_complete``: when it was asked / told, ISO 8601 in UTC (pandas
  timestamps in the data frame), and ``duration`` in seconds;
* ``row``: the candidate row (studies of rows only);
* ``params_<name>``: each parameter or feature, typed (ints, bools, categories as given);
* ``carried_<name>``: a CSV's ID and text columns (studies made from a CSV);
* ``request``: the sampler's request as JSON, where any trial has one (e.g. Q-GP-UCB's accuracy).

``frontierbo study export --format csv|json`` writes these records; CSV cells are the values as
JSON would spell them (an empty cell for None).
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

FORMATS = ("csv", "json")


def trial_records(study) -> list[dict]:
    """The study's trials as flat records (module docstring), in trial order."""
    trials = study.trials
    with_request = any(t.request for t in trials)
    records = []
    for t in trials:
        record = {
            "number": t.number,
            "value": t.value,
            "state": t.state,
            "datetime_start": _iso(t.asked_at),
            "datetime_complete": None if t.told_at is None else _iso(t.told_at),
            "duration": None if t.told_at is None else t.told_at - t.asked_at,
        }
        if t.row is not None:
            record["row"] = t.row
        record |= {f"params_{name}": value for name, value in t.params.items()}
        record |= {f"carried_{name}": value for name, value in t.carried.items()}
        if with_request:
            record["request"] = json.dumps(t.request) if t.request else None
        records.append(record)
    return records


def trials_dataframe(study):
    """The records as a pandas DataFrame, the two datetimes as UTC timestamps."""
    import pandas as pd

    frame = pd.DataFrame.from_records(trial_records(study))
    if frame.empty:
        return frame
    for column in ("datetime_start", "datetime_complete"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


def export_text(study, fmt: str) -> str:
    """The records as CSV (a header, one line per trial) or as a JSON object."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    records = trial_records(study)
    if fmt == "json":
        return json.dumps({"study": study.name, "direction": study.direction, "trials": records})
    columns = list(dict.fromkeys(key for r in records for key in r)) or ["number"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for r in records:
        writer.writerow([_cell(r.get(c)) for c in columns])
    return out.getvalue()


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat(timespec="microseconds")


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)

#!/usr/bin/env python3
"""Validates cmc's JSON reports against docs/schema.

    validate_reports.py SCHEMA_DIR REPORT_DIR

REPORT_DIR holds one folder per report kind (check/, scan/, ...), each with
the reports cmc wrote (*.json); a report of kind K is validated against
SCHEMA_DIR/K.schema.json. Every violation is printed as one line, the file
and the JSON path first; the exit status is 1 if any report is invalid,
has no schema or is not JSON, or if there is no report although a test
asked cmc for one (REPORT_DIR/asked-by-PID: then they were not kept).
"""

import json
import pathlib
import sys

import jsonschema


def path_text(error):
    """'$.counterexample[1].send' for where in the report error is."""
    text = "$"
    for part in error.absolute_path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def resolver_of(schema, schema_dir):
    """Resolves a reference to another schema of schema_dir (a replay step
    uses the check report's definitions) by its $id, not over the network.
    """
    store = {}
    for path in schema_dir.glob("*.schema.json"):
        other = json.loads(path.read_text())
        store[other["$id"]] = other
    return jsonschema.RefResolver.from_schema(schema, store=store)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    schema_dir, report_dir = map(pathlib.Path, sys.argv[1:])
    counts = {}
    failures = 0
    for kind_dir in sorted(p for p in report_dir.glob("*") if p.is_dir()):
        kind = kind_dir.name
        schema_path = schema_dir / f"{kind}.schema.json"
        reports = sorted(kind_dir.glob("*.json"))
        if not schema_path.exists():
            print(f"{kind_dir}: {len(reports)} reports of kind '{kind}' and "
                  f"no schema {schema_path}")
            failures += 1
            continue
        schema = json.loads(schema_path.read_text())
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
        validator = validator_class(schema, resolver=resolver_of(schema,
                                                                 schema_dir))
        for report_path in reports:
            counts[kind] = counts.get(kind, 0) + 1
            try:
                report = json.loads(report_path.read_bytes())
            except ValueError as error:
                print(f"{report_path}: not JSON: {error}")
                failures += 1
                continue
            errors = sorted(validator.iter_errors(report),
                            key=lambda e: list(e.absolute_path))
            for error in errors:
                print(f"{report_path}: {path_text(error)}: {error.message}")
            failures += 1 if errors else 0
    total = sum(counts.values())
    kinds = ", ".join(f"{kind} {count}" for kind, count in counts.items())
    print(f"validated {total} reports ({kinds or 'none'}) against "
          f"{schema_dir}: {failures} invalid")
    if total == 0 and list(report_dir.glob("asked-by-*")):
        print(f"no report in {report_dir}, but tests asked cmc for one: "
              "they were not kept")
        return 1
    if total == 0:
        print("no test asked cmc for a JSON report: nothing to validate")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

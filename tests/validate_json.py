"""Validates podsim JSON outputs against docs/output.schema.json (issue #14 item 5) with the jsonschema package
(Debian: python3-jsonschema), the validator a consumer of the contract would use.

usage: validate_json.py SCHEMA FILE... ; prints each violation with its JSON path and exits 1 if there is any."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
bad = 0
for path in sys.argv[2:]:
    doc = json.load(open(path))
    # Against the command's own definition, so that a violation names the key rather than "not valid under oneOf".
    command = doc.get("command") if isinstance(doc, dict) else None
    one = validator if command not in schema["$defs"] else jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/" + command, "$defs": schema["$defs"]})
    for e in sorted(one.iter_errors(doc), key=lambda e: list(e.absolute_path)):
        bad += 1
        print(f"{path}: $" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path) + f": {e.message}")
    if not validator.is_valid(doc):
        bad += 1
        print(f"{path}: not valid under the top-level schema (command {command!r})")
sys.exit(1 if bad else 0)

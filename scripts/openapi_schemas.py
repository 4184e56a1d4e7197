#!/usr/bin/env python3
"""Writes web/openapi-responses.json: the OpenAPI response schemas, inferred from real --json
outputs of gpuplan (the same documents the API serves), then reviewed by hand.

Usage: scripts/openapi_schemas.py SAMPLE_DIR > web/openapi-responses.json
SAMPLE_DIR holds outputs named <Schema><n>.json (e.g. Size1.json from `gpuplan size ... --json`).
Rules: objects list every key seen (required = keys seen in every sample; additionalProperties
false); every number is "number"; null joins the type list; a key only ever null is left untyped.
The e2e test (tests/e2e/api_e2e_test.cpp) checks live responses against the result.
"""
import glob, json, os, re, sys


def jtype(v):
    if v is None: return "null"
    if isinstance(v, bool): return "boolean"
    if isinstance(v, (int, float)): return "number"
    if isinstance(v, str): return "string"
    if isinstance(v, list): return "array"
    return "object"


def infer(values):
    types = sorted({jtype(v) for v in values})
    s = {}
    concrete = [t for t in types if t != "null"]
    if not concrete:
        return {}
    s["type"] = types[0] if len(types) == 1 else types
    objs = [v for v in values if isinstance(v, dict)]
    if objs:
        keys = []
        for o in objs:
            for k in o:
                if k not in keys: keys.append(k)
        s["properties"] = {k: infer([o[k] for o in objs if k in o]) for k in keys}
        s["required"] = [k for k in keys if all(k in o for o in objs)]
        s["additionalProperties"] = False
    arrs = [v for v in values if isinstance(v, list)]
    if arrs:
        items = [x for a in arrs for x in a]
        if items: s["items"] = infer(items)
    return s


samples = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = re.sub(r"\d+$", "", os.path.basename(f)[:-5])
    samples.setdefault(name, []).append(json.load(open(f)))
out = {name: infer(vals) for name, vals in sorted(samples.items())}
json.dump(out, sys.stdout, indent=1, sort_keys=True)
print()

"""PagerDuty MCP server: its tool list as FastMCP would list it (name = function name,
description = the docstring, cleaned as inspect.cleandoc does; one property per parameter,
required when it has no default; annotations read-only/destructive from read_tools/write_tools),
and the maintainers' competency tests as (query, expected tool names)."""
import ast, json, sys, inspect, pathlib
root = pathlib.Path(sys.argv[1])
init = ast.parse((root / "pagerduty_mcp/tools/__init__.py").read_text())
groups = {}
for node in init.body:
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
        groups[node.targets[0].id] = [e.id for e in node.value.elts if isinstance(e, ast.Name)]
read, write = set(groups.get("read_tools", [])), set(groups.get("write_tools", []))
JSON_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "datetime": "string"}
def type_of(ann):
    if ann is None: return {}
    src = ast.unparse(ann)
    base = src.split("|")[0].strip()
    if base.startswith("list["): return {"type": "array"}
    if base in JSON_TYPES: return {"type": JSON_TYPES[base]}
    return {"type": "object"}
tools = []
for path in sorted((root / "pagerduty_mcp/tools").glob("*.py")):
    tree = ast.parse(path.read_text())
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef) or fn.name not in read | write: continue
        args = fn.args.args + fn.args.kwonlyargs
        defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults) + list(fn.args.kw_defaults)
        props, required = {}, []
        for a, d in zip(args, defaults):
            props[a.arg] = type_of(a.annotation)
            if d is None: required.append(a.arg)
        ro = fn.name in read
        tools.append({
            "name": fn.name,
            "description": inspect.cleandoc(ast.get_docstring(fn, clean=False) or ""),
            "inputSchema": {"type": "object", "properties": props, "required": required},
            "annotations": {"readOnlyHint": ro, "destructiveHint": not ro, "idempotentHint": ro},
        })
queries = []
for path in sorted((root / "pagerduty_mcp_evals/test_cases").glob("test_*.py")):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call): continue
        kw = {k.arg: k.value for k in node.keywords}
        if "query" not in kw or "expected_tool_calls" not in kw: continue
        if not isinstance(kw["query"], ast.Constant): continue
        names = []
        for call in getattr(kw["expected_tool_calls"], "elts", []):
            for k in call.keywords:
                if k.arg == "name" and isinstance(k.value, ast.Constant): names.append(k.value.value)
        if names: queries.append({"query": kw["query"].value, "tools": names, "file": path.name})
print(json.dumps({"tools": tools, "queries": queries}, indent=1))

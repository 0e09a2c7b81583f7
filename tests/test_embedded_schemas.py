"""Schemas embedded in what users ship: tool definitions, API bodies, OpenAPI, test cases.

Each file in fixtures/inputs/ follows the shape its API documents (OpenAI Chat Completions and
Responses, Anthropic Messages, MCP tools/list, Gemini generateContent, OpenAPI 3.0/3.1,
Swagger 2, JSON-Schema-Test-Suite cases). Every decision site must be found at its JSON Pointer,
on the line of its key, with a field path saying where it lives — and linted under qwen2.5.
"""

from __future__ import annotations

import json

import pytest
from test_cli import assert_no_traceback, pcdlint

from auditor.exitcodes import EXIT_FINDINGS
from auditor.linter.engine import LintOptions, lint_model, selected_rules
from auditor.schema.documents import load_document
from auditor.schema.sites import analyse
from support import FIXTURES

INPUTS = FIXTURES / "inputs"

EXPECTED = {
    "anthropic_messages_request.json": (
        "anthropic",
        [
            ("/tools/0/input_schema/properties/unit", "tool get_weather › unit", 12),
        ],
    ),
    "anthropic_tool.json": (
        "anthropic",
        [
            ("/input_schema/properties/severity", "tool classify_ticket › severity", 7),
        ],
    ),
    "anthropic_tools_list.json": (
        "anthropic",
        [
            ("/0/input_schema/properties/severity", "tool classify_ticket › severity", 7),
            ("/1/input_schema/properties/team", "tool assign › team", 16),
        ],
    ),
    "benchmark_case.json": (
        "schema-wrapper",
        [  # `not`, `propertyNames`, `contains` are no sites
            ("/schema/properties/route", "ticket routing, 3-way › route", 7),
        ],
    ),
    "gemini_generate_content.json": (
        "gemini",
        [
            (
                "/tools/0/functionDeclarations/0/parameters/properties/color_temp",
                "tool set_light_values › color_temp",
                13,
            ),
            ("/generationConfig/responseSchema/properties/mood", "responseSchema › mood", 26),
            ("/generationConfig/responseSchema/properties/dimmed", "responseSchema › dimmed", 27),
        ],
    ),
    "json_schema_test_suite.json": (
        "schema-wrapper",
        [
            ("/0/schema", "simple enum validation", 4),
            ("/1/schema/properties/bar", "enums in properties › bar", 20),
        ],
    ),
    "mcp_tools_list_result.json": (
        "mcp",
        [
            ("/result/tools/0/inputSchema/properties/units", "tool get_weather_data › units", 14),
            (
                "/result/tools/0/outputSchema/properties/conditions",
                "tool get_weather_data output › conditions",
                22,
            ),
        ],
    ),
    "openai_chat_request.json": (
        "openai",
        [
            ("/tools/0/function/parameters/properties/unit", "tool get_weather › unit", 18),
            ("/tools/1/function/parameters/properties/category", "tool file_ticket › category", 32),
            ("/tools/1/function/parameters/properties/urgent", "tool file_ticket › urgent", 33),
            ("/response_format/json_schema/schema/$defs/Team", "response_format triage › team", 54),
            (
                "/response_format/json_schema/schema/properties/tags/items",
                "response_format triage › tags[]",
                50,
            ),
        ],
    ),
    "openai_function_tool.json": (
        "openai",
        [
            ("/function/parameters/properties/unit", "tool get_weather › unit", 10),
        ],
    ),
    "openai_legacy_functions.json": (
        "openai",
        [
            ("/functions/0/parameters/properties/unit", "function get_current_weather › unit", 12),
        ],
    ),
    "openai_responses_request.json": (
        "openai",
        [
            ("/tools/0/parameters/properties/level", "tool escalate › level", 15),
            ("/text/format/schema/properties/sentiment", "text.format review › sentiment", 29),
            ("/text/format/schema/properties/topic", "text.format review › topic", 30),
        ],
    ),
    "openai_tools_list.json": (
        "openai",
        [
            ("/0/function/parameters/properties/priority", "tool set_priority › priority", 8),
            ("/1/function/parameters/properties/queue", "tool route › queue", 19),
        ],
    ),
    "openapi_3_0.json": (
        "openapi-3.0",
        [
            (
                "/paths/~1orders~1{id}/patch/requestBody/content/application~1json/schema/properties/state",
                "PATCH /orders/{id} › state",
                16,
            ),
            (
                "/paths/~1orders~1{id}/patch/requestBody/content/application~1json/schema/properties/gift",
                "PATCH /orders/{id} › gift",
                17,
            ),
            ("/components/schemas/Carrier", "Carrier", 29),
        ],
    ),
    "openapi_3_1.yaml": (
        "openapi-3.1",
        [
            ("/paths/~1tickets/get/parameters/0/schema", "GET /tickets › status", 12),
            # reached through `$ref: '#/components/schemas/Ticket'` from the request body first
            ("/components/schemas/Ticket/properties/priority", "POST /tickets › priority", 43),
            ("/components/schemas/Channel", "POST /tickets › channel", 48),
            ("/components/schemas/Pet", "Pet.pet_type", 51),  # a discriminator through $refs
        ],
    ),
    "swagger_2.json": (
        "swagger-2.0",
        [
            ("/paths/~1pets/get/parameters/0", "GET /pets › status", 9),
            ("/definitions/Pet/properties/species", "POST /pets › species", 26),
        ],
    ),
}


def test_every_fixture_has_expectations():
    assert sorted(p.name for p in INPUTS.iterdir()) == sorted([*EXPECTED, "package.json"])


@pytest.fixture(scope="module")
def linted(qwen):
    """Every fixture crawled and linted under qwen2.5 (the whole rule set)."""
    rules = selected_rules(LintOptions())
    out = {}
    for name in EXPECTED:
        model = analyse(load_document(INPUTS / name, name))
        out[name] = lint_model(model, [qwen], rules, LintOptions(suggestions=False))
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sites_at_pointer_line_and_field(name, linted):
    result = linted[name]
    expected_format, expected_sites = EXPECTED[name]
    assert result.model.format == expected_format
    assert [(s.pointer, s.field, s.span.line) for s in result.model.sites] == expected_sites
    assert not result.model.schema_problems, result.model.schema_problems
    lines = (INPUTS / name).read_text(encoding="utf-8").splitlines()
    for site in result.model.sites:
        key = site.pointer.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
        row = lines[site.span.line - 1]
        assert key in row or site.name in row, (site.pointer, row)  # the line holds the field
        for option, span in zip(site.options, site.option_spans):
            if isinstance(option, str) and site.kind in ("enum", "nullable-enum"):
                assert json.dumps(option) in lines[span.line - 1] or option in lines[span.line - 1]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_findings_point_into_the_embedded_schema(name, linted):
    """Under qwen2.5, every site-level finding sits on a found site, on its key or an option."""
    result = linted[name]
    sites = {s.pointer: s for s in result.model.sites}
    for finding in result.findings:
        if finding.code == "PCD000":
            continue
        site = sites[finding.site_pointer]
        assert finding.field == site.field
        assert finding.line in {site.span.line, *(s.line for s in site.option_spans)}


def test_collision_inside_a_tool_parameter_fails_the_run():
    path = INPUTS / "openai_chat_request.json"
    result = pcdlint("check", "--select", "PCD001", path)
    assert_no_traceback(result)
    assert result.returncode == EXIT_FINDINGS, result.stderr
    assert (
        f"{path}:32:13: tool file_ticket › category [qwen2.5] PCD001 error\n    32:53 PCD001 error: "
        in result.stdout
    )


def test_json_report_lists_embedded_schemas():
    result = pcdlint("check", "-f", "json", INPUTS / "openapi_3_1.yaml")
    report = json.loads(result.stdout)
    schemas = report["files"][0]["schemas"]
    assert schemas[1] == {
        "pointer": "/paths/~1tickets/post/requestBody/content/application~1json/schema",
        "kind": "openapi",
        "format": "openapi-3.1",
        "label": "POST /tickets",
    }
    assert report["summary"]["unrecognized"] == []


# --------------------------------------------------------------------------- decision sites


def _sites(value, tmp_path, name="s.json"):
    path = tmp_path / name
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return {s.pointer: s for s in analyse(load_document(path)).sites}


def test_constraint_keywords_are_not_sites(tmp_path):
    sites = _sites(
        {
            "type": "object",
            "properties": {
                "tags": {"type": "object", "propertyNames": {"enum": ["a", "b"]}},
                "word": {"type": "string", "not": {"enum": ["spam", "scam"]}},
                "list": {"type": "array", "contains": {"enum": ["x", "y"]}},
                "cond": {"if": {"properties": {"k": {"enum": ["p", "q"]}}}, "then": {"enum": ["t1", "t2"]}},
            },
            "dependentRequired": {"word": ["tags"]},
        },
        tmp_path,
    )
    assert list(sites) == ["/properties/cond/then"]


def test_boolean_type_lists_and_nullable_enums(tmp_path):
    sites = _sites(
        {
            "type": "object",
            "properties": {
                "flag": {"type": ["boolean", "null"]},
                "plain": {"type": ["boolean"]},
                "mixed": {"type": ["boolean", "string"]},  # an open set: not a decision
                "level": {"type": "string", "enum": ["low", "high"], "nullable": True},
                "maybe": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]},
                "opt": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            },
        },
        tmp_path,
    )
    assert {p: (s.kind, s.options) for p, s in sites.items()} == {
        "/properties/flag": ("nullable-boolean", [True, False, None]),
        "/properties/plain": ("boolean", [True, False]),
        "/properties/level": ("nullable-enum", ["low", "high", None]),
        "/properties/maybe": ("anyOf-const", ["a", "b", None]),
        "/properties/opt": ("anyOf-const", [True, False, None]),
    }
    assert sites["/properties/flag"].option_pointers == [
        "/properties/flag/type/0",
        "/properties/flag/type/0",
        "/properties/flag/type/1",
    ]


def test_discriminator_is_one_site_on_the_property(tmp_path):
    sites = _sites(
        {
            "type": "object",
            "properties": {
                "event": {
                    "oneOf": [
                        {"$ref": "#/$defs/Click"},
                        {"$ref": "#/$defs/Scroll"},
                        {"type": "object", "properties": {"kind": {"enum": ["key"]}}},
                    ]
                }
            },
            "$defs": {
                "Click": {
                    "type": "object",
                    "properties": {"kind": {"const": "click"}, "x": {"type": "integer"}},
                },
                "Scroll": {"type": "object", "properties": {"kind": {"const": "scroll"}}},
            },
        },
        tmp_path,
    )
    site = sites["/properties/event"]
    assert (site.kind, site.field, site.name, site.options) == (
        "discriminator",
        "event.kind",
        "kind",
        ["click", "scroll", "key"],
    )
    assert site.option_pointers == [
        "/$defs/Click/properties/kind/const",
        "/$defs/Scroll/properties/kind/const",
        "/properties/event/oneOf/2/properties/kind/enum/0",
    ]


def test_a_property_pinned_to_one_shared_value_is_no_discriminator(tmp_path):
    """MCP's requests all pin `"jsonrpc": "2.0"`: a constant; `method` tells them apart."""
    request = {"type": "object", "properties": {"jsonrpc": {"const": "2.0"}, "method": {"const": "{}"}}}
    defs = {
        name: json.loads(json.dumps(request).replace('"{}"', json.dumps(method)))
        for name, method in (("Ping", "ping"), ("Call", "tools/call"))
    }
    sites = _sites({"anyOf": [{"$ref": "#/$defs/Ping"}, {"$ref": "#/$defs/Call"}], "$defs": defs}, tmp_path)
    assert [(s.field, s.options) for s in sites.values()] == [("method", ["ping", "tools/call"])]
    same = {"oneOf": [{"properties": {"v": {"const": 1}}}, {"properties": {"v": {"const": 1}}}]}
    assert _sites(same, tmp_path, "same.json") == {}


def test_array_items_are_scored_after_the_bracket(tmp_path, qwen):
    from auditor.pcd.scoring import SiteTokens

    sites = _sites(
        {
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {"enum": ["billing", "login"]}},
                "flags": {"type": "array", "items": {"type": "boolean"}},
            },
        },
        tmp_path,
    )
    tags, flags = sites["/properties/tags/items"], sites["/properties/flags/items"]
    assert (tags.field, tags.array_depth) == ("tags[]", 1)
    assert SiteTokens(tags, qwen).suffix == '  "tags": ["'
    assert SiteTokens(flags, qwen).literal_suffix.startswith('  "flags": [')


def test_gemini_dialect_upper_case_types(tmp_path):
    sites = _sites(
        {
            "generationConfig": {
                "responseSchema": {
                    "type": "ARRAY",
                    "items": {
                        "type": "OBJECT",
                        "properties": {
                            "ok": {"type": "BOOLEAN"},
                            "kind": {"type": "STRING", "enum": ["A1", "B2"]},
                        },
                    },
                }
            }
        },
        tmp_path,
    )
    assert [(s.field, s.kind) for s in sites.values()] == [
        ("responseSchema › [].ok", "boolean"),
        ("responseSchema › [].kind", "enum"),
    ]


def test_openai_schema_refs_resolve_in_the_schema_openapi_refs_in_the_document(tmp_path):
    tool = {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {"a": {"$ref": "#/$defs/A"}},
                "$defs": {"A": {"enum": ["x1", "y2"]}},
            },
        },
    }
    sites = _sites(tool, tmp_path)
    assert [(p, s.field) for p, s in sites.items()] == [("/function/parameters/$defs/A", "tool f › a")]

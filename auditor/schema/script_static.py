"""A JavaScript or TypeScript file's decision requests, read with tree-sitter's grammars
(`tree-sitter`, `tree-sitter-javascript`, `tree-sitter-typescript`), never run.

The same reading as Python's (auditor.schema.python_static): object and array literals with
their positions, `const`/`let` bindings assigned once in a function or module and never changed
in place, functions that return one literal, the JS SDK's `choice(…)`, `score(…)`, `noul(…)`
helpers; `JSON.stringify(x)` is `x`; `as const`, `satisfies`, `!` and parentheses are looked
through; template literals with substitutions, spreads of something unknown, calls and member
reads are parts built at run time (auditor.schema.code_requests). The parser is imported when
the first script file is read; a file it cannot parse is a note.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from auditor.distribution import package_hint
from auditor.schema.code_values import Reading, Scope
from auditor.schema.documents import Span

# suffix → grammar: TypeScript's reads plain JavaScript too, except JSX (.jsx/.tsx: its TSX)
_GRAMMARS = {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".jsx": "javascript",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
_WRAPPERS = {
    "parenthesized_expression",
    "as_expression",
    "satisfies_expression",
    "non_null_expression",
    "type_assertion",
    "await_expression",
}
_FUNCTIONS = {
    "function_declaration",
    "function_expression",
    "arrow_function",
    "method_definition",
    "function",
}
_MUTATORS = {"push", "unshift", "splice", "set", "add", "delete", "assign", "pop", "shift", "clear"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
GRAMMARS = ("tree-sitter", "tree-sitter-javascript", "tree-sitter-typescript")


@lru_cache(maxsize=4)
def _parser(grammar: str) -> Any:
    from tree_sitter import Language, Parser

    if grammar == "javascript":
        import tree_sitter_javascript

        return Parser(Language(tree_sitter_javascript.language()))
    import tree_sitter_typescript

    language = (
        tree_sitter_typescript.language_tsx()
        if grammar == "tsx"
        else tree_sitter_typescript.language_typescript()
    )
    return Parser(Language(language))


def read_script_requests(text: str, suffix: str) -> Reading:
    """The literals and calls of a script (auditor.schema.code_requests)."""
    from auditor.schema.code_values import Reading

    try:
        parser = _parser(_GRAMMARS.get(suffix, "typescript"))
    except ImportError:
        return Reading(
            notes=[
                f"not read: reading {suffix} files needs tree-sitter's grammars ({package_hint(*GRAMMARS)})"
            ]
        )
    tree = parser.parse(text.encode("utf-8"))
    if tree.root_node.has_error:
        where = _first_error(tree.root_node)
        return Reading(notes=[f"not read: not {suffix} this pcdlint can parse (line {where})"])
    return _ScriptReader(text).read(tree.root_node)


def _first_error(node: Any) -> int:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "ERROR" or current.is_missing:
            return current.start_point[0] + 1
        stack.extend(reversed(current.children))
    return node.start_point[0] + 1


class _Scope(Scope):
    """One function's or the module's bindings (code_values.Scope)."""

    def __init__(self, node: Any, parent: Scope | None):
        super().__init__(parent)
        for child in _own_nodes(node):
            kind = child.type
            if kind == "variable_declarator":
                name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
                if name is not None and name.type == "identifier":
                    self._bind(name.text.decode(), value)
                    if value is not None and value.type in (
                        "arrow_function",
                        "function_expression",
                        "function",
                    ):
                        self.functions[name.text.decode()] = (value, _returned(value))
            elif kind == "function_declaration":
                name = child.child_by_field_name("name")
                if name is not None:
                    self.functions[name.text.decode()] = (child, _returned(child))
            elif kind in ("assignment_expression", "augmented_assignment_expression", "update_expression"):
                target = child.child_by_field_name("left") or child.child_by_field_name("argument")
                self._mutate(target)
            elif kind == "call_expression":
                function = child.child_by_field_name("function")
                if function is not None and function.type == "member_expression":
                    prop = function.child_by_field_name("property")
                    if prop is not None and prop.text.decode() in _MUTATORS:
                        self._mutate(function.child_by_field_name("object"))
                        if function.text.decode().startswith("Object.assign"):
                            arguments = child.child_by_field_name("arguments")
                            if arguments is not None and arguments.named_children:
                                self._mutate(arguments.named_children[0])
            elif kind in ("import_specifier", "namespace_import", "import_clause"):
                for ident in child.named_children:
                    if ident.type == "identifier":
                        self.bindings[ident.text.decode()] = None
        if node.type in _FUNCTIONS:
            parameters = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
            if parameters is not None:
                for ident in _identifiers(parameters):
                    self.bindings[ident] = None

    def _bind(self, name: str, value: Any) -> None:
        self.bindings[name] = value if name not in self.bindings else None

    def _mutate(self, node: Any) -> None:
        while node is not None and node.type in ("member_expression", "subscript_expression"):
            node = node.child_by_field_name("object")
        if node is not None and node.type == "identifier":
            self.bindings[node.text.decode()] = None


def _identifiers(node: Any) -> list[str]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        if current.type in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(current.text.decode())
        stack.extend(current.named_children)
    return out


def _own_nodes(node: Any):
    """A body's nodes, not those of functions defined inside it (their own scopes)."""
    stack = list(node.children)
    while stack:
        child = stack.pop()
        yield child
        if child.type not in _FUNCTIONS and child.type != "class_body":
            stack.extend(child.children)


def _returned(function: Any) -> Any:
    """The one expression a function returns (an arrow's expression body), or None."""
    body = function.child_by_field_name("body")
    if body is None:
        return None
    if body.type != "statement_block":
        return body
    returns = [n for n in _own_nodes(body) if n.type == "return_statement"]
    if len(returns) != 1 or not returns[0].named_children:
        return None
    return returns[0].named_children[0]


class _ScriptReader:
    def __init__(self, text: str):
        self.text = text
        self.lines = text.split("\n")
        self.values: dict[tuple[int, int], object] = {}
        self.scopes: dict[int, _Scope] = {}

    def scope_of(self, node: Any, parent: Scope | None) -> _Scope:
        key = node.id
        if key not in self.scopes:
            self.scopes[key] = _Scope(node, parent)
        return self.scopes[key]

    def read(self, root: Any):
        from auditor.schema.code_values import Call, Reading

        reading = Reading()
        stack = [(root, self.scope_of(root, None))]
        while stack:
            node, scope = stack.pop()
            if node.type in ("object", "array"):
                reading.literals.append(self.value(node, scope, 0))
            elif node.type in ("call_expression", "new_expression"):
                function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
                arguments = node.child_by_field_name("arguments")
                args = [
                    self.value(a, scope, 0)
                    for a in (arguments.named_children if arguments is not None else [])
                    if a.type != "comment"
                ]
                callee = function.text.decode() if function is not None else ""
                reading.calls.append(Call(callee, args, {}, self.span(node)))
            for child in reversed(node.children):
                stack.append((child, self.scope_of(child, scope) if child.type in _FUNCTIONS else scope))
        reading.literals.sort(key=lambda v: (v.span.line, v.span.column))
        return reading

    # ---- values

    def value(self, node: Any, scope: Scope, depth: int):
        key = (node.id, id(scope))
        cached = self.values.get(key)
        if cached is None:
            cached = self._value(node, scope, depth)
            self.values[key] = cached
        return cached

    def _value(self, node: Any, scope: Scope, depth: int):
        from auditor.schema.code_values import (
            CONSTRUCTORS,
            MAX_FOLLOW,
            Arr,
            Dyn,
            Lit,
            Obj,
            constructed,
        )

        span = self.span(node)
        kind = node.type
        if kind in _WRAPPERS and node.named_children:
            return self.value(node.named_children[0], scope, depth)
        if kind == "string":
            return Lit(_string(node), span)
        if kind == "template_string":
            if any(c.type == "template_substitution" for c in node.named_children):
                return Dyn(node.text.decode(), span)
            return Lit(_string(node), span)
        if kind == "number":
            written = node.text.decode().replace("_", "")
            try:
                return Lit(
                    int(written, 0)
                    if written.isdigit() or written[:2] in ("0x", "0o", "0b")
                    else float(written),
                    span,
                )
            except ValueError:
                return Dyn(written, span)
        if kind in ("true", "false"):
            return Lit(kind == "true", span)
        if kind in ("null", "undefined"):
            return Lit(None, span)
        if kind == "binary_expression" and node.child_by_field_name("operator").type == "+":
            left = self.value(node.child_by_field_name("left"), scope, depth)
            right = self.value(node.child_by_field_name("right"), scope, depth)
            if (
                isinstance(left, Lit)
                and isinstance(right, Lit)
                and {type(left.value), type(right.value)} == {str}
            ):
                return Lit(left.value + right.value, span)  # type: ignore[operator]
        if kind == "object":
            entries: list = []
            rest: list = []
            for child in node.named_children:
                if child.type == "pair":
                    key_node, item = child.child_by_field_name("key"), child.child_by_field_name("value")
                    entries.append(
                        (
                            self._key(key_node, scope, depth),
                            self.span(key_node),
                            self.value(item, scope, depth),
                        )
                    )
                elif child.type == "shorthand_property_identifier":
                    name = child.text.decode()
                    entries.append((name, self.span(child), self._name(name, child, scope, depth)))
                elif child.type == "spread_element" and child.named_children:
                    spread = self.value(child.named_children[0], scope, depth)
                    if isinstance(spread, Obj):
                        entries.extend(spread.entries)
                        rest.extend(spread.rest)
                    else:
                        rest.append(Dyn(child.text.decode(), self.span(child)))
            return Obj(entries, span, rest)
        if kind == "array":
            items: list = []
            rest = []
            for child in node.named_children:
                if child.type == "comment":
                    continue
                if child.type == "spread_element" and child.named_children:
                    spread = self.value(child.named_children[0], scope, depth)
                    if isinstance(spread, Arr):
                        items.extend(spread.items)
                    else:
                        rest.append(Dyn(child.text.decode(), self.span(child)))
                    continue
                items.append(self.value(child, scope, depth))
            return Arr(items, span, rest)
        if kind == "identifier":
            return self._name(node.text.decode(), node, scope, depth)
        if kind in ("call_expression", "new_expression"):
            function = node.child_by_field_name("function") or node.child_by_field_name("constructor")
            arguments = node.child_by_field_name("arguments")
            argument_nodes = [
                a for a in (arguments.named_children if arguments is not None else []) if a.type != "comment"
            ]
            callee = function.text.decode() if function is not None else ""
            last = callee.rsplit(".", 1)[-1]
            spread = any(a.type == "spread_element" for a in argument_nodes)
            if callee == "JSON.stringify" and argument_nodes:
                return self.value(argument_nodes[0], scope, depth)
            if last in CONSTRUCTORS and not spread:
                args = [self.value(a, scope, depth) for a in argument_nodes]
                return constructed(CONSTRUCTORS[last], args, {}, span, last)
            if function is not None and function.type == "identifier" and depth < MAX_FOLLOW:
                found = scope.lookup(callee)
                if found is not None and found[0] == "function" and found[1] is not None:
                    defined = found[2].functions[callee][0]
                    return self.value(found[1], self.scope_of(defined, found[2]), depth + 1)
        return Dyn(node.text.decode(), span)

    def _name(self, name: str, node: Any, scope: Scope, depth: int):
        from auditor.schema.code_values import MAX_FOLLOW, Dyn

        found = scope.lookup(name) if depth < MAX_FOLLOW else None
        if found is not None and found[0] == "value" and found[1] is not None:
            return self.value(found[1], found[2], depth + 1)
        return Dyn(name, self.span(node))

    def _key(self, node: Any, scope: Scope, depth: int):
        from auditor.schema.code_values import Dyn, Lit

        if node.type in ("property_identifier", "identifier", "private_property_identifier"):
            return node.text.decode()
        if node.type == "string":
            return _string(node)
        if node.type == "number":
            return node.text.decode()
        if node.type == "computed_property_name" and node.named_children:
            written = self.value(node.named_children[0], scope, depth)
            if isinstance(written, Lit) and isinstance(written.value, str):
                return written.value
        return Dyn(node.text.decode(), self.span(node))

    # ---- positions

    def span(self, node: Any) -> Span:
        (line, column), (end_line, end_column) = node.start_point, node.end_point
        return Span(line + 1, self._column(line, column), end_line + 1, self._column(end_line, end_column))

    def _column(self, row: int, offset: int) -> int:
        """tree-sitter's column (UTF-8 bytes) as a 1-based code-point column."""
        if 0 <= row < len(self.lines):
            return len(self.lines[row].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1
        return offset + 1


def _string(node: Any) -> str:
    """A string or template literal's value (its fragments, escapes decoded)."""
    parts = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(child.text.decode())
        elif child.type == "escape_sequence":
            parts.append(_unescape(child.text.decode()))
    return "".join(parts)


def _unescape(escape: str) -> str:
    body = escape[1:]
    if body[:1] in _ESCAPES and len(body) == 1:
        return _ESCAPES[body]
    if body[:1] == "u":
        digits = body[2:-1] if body[1:2] == "{" else body[1:]
        try:
            return chr(int(digits, 16))
        except ValueError:
            return escape
    if body[:1] == "x":
        try:
            return chr(int(body[1:], 16))
        except ValueError:
            return escape
    if body[:1] in ("\n", "\r"):  # a line continuation
        return ""
    return body

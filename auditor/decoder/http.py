"""The one HTTP client every server backend talks through (``verify --backend openai``, System One).

Built on httpcore2, the connection layer of httpx2 (the maintained httpx line that
huggingface_hub already depends on; its TLS defaults are httpx2's), with the policy in one place:

- the base URL is ``http`` or ``https`` with a host, a port in 1–65535 and no user, password,
  query or fragment (a key goes in an environment variable, never in the URL);
- redirects are followed only within the base URL's origin (scheme, host, port) and at most
  ``MAX_REDIRECTS`` times; a redirect to another origin is an error, so the key never leaves it;
- every answer is read as a stream and cut off at ``max_bytes`` (a ``Content-Length`` above it is
  refused before reading);
- every request has a deadline that holds for the whole request, headers and body together: each
  socket read and write waits at most the time left (a server that trickles one byte a second
  cannot stretch it), and the run as a whole may have a deadline too;
- connection errors and HTTP 429, 500, 502, 503, 504 are retried ``retries`` times with
  exponential backoff, waiting what ``Retry-After`` asks (seconds or an HTTP date) when it asks
  no more than ``retry_after_cap``;
- every failure is one ``HttpError`` line that names what failed and quotes at most
  ``EXCERPT_CHARS`` of the server's text, with the key (should a server echo it) masked.

The answer is parsed as JSON with bounded integers (``MAX_INT_DIGITS``) and nesting
(a ``RecursionError`` becomes an error line); what the JSON must look like is the caller's to
check (``auditor.decoder.answers``).
"""

from __future__ import annotations

import email.utils
import json
import queue
import re
import threading
import time
from dataclasses import dataclass
from datetime import UTC
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import httpcore2
import httpx2

from auditor.decoder.errors import DecoderError, ServerUnreachable
from auditor.shown import shorten

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_DEADLINE = 120.0
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_RETRIES = 3
DEFAULT_RETRY_AFTER_CAP = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
BACKOFF_FIRST = 0.5  # seconds before the first retry when the server gives no Retry-After
ERROR_BODY_BYTES = 4096  # read of an error answer, for its excerpt
EXCERPT_CHARS = 160
MAX_INT_DIGITS = 40  # an integer in an answer longer than this is refused, not parsed
KEY_CHARS = re.compile(r"[\x21-\x7e]+")  # what an API key may hold: visible ASCII (a header value)


class HttpError(DecoderError):
    """One line: what failed, the HTTP status (or None), and a short excerpt of the server's text."""

    def __init__(self, message: str, *, status: int | None = None, server_message: str | None = None):
        super().__init__(message)
        self.status = status
        self.server_message = server_message


class Unreachable(HttpError, ServerUnreachable):
    """The server could not be reached after the retries (no HTTP answer at all)."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def excerpt(text: str, limit: int = EXCERPT_CHARS, secret: str | None = None) -> str:
    """``text`` on one line, control characters dropped, cut to ``limit`` characters, ``secret`` masked."""
    if secret:
        text = text.replace(secret, "***")
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text[: limit * 4]).split())
    return shorten(flat, limit, total=len(text))


def parse_origin(url: str, what: str = "--base-url") -> tuple[Origin, str]:
    """The origin and path of a base URL, or an HttpError saying what is wrong with it.

    The port is read from the URL's text (``urllib`` would take 99999 modulo 65536 elsewhere),
    userinfo is refused (it would reach a DNS lookup and error messages), and so are query
    strings and fragments (the client appends paths).
    """
    shown = excerpt(url, 80)
    if not isinstance(url, str) or not url or any(not ch.isprintable() or ch.isspace() for ch in url):
        raise HttpError(f"{what} {shown!r}: a URL holds no spaces or control characters")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise HttpError(f"{what} {shown!r}: not a URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise HttpError(f"{what} {shown!r}: only http:// and https:// URLs are allowed")
    netloc = parts.netloc
    if "@" in netloc:
        raise HttpError(
            f"{what}: user or password in the URL is refused (it would be sent and logged); "
            "put the key in the environment variable named by --api-key-env"
        )
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        raise HttpError(f"{what} {shown!r}: a base URL takes no query string or fragment")
    match = re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[^:\[\]/]+)(?::(\d*))?", netloc)
    if not netloc or match is None:
        raise HttpError(f"{what} {shown!r}: no valid host")
    host, port_text = match.group(1), match.group(2)
    if port_text is not None:
        if not port_text or len(port_text) > 5 or not 1 <= int(port_text) <= 65535:
            raise HttpError(f"{what} {shown!r}: the port must be a number from 1 to 65535")
        port = int(port_text)
    else:
        port = 443 if scheme == "https" else 80
    return Origin(scheme, host.strip("[]").lower(), port), parts.path


def api_key_from_env(variable: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The API key held by environment variable ``variable`` (None when unset or empty).

    A key that could not go in an HTTP header as it is (a control character, a newline, a space,
    anything outside visible ASCII) is refused with a line that names the variable and the
    position, never the key.
    """
    import os

    if not variable:
        return None
    value = (os.environ if environ is None else environ).get(variable)
    if not value:
        return None
    if KEY_CHARS.fullmatch(value) is None:
        position = next(i for i, ch in enumerate(value) if KEY_CHARS.fullmatch(ch) is None)
        kind = (
            "a newline"
            if value[position] in "\r\n"
            else (
                "a control character"
                if not value[position].isprintable()
                else ("a space" if value[position].isspace() else "a character outside visible ASCII")
            )
        )
        raise HttpError(
            f"the API key in ${variable} holds {kind} at position {position + 1} of {len(value)}; "
            "an HTTP header cannot carry it (the key is not shown)"
        )
    from auditor import redaction

    redaction.register(value)  # masked in everything pcdlint prints or writes from now on
    return value


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` value asks for (delay-seconds or an HTTP date); None if unreadable."""
    if value is None:
        return None
    value = value.strip()
    if re.fullmatch(r"\d{1,10}(\.\d{1,6})?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


# -- the deadline every socket operation of a request honours ------------------------------------
_local = threading.local()


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore2.NetworkStream:
        inner = self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore2.ConnectTimeout))
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = self._inner.connect_tcp(
            host, port, _left(timeout, httpcore2.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore2.ConnectError("unix sockets are not used")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Connections:
    """At most ``size`` connections to one origin, each in its own httpcore2 connection pool (the
    core httpx2 sends through) on sockets that honour the request's deadline; a request takes
    one (waiting while all are busy) and gives it back.

    Why not one shared pool: httpcore2's pool matches every waiting request against every
    connection under one lock, work that grows with the connections and that every request
    repeats; with 64 requests in flight it cost about a fifth of the client's CPU per request
    (``benchmarks/eval_scale.py``). Handing out single-connection pools through a C queue keeps
    the same cap with no such search. Nor does the client go through ``httpx2.Client``: its
    request and response models, header merging and hooks cost about a third of a request's
    CPU, and this module does its own redirects, caps and headers anyway.

    ``tls``: whether the origin is https. Only then are the system's CA certificates loaded (a
    tenth of a second of every run's start-up); an http origin's connections get a context that
    verifies against no certificate at all, so should TLS ever be asked of them, they fail
    closed (redirects stay on the origin, so it never is)."""

    def __init__(self, size: int, tls: bool):
        import ssl

        self.ssl_context = httpx2.create_ssl_context() if tls else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._backend = _DeadlineBackend()
        self._free: queue.SimpleQueue[httpcore2.ConnectionPool | None] = queue.SimpleQueue()
        for _ in range(max(1, size)):
            self._free.put(None)  # made when first taken
        self._made: list[httpcore2.ConnectionPool] = []
        self._lock = threading.Lock()
        self.closed = False

    def take(self, wait: float | None) -> httpcore2.ConnectionPool:
        """A connection's pool, waiting at most ``wait`` seconds for one; ``queue.Empty`` past it."""
        pool = self._free.get(timeout=wait)
        if pool is None:
            pool = httpcore2.ConnectionPool(
                ssl_context=self.ssl_context,
                max_connections=1,
                max_keepalive_connections=1,
                network_backend=self._backend,
            )
            with self._lock:
                self._made.append(pool)
        return pool

    def give_back(self, pool: httpcore2.ConnectionPool) -> None:
        self._free.put(pool)

    def close(self) -> None:
        with self._lock:
            self.closed, made, self._made = True, self._made, []
        for pool in made:
            pool.close()


# the characters a request target keeps as they are; any other is percent-encoded (as httpx2 did)
_TARGET_SAFE = "/%:@!$&'()*+,;=-._~"


def _target(url: str) -> bytes:
    """The request target (path and query) of an absolute URL, percent-encoded as ASCII."""
    parts = urlsplit(url)
    target = quote(parts.path or "/", safe=_TARGET_SAFE)
    if parts.query:
        target += "?" + quote(parts.query, safe=_TARGET_SAFE + "?")
    return target.encode("ascii")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """An answer's object; one that repeats a key is refused (a reader would keep one of them)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        repeated = next(key for key, _value in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        from auditor.redaction import redact

        raise ValueError(f"an object repeats the key {excerpt(redact(repeated), 40)!r}")
    return out


def parse_json(data: bytes, what: str, secret: str | None = None) -> object:
    """JSON from an answer's bytes: strict UTF-8, integers of at most ``MAX_INT_DIGITS`` digits,
    no object that repeats a key."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpError(f"{what}: the answer is not UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(text, parse_int=_bounded_int, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise HttpError(f"{what}: the answer's JSON is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError and the integer guard
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise HttpError(f"{what}: the answer is not JSON ({reason}): {excerpt(text, 60, secret)!r}") from None


class HttpClient:
    """JSON over HTTP to one server, with the policy of this module (see its docstring).

    ``stats``: ``requests`` (answers received, retries included), ``retries``, ``redirects`` and
    ``by_status`` (count per HTTP status). Safe to share between threads: at most
    ``max_connections`` requests are in flight at once, each on its own kept-alive connection; a
    further one waits for a connection to come free (within its deadline).
    """

    def __init__(
        self,
        base_url: str | tuple[Origin, str],
        *,
        api_key: str | None = None,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_deadline: float = DEFAULT_READ_DEADLINE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        retries: int = DEFAULT_RETRIES,
        retry_after_cap: float = DEFAULT_RETRY_AFTER_CAP,
        run_deadline: float | None = None,
        max_connections: int = 16,
    ):
        # a URL as written, or its (origin, path) as `parse_origin` read it already
        self.origin, path = parse_origin(base_url) if isinstance(base_url, str) else base_url
        self.base_url = f"{self.origin}{path.rstrip('/')}"
        if api_key is not None and KEY_CHARS.fullmatch(api_key) is None:
            raise HttpError("the API key holds characters an HTTP header cannot carry (the key is not shown)")
        self._key = api_key or None
        from auditor import redaction

        redaction.register(self._key)
        self.read_deadline, self.max_bytes = read_deadline, max_bytes
        self.retries, self.retry_after_cap = max(0, retries), retry_after_cap
        self.run_deadline = run_deadline
        self._run_end = None if run_deadline is None else time.monotonic() + run_deadline
        self.stats: dict[str, Any] = {"requests": 0, "retries": 0, "redirects": 0, "by_status": {}}
        self._lock = threading.Lock()
        self._connections = _Connections(max_connections, tls=self.origin.scheme == "https")
        self._timeouts = {
            "timeout": {
                "connect": connect_timeout,
                "read": read_deadline,
                "write": read_deadline,
                "pool": read_deadline,
            }
        }
        try:  # a name's labels as DNS takes them (an ASCII one as it is)
            self._host = self.origin.host.encode("ascii" if self.origin.host.isascii() else "idna")
        except UnicodeError as exc:
            raise HttpError(
                f"--base-url: the host {excerpt(self.origin.host, 60)!r} is not a DNS name ({exc})"
            ) from None
        host = b"[" + self._host + b"]" if b":" in self._host else self._host
        if self.origin.port != (443 if self.origin.scheme == "https" else 80):
            host += b":%d" % self.origin.port
        self._headers = [
            (b"Host", host),
            (b"Accept", b"application/json"),
            (b"Accept-Encoding", b"identity"),
            (b"User-Agent", b"pcdlint"),
        ]
        self._json = [(b"Content-Type", b"application/json")]
        self._auth = [(b"Authorization", f"Bearer {self._key}".encode("ascii"))] if self._key else []

    def close(self) -> None:
        self._connections.close()

    def redact(self, text: str) -> str:
        """``text`` with the key masked: for anything built from a server's answer (a server may echo it)."""
        return text.replace(self._key, "***") if self._key else text

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public calls ----------------------------------------------------------------------
    def get_json(self, path: str, *, retry_server_errors: bool = True) -> object:
        """The JSON answer of ``GET base_url/path``.

        ``retry_server_errors=False``: an HTTP 500 is returned as an error at once (a server
        being probed for what it accepts may answer a refusal with 500); 429, 502, 503 and 504
        are still retried.
        """
        return self._request("GET", path, None, retry_server_errors)

    def post_json(self, path: str, body: object, *, retry_server_errors: bool = True) -> object:
        """The JSON answer of ``POST base_url/path`` with ``body`` as JSON (see ``get_json``)."""
        try:
            content = json.dumps(body, allow_nan=False, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise HttpError(f"POST {path}: the request body is not JSON ({exc})") from None
        return self._request("POST", path, content, retry_server_errors)

    def post_content(self, path: str, content: bytes, *, retry_server_errors: bool = True) -> object:
        """``post_json`` with the body already encoded as JSON (a caller that sends many bodies
        differing in one value encodes the rest once: ``SystemOneBackend.encoder``)."""
        return self._request("POST", path, content, retry_server_errors)

    # -- the policy ----------------------------------------------------------------------------
    def _count(self, key: str, status: int | None = None) -> None:
        with self._lock:
            self.stats[key] += 1
            if status is not None:
                self.stats["by_status"][status] = self.stats["by_status"].get(status, 0) + 1

    def _where(self, method: str, path: str) -> str:
        return f"{method} {self.base_url}/{path.lstrip('/')}"

    def _time_left(self, what: str) -> float | None:
        if self._run_end is None:
            return None
        left = self._run_end - time.monotonic()
        if left <= 0:
            raise HttpError(f"{what}: the run's deadline of {self.run_deadline:g} s passed (--run-timeout)")
        return left

    def _request(self, method: str, path: str, content: bytes | None, retry_server_errors: bool) -> object:
        if not isinstance(path, str) or "://" in path or path.startswith("//"):
            raise HttpError(f"{method} {excerpt(str(path), 60)!r}: a path under the base URL is expected")
        what = self._where(method, path)
        backoff = BACKOFF_FIRST
        retried = RETRY_STATUSES if retry_server_errors else RETRY_STATUSES - {500}
        for attempt in range(self.retries + 1):
            last = attempt == self.retries
            try:
                status, headers, data = self._exchange(
                    method, f"{self.base_url}/{path.lstrip('/')}", content, what
                )
            except (httpx2.TimeoutException, httpcore2.TimeoutException):
                raise HttpError(
                    f"{what}: no complete answer within the deadline of "
                    f"{self._deadline_seconds():g} s (--timeout)"
                ) from None
            except (httpx2.TransportError, httpcore2.NetworkError, httpcore2.ProtocolError, OSError) as exc:
                if last:
                    raise Unreachable(
                        f"{what}: cannot reach the server after {attempt + 1} tries "
                        f"({excerpt(type(exc).__name__ + ': ' + str(exc), 100, self._key)}); "
                        "is it running, and is --base-url right?"
                    ) from None
                self._wait(backoff, what)
                backoff *= 2
                continue
            if status in retried and not last:
                asked = retry_after_seconds(headers.get("retry-after"))
                if asked is not None and asked > self.retry_after_cap:
                    raise HttpError(
                        f"{what}: HTTP {status}, and the server asks to wait {asked:.0f} s "
                        f"(Retry-After), more than the cap of {self.retry_after_cap:g} s",
                        status=status,
                        server_message=self._server_text(data),
                    )
                self._wait(asked if asked is not None else min(backoff, self.retry_after_cap), what)
                backoff *= 2
                continue
            if status >= 400 or status in REDIRECT_STATUSES or status < 200:
                server = self._server_text(data)
                tries = f" after {attempt + 1} tries" if attempt else ""
                raise HttpError(
                    f"{what}: HTTP {status}{tries}" + (f": {server}" if server else ""),
                    status=status,
                    server_message=server,
                )
            return parse_json(data, what, self._key)
        raise AssertionError("unreachable")

    def _deadline_seconds(self) -> float:
        if self._run_end is not None and self.run_deadline is not None:
            return min(self.read_deadline, self.run_deadline)
        return self.read_deadline

    def _wait(self, seconds: float, what: str) -> None:
        left = self._time_left(what)
        if left is not None and seconds >= left:
            raise HttpError(
                f"{what}: a retry in {seconds:.1f} s would pass the run's deadline of "
                f"{self.run_deadline:g} s (--run-timeout)"
            )
        self._count("retries")
        time.sleep(max(0.0, seconds))

    def _server_text(self, data: bytes) -> str:
        text = data[:ERROR_BODY_BYTES].decode("utf-8", "replace")
        try:  # OpenAI-style {"error": {"message": ...}} or {"error": "..."}
            parsed = json.loads(text, parse_int=_bounded_int)
            error = parsed.get("error") if isinstance(parsed, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            if isinstance(message, str):
                text = message
        except (ValueError, RecursionError):
            pass
        return excerpt(text, EXCERPT_CHARS, self._key)

    def _exchange(
        self, method: str, url: str, content: bytes | None, what: str
    ) -> tuple[int, dict[str, str], bytes]:
        """One request (and its same-origin redirects) on one connection; the status, headers
        (lower-case names) and (capped) body."""
        if self._connections.closed:
            raise HttpError(f"{what}: the client is closed")
        left = self._time_left(what)
        try:
            pool = self._connections.take(
                self.read_deadline if left is None else min(left, self.read_deadline)
            )
        except queue.Empty:
            raise httpcore2.PoolTimeout("no connection came free within the deadline") from None
        try:
            for hop in range(MAX_REDIRECTS + 1):
                # the first hop is base_url + path (checked when the client was made); a
                # redirect's target was checked by _redirect
                target = self.origin if hop == 0 else parse_origin(url, "a redirect")[0]
                headers = self._headers if content is None else self._headers + self._json
                if self._auth and target == self.origin:
                    headers = headers + self._auth
                left = self._time_left(what)
                _local.deadline = time.monotonic() + (
                    self.read_deadline if left is None else min(left, self.read_deadline)
                )
                # a redirect stays on the origin (_redirect), so its host is the one encoded
                request_url = httpcore2.URL(
                    scheme=target.scheme.encode("ascii"),
                    host=self._host,
                    port=target.port,
                    target=_target(url),
                )
                try:
                    with pool.stream(
                        method, request_url, headers=headers, content=content, extensions=self._timeouts
                    ) as response:
                        status = response.status
                        self._count("requests", status)
                        answer = {
                            name.decode("latin-1").lower(): value.decode("latin-1")
                            for name, value in response.headers
                        }
                        location = answer.get("location")
                        if status in REDIRECT_STATUSES and location:
                            url = self._redirect(method, url, location, status, what)
                            continue
                        limit = self.max_bytes if 200 <= status < 300 else ERROR_BODY_BYTES
                        return status, answer, self._read(response, status, answer, limit, what)
                finally:
                    _local.deadline = None
        finally:
            self._connections.give_back(pool)
        raise HttpError(f"{what}: more than {MAX_REDIRECTS} redirects")

    def _redirect(self, method: str, url: str, location: str, status: int, what: str) -> str:
        target = urljoin(url, location)
        try:
            origin, _path = parse_origin(target, "redirect")
        except HttpError:
            raise HttpError(
                f"{what}: HTTP {status} redirects to {excerpt(location, 60)!r}, "
                "which is not an http(s) URL without credentials; not followed",
                status=status,
            ) from None
        if origin != self.origin:
            raise HttpError(
                f"{what}: HTTP {status} redirects to another origin ({origin}); not followed and "
                "the key is not sent there: set --base-url to the server's own address",
                status=status,
            )
        if method != "GET" and status in (301, 302, 303):
            raise HttpError(
                f"{what}: HTTP {status} redirects a {method} (it would turn into a GET); "
                "set --base-url to the final address",
                status=status,
            )
        self._count("redirects")
        return target

    def _read(
        self, response: httpcore2.Response, status: int, headers: dict[str, str], limit: int, what: str
    ) -> bytes:
        """The body, at most ``limit`` bytes: past it an answer is an error, an error answer is cut."""
        strict = 200 <= status < 300
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if strict and encoding not in ("", "identity"):
            raise HttpError(
                f"{what}: the answer is {excerpt(encoding, 20)}-encoded though the client asked for "
                "none (Accept-Encoding: identity); not read",
                status=status,
            )
        declared = headers.get("content-length", "")
        if strict and declared.isdigit() and len(declared) < 20 and int(declared) > limit:
            raise HttpError(
                f"{what}: the answer declares {int(declared)} bytes, more than the cap of "
                f"{limit} bytes (--max-response-bytes)",
                status=status,
            )
        chunks, total = [], 0
        for chunk in response.iter_stream():
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                if not strict:  # an error answer: its start is all the excerpt needs
                    break
                raise HttpError(
                    f"{what}: the answer passed the cap of {limit} bytes "
                    "(--max-response-bytes); not read further",
                    status=status,
                )
        return b"".join(chunks)[:limit]

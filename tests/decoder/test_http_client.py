"""The one HTTP client (auditor.decoder.http) in front of a misbehaving server on 127.0.0.1.

Each case asserts the client's behaviour: what it refuses, that the key never reaches another
origin or a message, and that a resource attack (an endless body, a trickle, endless 429s) ends
within a bound far below what the attack would take. The bounds are generous (this machine is
shared); they catch a hang or an unbounded read, not a slow run.
"""

from __future__ import annotations

import itertools
import resource
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from faultserver import FaultServer, Reply, json_reply

from auditor.decoder.http import HttpClient, HttpError, api_key_from_env, parse_origin, retry_after_seconds

KEY = "sk-test-SECRET-4d1f9a"
MODELS = '{"object": "list", "data": [{"id": "m", "object": "model"}]}'


def client(url: str, **kwargs) -> HttpClient:
    options = {
        "api_key": KEY,
        "connect_timeout": 2.0,
        "read_deadline": 5.0,
        "max_bytes": 1 << 20,
        "retries": 2,
        "retry_after_cap": 5.0,
        "run_deadline": None,
    }
    options.update(kwargs)
    return HttpClient(url, **options)


def one_line(error: HttpError) -> str:
    text = str(error)
    assert "\n" not in text and "\r" not in text and len(text) < 400, text
    assert KEY not in text
    return text


def refusal(reply: Reply) -> HttpError:
    """The error of ``GET models`` from a server that always answers ``reply``."""
    with (
        FaultServer(lambda seen: reply) as server,
        client(server.url) as http,
        pytest.raises(HttpError) as caught,
    ):
        http.get_json("models")
    return caught.value


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///etc/passwd", "only http:// and https://"),
        ("ftp://127.0.0.1/v1", "only http:// and https://"),
        ("http://user:hunter2@127.0.0.1:8000/v1", "user or password in the URL is refused"),
        ("http://127.0.0.1:99999/v1", "port must be a number from 1 to 65535"),
        ("http://127.0.0.1:0/v1", "port must be a number from 1 to 65535"),
        ("http://127.0.0.1:80a/v1", "no valid host"),
        ("http://127.0.0.1:8000/v1?key=x", "no query string or fragment"),
        ("http://127.0.0.1:8000/v1\nHost: evil", "no spaces or control characters"),
        ("http:///v1", "no valid host"),
    ],
)
def test_bad_base_urls_are_refused_in_one_line(url, says):
    with pytest.raises(HttpError) as caught:
        HttpClient(url, api_key=KEY)
    text = one_line(caught.value)
    assert says in text
    assert "hunter2" not in text


def test_origin_keeps_the_port_as_written():
    origin, path = parse_origin("http://127.0.0.1:65535/v1")
    assert (origin.port, path) == (65535, "/v1")
    assert parse_origin("https://[::1]/x")[0].port == 443


def test_a_redirect_to_another_origin_is_not_followed_and_the_key_stays_home():
    with FaultServer(lambda seen: json_reply(MODELS)) as elsewhere:

        def respond(seen):
            return Reply(307, {"Location": f"{elsewhere.url}/steal{seen.path}", "Content-Length": "0"})

        with FaultServer(respond) as home:
            for call in (
                lambda c: c.get_json("models"),
                lambda c: c.post_json("completions", {"prompt": "x"}),
            ):
                with client(home.url + "/v1") as http, pytest.raises(HttpError) as caught:
                    call(http)
                text = one_line(caught.value)
                assert "redirects to another origin" in text and caught.value.status == 307
            assert elsewhere.seen == []  # never contacted, so no key could reach it
            assert all(seen.headers.get("authorization") == f"Bearer {KEY}" for seen in home.seen)


@pytest.mark.parametrize(
    ("status", "location", "sent"),
    [(308, "/v1/models", "/v1/models"), (307, "/v1/modèls;v=2", "/v1/mod%C3%A8ls;v=2")],  # percent-encoded
)
def test_a_same_origin_redirect_is_followed_with_the_key(status, location, sent):
    def respond(seen):
        if seen.path == "/old/models":
            return Reply(status, {"Location": location, "Content-Length": "0"})
        return json_reply(MODELS)

    with FaultServer(respond) as home, client(home.url + "/old") as http:
        assert http.get_json("models")["data"][0]["id"] == "m"
        assert [seen.path for seen in home.seen] == ["/old/models", sent]
        assert home.seen[1].headers["authorization"] == f"Bearer {KEY}"
        assert http.stats["redirects"] == 1


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_the_request_names_its_host_and_port_and_sends_the_body_as_given(host):
    if ":" in host:
        import socket

        try:
            with socket.socket(socket.AF_INET6) as probe:
                probe.bind((host, 0))
        except OSError:
            pytest.skip("this machine has no IPv6 loopback")
    with (
        FaultServer(lambda seen: json_reply('{"ok": true}'), host=host) as server,
        client(server.url) as http,
    ):
        assert http.post_content("v1/systemone", b'{"state": "\xc3\xa9"}') == {"ok": True}
    (seen,) = server.seen
    shown = f"[{host}]" if ":" in host else host
    assert seen.headers["host"] == f"{shown}:{server.port}"
    assert seen.method == "POST" and seen.path == "/v1/systemone"
    assert seen.body == b'{"state": "\xc3\xa9"}' and seen.headers["content-length"] == str(len(seen.body))
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["accept-encoding"] == "identity"


def test_a_compressed_answer_the_client_did_not_ask_for_is_refused():
    gzipped = Reply(
        200,
        {"Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": "4"},
        b"\x1f\x8b\x08\x00",
    )
    assert "gzip-encoded though the client asked for none" in one_line(refusal(gzipped))


def test_requests_past_max_connections_wait_for_one():
    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def respond(seen):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return json_reply('{"ok": true}')

    with (
        FaultServer(respond) as server,
        client(server.url, max_connections=2) as http,
        ThreadPoolExecutor(6) as pool,
    ):
        answers = list(pool.map(lambda _: http.post_content("v1/x", b"{}"), range(12)))
    assert answers == [{"ok": True}] * 12 and len(server.seen) == 12
    assert state["most"] <= 2  # six threads, never more than two requests at the server at once


def test_a_redirect_loop_ends():
    home = FaultServer(lambda seen: Reply(302, {"Location": seen.path, "Content-Length": "0"}))
    with home, client(home.url) as http, pytest.raises(HttpError) as caught:
        http.get_json("models")
    assert "more than 5 redirects" in one_line(caught.value)
    assert len(home.seen) == 6


def _endless(chunk: bytes, total: int):
    """At most ``total`` bytes (1.6 GB in the test): bounded even if the client never stopped."""
    for _ in range(total // len(chunk)):
        yield chunk


def test_a_huge_body_is_cut_at_the_cap_with_memory_bounded():
    chunk = b"[" * (1 << 20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with FaultServer(
        lambda seen: Reply(200, {"Content-Type": "application/json"}, _endless(chunk, 1_600_000_000))
    ) as server:
        started = time.monotonic()
        with client(server.url, max_bytes=4 << 20) as http, pytest.raises(HttpError) as caught:
            http.get_json("models")
        elapsed = time.monotonic() - started
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert "passed the cap of 4194304 bytes" in one_line(caught.value)
    assert grown_mib < 200 and elapsed < 60


def test_a_declared_huge_body_is_refused_before_reading():
    reply = Reply(200, {"Content-Length": "1600000000"}, _endless(b"x" * 65536, 1_600_000_000))
    assert "declares 1600000000 bytes, more than the cap" in one_line(refusal(reply))


def test_a_trickling_body_is_bounded_by_the_request_deadline():
    trickle = Reply(200, {"Content-Type": "application/json"}, itertools.repeat(b" ", 1200), pause=0.05)
    with FaultServer(lambda seen: trickle) as server:
        started = time.monotonic()
        with client(server.url, read_deadline=1.0) as http, pytest.raises(HttpError) as caught:
            http.get_json("models")
        elapsed = time.monotonic() - started
    assert "no complete answer within the deadline of 1 s" in one_line(caught.value)
    assert elapsed < 30  # the trickle would last 60 s; each read would succeed within a per-read timeout


def test_trickling_headers_are_bounded_by_the_request_deadline():
    head = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"a" * 1200 + b"\r\n\r\n"
    with FaultServer(lambda seen: Reply(raw_head=head, pause=0.05)) as server:
        started = time.monotonic()
        with client(server.url, read_deadline=1.0) as http, pytest.raises(HttpError) as caught:
            http.get_json("models")
        elapsed = time.monotonic() - started
    assert "deadline" in one_line(caught.value) and elapsed < 30  # the trickle would last 60 s


def test_retry_after_seconds_is_honoured():
    def respond(seen):
        if len(server.seen) < 3:
            return json_reply('{"error": {"message": "busy"}}', 503, **{"Retry-After": "1"})
        return json_reply(MODELS)

    with FaultServer(respond) as server, client(server.url, retries=3) as http:
        assert http.get_json("models")["object"] == "list"
    gaps = [b.at - a.at for a, b in itertools.pairwise(server.seen)]
    assert len(gaps) == 2 and all(gap >= 0.95 for gap in gaps), gaps
    assert http.stats["retries"] == 2 and http.stats["by_status"] == {503: 2, 200: 1}


def test_retry_after_http_date_is_honoured():
    import email.utils

    def respond(seen):
        if len(server.seen) == 1:
            when = email.utils.formatdate(time.time() + 2, usegmt=True)
            return json_reply("{}", 429, **{"Retry-After": when})
        return json_reply(MODELS)

    with FaultServer(respond) as server, client(server.url) as http:
        http.get_json("models")
    assert server.seen[1].at - server.seen[0].at >= 0.95  # an HTTP date has whole seconds


def test_retry_after_over_the_cap_gives_up_at_once():
    server = FaultServer(lambda seen: json_reply("{}", 429, **{"Retry-After": "3600"}))
    with server, client(server.url, retries=10) as http, pytest.raises(HttpError) as caught:
        http.get_json("models")
    assert "asks to wait 3600 s (Retry-After), more than the cap of 5 s" in one_line(caught.value)
    assert len(server.seen) == 1


def test_endless_429_is_bounded_by_the_retries():
    server = FaultServer(lambda seen: json_reply("{}", 429, **{"Retry-After": "0"}))
    with server, client(server.url, retries=10) as http, pytest.raises(HttpError) as caught:
        http.get_json("models")
    assert "HTTP 429 after 11 tries" in one_line(caught.value) and caught.value.status == 429
    assert len(server.seen) == 11


def test_endless_429_is_bounded_by_the_run_deadline():
    with FaultServer(lambda seen: json_reply("{}", 429, **{"Retry-After": "1"})) as server:
        started = time.monotonic()
        with client(server.url, retries=10, run_deadline=2.5) as http, pytest.raises(HttpError) as caught:
            http.get_json("models")
        elapsed = time.monotonic() - started
    assert "--run-timeout" in one_line(caught.value)
    assert len(server.seen) <= 3 and elapsed < 20  # retries=10 with Retry-After 1 would take 10 s or more


def test_backoff_without_retry_after_doubles():
    server = FaultServer(lambda seen: json_reply("{}", 502))
    with server, client(server.url, retries=2) as http, pytest.raises(HttpError):
        http.get_json("models")
    gaps = [b.at - a.at for a, b in itertools.pairwise(server.seen)]
    assert gaps[0] >= 0.45 and gaps[1] >= 0.95, gaps


def test_a_refused_connection_is_retried_then_one_line():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with client(f"http://127.0.0.1:{port}/v1", retries=1) as http, pytest.raises(HttpError) as caught:
        http.get_json("models")
    assert "cannot reach the server after 2 tries" in one_line(caught.value)
    assert http.stats["retries"] == 1


def test_a_server_that_echoes_the_key_does_not_get_it_printed():
    echo = json_reply('{"error": {"message": "bad key ' + KEY + '"}}', 401)
    with (
        FaultServer(lambda seen: echo) as server,
        client(server.url) as http,
        pytest.raises(HttpError) as caught,
    ):
        http.get_json("models")
    text = one_line(caught.value)
    assert "HTTP 401: bad key ***" in text and caught.value.server_message == "bad key ***"


def test_a_non_json_answer_that_echoes_the_key_does_not_get_it_printed():
    server = FaultServer(lambda seen: json_reply(f"<html>your key {KEY}</html>"))
    with server, client(server.url) as http, pytest.raises(HttpError) as caught:
        http.get_json("models")
    assert "your key ***" in one_line(caught.value)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"data": "\xff\xfe"}', "not UTF-8"),
        (b'{"n": ' + b"9" * 5000 + b"}", "an integer of 5000 digits"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b"<html>oops</html>", "not JSON"),
        (b"", "not JSON"),
    ],
)
def test_an_answer_that_is_not_json_is_one_line(body, says):
    server = FaultServer(lambda seen: json_reply(body))
    with server, client(server.url) as http, pytest.raises(HttpError) as caught:
        http.post_json("completions", {"prompt": "x"})
    assert says in one_line(caught.value)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("sk-abc\nX-Injected: 1", "a newline at position 7"),
        ("sk-abc\x00def", "a control character at position 7"),
        ("sk-abc def", "a space at position 7"),
        ("sk-ab€", "outside visible ASCII at position 6"),
        ("sk-abc\u2028", "at position 7"),
    ],
)
def test_a_key_that_cannot_be_a_header_is_refused_without_printing_it(value, says):
    with pytest.raises(HttpError) as caught:
        api_key_from_env("PCDLINT_TEST_KEY", {"PCDLINT_TEST_KEY": value})
    text = str(caught.value)
    assert says in text and "$PCDLINT_TEST_KEY" in text
    assert "sk-ab" not in text and "\n" not in text


def test_a_key_from_the_environment():
    assert api_key_from_env("K", {"K": KEY}) == KEY
    assert api_key_from_env("K", {"K": ""}) is None and api_key_from_env("K", {}) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("3", 3.0),
        (" 0 ", 0.0),
        ("1.5", 1.5),
        ("soon", None),
        ("-1", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
    ],
)
def test_retry_after_values(value, seconds):
    assert retry_after_seconds(value) == seconds


def test_tls_trust_is_loaded_for_an_https_origin_only_and_an_http_one_fails_closed():
    """An http origin's client never needs TLS (redirects stay on the origin), so it skips
    loading the CA certificates; its context still verifies, against no certificate at all."""
    import ssl

    def context(url: str) -> ssl.SSLContext:
        return HttpClient(url)._connections.ssl_context  # type: ignore[attr-defined]

    plain, secure = context("http://127.0.0.1:9"), context("https://127.0.0.1:9")
    for made in (plain, secure):
        assert made.verify_mode == ssl.CERT_REQUIRED and made.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0
    assert secure.cert_store_stats()["x509_ca"] > 0

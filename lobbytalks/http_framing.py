"""What ``lobbytalks serve`` accepts as an HTTP request before the app sees it: waitress'
parser with the body limit applied as soon as a length is announced and the framings RFC 9112
refuses refused, and what waitress refuses answered in the API's JSON envelope."""
from __future__ import annotations

import re
import time

import orjson
from waitress.parser import HTTPRequestParser, ParsingError, split_uri
from waitress.task import ErrorTask
from waitress.utilities import BadRequest, RequestEntityTooLarge

from . import mcp
from .errors import UNAVAILABLE_RETRY_AFTER, ApiError
from .guards import LARGEST_BODY_LIMIT, SECURITY_HEADERS

START_BYTES = 512
_TRANSFER_ENCODING = re.compile(rb"(?im)^transfer-encoding:")
# The request line and headers together (waitress allows 256 KiB): every query parameter
# and cookie costs the app time to parse, so a 256 KiB query string of 30,000 parameters
# took ~275 ms to refuse. 64 KiB is eight times what common proxies pass in front of it.
MAX_REQUEST_HEADER_BYTES = 64 * 1024


class BoundedRequest(HTTPRequestParser):
    """A request parser that stops at the body limit instead of failing with waitress'
    plain-text 413 (which, for a Content-Length body, it sends only after reading it)."""

    body_refused = False
    start = b""  # the first bytes received: the request line, kept for the refusal's shape

    def __init__(self, adj) -> None:
        super().__init__(adj)
        self.started = time.time()  # the clock waitress' maintenance() is given
        self.arrived = 0  # bytes of it read so far

    def parse_header(self, header_plus: bytes) -> None:
        """waitress' parsing, refusing framings it would otherwise accept (RFC 9112):
        Content-Length beside a chunked body, which a proxy framing by the length would
        split elsewhere (the root of request smuggling), a Transfer-Encoding that does not
        end in chunked (an empty one too), more than one Host, an HTTP/1.1
        request without one, a version other than 1.x, and any Transfer-Encoding on
        HTTP/1.0, where waitress ignores it and frames by Content-Length (RFC 9112 6.1 calls
        that framing faulty: a proxy framing by the coding would split the stream elsewhere).

        A request target in absolute form names the host the request is for, and RFC 9112
        3.2.2 has it replace the Host header: the loopback check and the links of the page
        then judge and use the same name."""
        try:
            super().parse_header(header_plus)
        except ValueError:  # int() of a Content-Length past 4,300 digits: no error it catches
            raise ParsingError("Content-Length is not a number of bytes") from None
        if self.chunked and "CONTENT_LENGTH" in self.headers:
            raise ParsingError("Content-Length and Transfer-Encoding together")
        if "," in self.headers.get("HOST", ""):  # waitress joins repeated headers with ", "
            raise ParsingError("more than one Host header")
        if self.version == "1.1" and "HOST" not in self.headers:
            raise ParsingError("HTTP/1.1 request without a Host header")
        if not self.version.startswith("1."):  # waitress would answer HTTP/2.0 as 1.0
            raise ParsingError(f"HTTP/{self.version[:8]} is not spoken here")
        if "TRANSFER_ENCODING" in self.headers:  # waitress takes it out of 1.1 requests only
            raise ParsingError("Transfer-Encoding in an HTTP/1.0 request")
        if not self.chunked and _TRANSFER_ENCODING.search(header_plus):
            # empty, or only commas: waitress dropped it and framed by Content-Length, where
            # RFC 9112 6.3 has a coding that does not end in chunked refused
            raise ParsingError("Transfer-Encoding without chunked as its last coding")
        if self.proxy_netloc:
            self.headers["HOST"] = self.proxy_netloc

    def received(self, data: bytes) -> int:
        if len(self.start) < START_BYTES:
            self.start += data[:START_BYTES - len(self.start)]
        consumed = super().received(data)
        self.arrived += consumed
        if self.body_rcv is None and not self.completed and b"\n\n" in self.header_plus:
            # Headers ended with bare line feeds: waitress waits for CRLF CRLF, which will
            # never come, until the request times out. Say so at once instead.
            self.error = BadRequest("header lines must end with CRLF")
            self.completed = True
            return consumed
        # (also once the request is complete: a body over the limit that came in whole,
        # in one read, was passed on, and the connection stayed open after its 413)
        if isinstance(self.error, RequestEntityTooLarge) or self._announces_too_much():
            self.error = None
            self.body_refused = self.completed = True
            self.expect_continue = False  # no "100 Continue": the body is not wanted
        return consumed

    def _announces_too_much(self) -> bool:
        """A Content-Length over the largest body, or a chunked body whose chunks, with
        the size line of the one under way, add up to more: counted as decoded, so that
        a body within the limit is not refused for being sent in small chunks."""
        if not self.headers_finished:
            return False
        if self.chunked:
            receiver = self.body_rcv
            return len(receiver) + receiver.chunk_remainder > LARGEST_BODY_LIMIT
        return self.content_length > LARGEST_BODY_LIMIT


def requested_path(request: "BoundedRequest") -> str:
    """The path of the request line as far as it was read, as the app would route it
    (percent-decoded, the path of an absolute target): "" when there is none. Read from the
    bytes received: for headers past their limit waitress parses a stand-in line of its own."""
    line = request.start.lstrip(b"\r\n").split(b"\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) < 2:
        return ""
    try:
        return split_uri(parts[1])[2]
    except ParsingError:
        return ""


class JsonErrorTask(ErrorTask):
    """What waitress refuses before the app sees a request (a malformed request line or
    header, a Content-Length of -1, headers past their limit, an unknown
    Transfer-Encoding) is answered in the API's JSON envelope (a JSON-RPC error on the MCP
    path), with the security headers every response carries, instead of waitress' plain
    text, and with a status from the contract's list: waitress' 501 for a transfer coding
    it does not know is the request's fault, 400 invalid_request (no input earns a 5xx),
    and its 431 for headers past their limit is 413 payload_too_large. Its 500, for an
    exception that escaped the app (its error page failing too), is the server's fault:
    503 service_unavailable, never blamed on the request."""

    def execute(self) -> None:
        refusal = self.request.error
        status, reason = refusal.code, refusal.reason
        if status == 500:
            error = ApiError("service_unavailable", retry_after=UNAVAILABLE_RETRY_AFTER)
            return self._answer(error, error.status, "Service Unavailable")
        if status >= 500:  # an unknown Transfer-Encoding (501): the request is at fault
            status, reason = 400, "Bad Request"
        if status == 431:
            status, reason = 413, "Content Too Large"
        if refusal.code == 431:
            message = f"请求行和请求头合计超过 {MAX_REQUEST_HEADER_BYTES // 1024} KiB"
        else:
            detail = f"{refusal.reason}: {refusal.body}" if refusal.body else refusal.reason
            message = f"HTTP 请求无法解析：{detail[:200]}"
        self._answer(ApiError("payload_too_large" if status == 413 else "invalid_request",
                              message, status=status), status, reason)

    def _answer(self, error: ApiError, status: int, reason: str) -> None:
        body = orjson.dumps(mcp.transport_error_body(None, error)
                            if requested_path(self.request) == mcp.PATH
                            else error.external_body())
        self.status = f"{status} {reason}"
        self.response_headers.extend([
            ("Content-Type", "application/json"), ("Cache-Control", "no-store"),
            *SECURITY_HEADERS.items()])
        self.response_headers.extend(error.headers().items())
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)

"""A hostile HTTP server for the integration tests: every route misbehaves in its own way.

Started by HostileTests.swift as `python3 hostile_server.py`; it listens on 127.0.0.1 (an ephemeral
port, printed as the first line of stdout) and exits when its stdin closes (the test process ended) or
after 10 minutes, whichever comes first. Nothing leaves the loopback.
"""
import asyncio
import gzip
import sys

CRLF = b"\r\n"


def head(status, headers=(), reason=b"X"):
    lines = [b"HTTP/1.1 %d %s" % (status, reason)] + [b"%s: %s" % (k, v) for k, v in headers]
    return CRLF.join(lines) + CRLF + CRLF


async def forever(writer):
    """Keeps the connection open without sending anything until the client leaves."""
    try:
        while not writer.is_closing():
            await asyncio.sleep(0.2)
            if writer.transport.is_closing():
                return
    except (ConnectionError, asyncio.CancelledError):
        return


async def handle(reader, writer):
    try:
        request_line = await reader.readline()
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
        parts = request_line.split()
        path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
        await ROUTES.get(path.split("?")[0], not_found)(writer, path)
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def not_found(w, path):
    w.write(head(404, [(b"Content-Length", b"0")]))
    await w.drain()


async def slow_headers(w, path):
    await forever(w)


async def trickle(w, path):
    w.write(head(200, [(b"Content-Length", b"1000")]))
    await w.drain()
    for _ in range(1000):
        w.write(b"x")
        await w.drain()
        await asyncio.sleep(0.5)


async def endless_continue(w, path):
    while True:
        w.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await w.drain()
        await asyncio.sleep(0.2)


async def basic_401(w, path):
    body = b'{"error":"who are you"}'
    w.write(head(401, [(b"WWW-Authenticate", b'Basic realm="hostile"'), (b"Content-Length", b"%d" % len(body))]) + body)
    await w.drain()
    await forever(w)


async def digest_401(w, path):
    w.write(head(401, [(b"WWW-Authenticate", b'Digest realm="hostile", nonce="abc", qop="auth"'), (b"Content-Length", b"0")]))
    await w.drain()
    await forever(w)


async def no_status_line(w, path):
    w.write(b"hello, this is not HTTP\r\n\r\n")
    await w.drain()


async def bad_content_length(w, path):
    w.write(head(200, [(b"Content-Length", b"abc")]) + b"body")
    await w.drain()


async def short_body_close(w, path):
    w.write(head(200, [(b"Content-Length", b"100")]) + b"0123456789")
    await w.drain()


async def truncated_chunked_close(w, path):
    w.write(head(200, [(b"Transfer-Encoding", b"chunked")]) + b"10\r\n0123")
    await w.drain()


async def truncated_chunked_hang(w, path):
    w.write(head(200, [(b"Transfer-Encoding", b"chunked")]) + b"10\r\n0123")
    await w.drain()
    await forever(w)


async def huge_header(w, path):
    w.write(head(200, [(b"X-Huge", b"a" * (4 * 1024 * 1024)), (b"Content-Length", b"0")]))
    await w.drain()


async def many_headers(w, path):
    headers = [(b"X-H%d" % i, b"v") for i in range(100_000)] + [(b"Content-Length", b"0")]
    w.write(head(200, headers))
    await w.drain()


async def redirect_loop(w, path):
    w.write(head(302, [(b"Location", b"/redirect-loop"), (b"Content-Length", b"0")]))
    await w.drain()


async def huge_body(w, path):
    """Declares 1 GiB and sends it in 1 MiB writes, as fast as the client reads."""
    size = 1 << 30
    w.write(head(200, [(b"Content-Length", b"%d" % size), (b"Content-Type", b"application/octet-stream")]))
    chunk = b"\0" * (1 << 20)
    for _ in range(size >> 20):
        w.write(chunk)
        await w.drain()


async def huge_chunked(w, path):
    """Sends 1 GiB in 1 MiB chunks without declaring a length, as fast as the client reads."""
    w.write(head(200, [(b"Transfer-Encoding", b"chunked"), (b"Content-Type", b"application/octet-stream")]))
    chunk = b"%x\r\n" % (1 << 20) + b"\0" * (1 << 20) + b"\r\n"
    for _ in range(1 << 10):
        w.write(chunk)
        await w.drain()
    w.write(b"0\r\n\r\n")
    await w.drain()


GZIP_BOMB = None


async def gzip_bomb(w, path):
    """About 100 KB on the wire that inflate to 100 MB."""
    global GZIP_BOMB
    if GZIP_BOMB is None:
        GZIP_BOMB = gzip.compress(b"\0" * 100_000_000, compresslevel=9)
    w.write(head(200, [(b"Content-Encoding", b"gzip"), (b"Content-Type", b"application/json"),
                       (b"Content-Length", b"%d" % len(GZIP_BOMB))]) + GZIP_BOMB)
    await w.drain()


def redirect_to(location):
    async def route(w, path):
        w.write(head(302, [(b"Location", location), (b"Content-Length", b"0")]))
        await w.drain()
    return route


ROUTES = {
    "/slow-headers": slow_headers,
    "/trickle": trickle,
    "/continue": endless_continue,
    "/basic-401": basic_401,
    "/digest-401": digest_401,
    "/no-status-line": no_status_line,
    "/bad-content-length": bad_content_length,
    "/short-body": short_body_close,
    "/truncated-chunked-close": truncated_chunked_close,
    "/truncated-chunked-hang": truncated_chunked_hang,
    "/huge-header": huge_header,
    "/many-headers": many_headers,
    "/redirect-loop": redirect_loop,
    "/gzip-bomb": gzip_bomb,
    "/huge-body": huge_body,
    "/huge-chunked": huge_chunked,
    "/redirect-file": redirect_to(b"file:///etc/passwd"),
    "/redirect-data": redirect_to(b"data:text/plain,hello"),
    "/redirect-ftp": redirect_to(b"ftp://127.0.0.1:1/x"),
}


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    loop = asyncio.get_running_loop()
    stdin_closed = loop.run_in_executor(None, sys.stdin.read)
    async with server:
        await asyncio.wait([asyncio.ensure_future(stdin_closed), asyncio.ensure_future(asyncio.sleep(600))],
                           return_when=asyncio.FIRST_COMPLETED)


if __name__ == "__main__":
    asyncio.run(main())

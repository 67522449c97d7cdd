"""A hostile HTTP server for the integration tests: every route misbehaves in its own way.

Started by HostileTests.swift as `python3 hostile_server.py`; it listens on 127.0.0.1 (an ephemeral
port, printed as the first line of stdout) and exits when its stdin closes (the test process ended) or
after 10 minutes, whichever comes first. Nothing leaves the loopback.
"""
import asyncio
import ctypes
import gzip
import struct
import sys
import zlib

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


async def read_head(reader):
    """The request line and the header fields (names lowercased) of the next request."""
    request_line = await reader.readline()
    fields = {}
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        fields[name.strip().lower()] = value.strip()
    return request_line, fields


async def read_body(reader, fields):
    """The request's body: chunked (RFC 9112 section 7.1) or of its Content-Length."""
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int((await reader.readline()).split(b";")[0].strip(), 16)
            body += (await reader.readexactly(size + 2))[:size]
            if size == 0:
                return bytes(body)
    return await reader.readexactly(int(fields.get("content-length", "0")))


async def dies_after_body(reader, writer, request_line, fields):
    """`/dies-after-body`: a GET is answered and its connection kept; a PUT that follows it on that connection has
    its body read whole, then the connection is closed without an answer (a reused connection that died: libcurl
    sends the request again, on a new one); a PUT that opens its connection is answered `{"size": N}`, the size of
    the body it carried."""
    reused = False
    while request_line:
        body = await read_body(reader, fields)
        if request_line.startswith(b"GET"):
            writer.write(head(200, [(b"Content-Length", b"2")]) + b"ok")
        elif reused:
            return
        else:
            answer = b'{"size":%d}' % len(body)
            writer.write(head(200, [(b"Content-Length", b"%d" % len(answer)), (b"Content-Type", b"application/json")]) + answer)
        await writer.drain()
        reused = True
        request_line, fields = await read_head(reader)


async def dies_mid_body(reader, writer, request_line, fields):
    """`/dies-mid-body`: as `/dies-after-body`, but the reused connection is reset (closed with unread bytes: RST)
    after 1 MiB of the PUT's body was read, while the client is still sending it (libcurl then sees the reset on a
    receive, and sends the request again on a new connection, from where the body's stream is)."""
    reused = False
    while request_line:
        if request_line.startswith(b"GET"):
            await read_body(reader, fields)
            writer.write(head(200, [(b"Content-Length", b"2")]) + b"ok")
        elif reused:
            await reader.readexactly(1 << 20)
            writer.transport.pause_reading()
            await asyncio.sleep(0.5)   # the client's buffers fill: it waits to send more when the reset comes
            writer.transport.abort()
            return
        else:
            body = await read_body(reader, fields)
            answer = b'{"size":%d}' % len(body)
            writer.write(head(200, [(b"Content-Length", b"%d" % len(answer)), (b"Content-Type", b"application/json")]) + answer)
        await writer.drain()
        reused = True
        request_line, fields = await read_head(reader)


async def handle(reader, writer):
    try:
        request_line, fields = await read_head(reader)
        parts = request_line.split()
        path = parts[1].decode("latin-1") if len(parts) > 1 else "/"
        if path == "/dies-after-body":
            await dies_after_body(reader, writer, request_line, fields)
            return
        if path == "/dies-mid-body":
            await dies_mid_body(reader, writer, request_line, fields)
            return
        await ROUTES.get(path.split("?")[0], not_found)(writer, path)
    except (ConnectionError, asyncio.CancelledError, asyncio.IncompleteReadError, ValueError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def not_found(w, path):
    w.write(head(404, [(b"Content-Length", b"0")]))
    await w.drain()


async def small(w, path):
    body = b'{"ok":true}'
    w.write(head(200, [(b"Content-Length", b"%d" % len(body)), (b"Content-Type", b"application/json")]) + body)
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


async def conflicting_length(w, path):
    # Two Content-Length lines that disagree (RFC 9112 §6.3 (5)): URLSession joins them as "77, 5".
    w.write(head(200, [(b"Content-Length", b"77"), (b"Content-Length", b"5")]) + b"hello")
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


async def huge_close(w, path):
    """Sends 1 GiB without a length, delimited by closing the connection, as fast as the client reads."""
    w.write(head(200, [(b"Connection", b"close"), (b"Content-Type", b"application/octet-stream")]))
    chunk = b"\0" * (1 << 20)
    for _ in range(1 << 10):
        w.write(chunk)
        await w.drain()


async def huge_declared(w, path):
    """Declares 10 GiB, sends 1 GiB of it as fast as the client reads, then holds the connection open: the
    client must stop at the headers. `/huge-declared-all` sends all 10 GiB (not in CI: it measures how long
    URLSession takes to act on a cancel while bytes keep coming; see Docs/Limits.md)."""
    w.write(head(200, [(b"Content-Length", b"%d" % (10 << 30)), (b"Content-Type", b"application/octet-stream")]))
    chunk = b"\0" * (1 << 20)
    for _ in range((10 << 10) if path == "/huge-declared-all" else (1 << 10)):
        w.write(chunk)
        await w.drain()
    await forever(w)


# Bombs: 2 GiB of zeros in each content coding libcurl decodes here. Made once per server, cheaply.
BOMB_SIZE = 2 << 30
BOMBS = {}


def deflate_zeros(wbits, trailer):
    """2 GiB of zeros as a zlib (wbits 15) or gzip (wbits 31) stream of about 2 MB, in 0.3 s: each 16 MiB of
    zeros is compressed after a full flush, which resets the compressor, so every piece after the first is
    the same bytes and is compressed once. `trailer` is the stream's check value for the whole 2 GiB."""
    piece = b"\0" * (16 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    first = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(piece) + compressor.flush(zlib.Z_FULL_FLUSH)
    return first + repeated * (BOMB_SIZE // len(piece) - 1) + b"\x03\x00" + trailer   # an empty final block, then the check


def gzip_zeros():
    return deflate_zeros(31, struct.pack("<II", 0x4DBDF21C, BOMB_SIZE & 0xFFFFFFFF))   # CRC-32 of 2 GiB of zeros, size mod 2^32


def zlib_zeros():
    return deflate_zeros(15, struct.pack(">I", ((BOMB_SIZE % 65521) << 16) | 1))   # Adler-32 of 2 GiB of zeros


def zstd_zeros(size=BOMB_SIZE):
    """A zstd frame of RLE blocks, each 128 KiB of zeros in 4 bytes: 64 KiB for 2 GiB."""
    block = 128 << 10
    count = size // block
    frame = [struct.pack("<I", 0xFD2FB528), bytes([0x00, (17 - 10) << 3])]   # no content size; a 128 KiB window
    for index in range(count):
        header = (1 if index == count - 1 else 0) | (1 << 1) | (block << 3)   # last?, RLE, size
        frame.append(struct.pack("<I", header)[:3] + b"\0")
    return b"".join(frame)


def brotli_zeros():
    """Brotli at quality 1 through libbrotlienc (installed with libcurl, which decodes br here): about
    400 KB in 0.5 s."""
    lib = ctypes.CDLL("libbrotlienc.so.1")
    lib.BrotliEncoderCreateInstance.restype = ctypes.c_void_p
    lib.BrotliEncoderCreateInstance.argtypes = [ctypes.c_void_p] * 3
    lib.BrotliEncoderSetParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    size_p, void_pp = ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p)
    lib.BrotliEncoderCompressStream.argtypes = [ctypes.c_void_p, ctypes.c_int, size_p, void_pp, size_p, void_pp, ctypes.c_void_p]
    lib.BrotliEncoderHasMoreOutput.argtypes = [ctypes.c_void_p]
    lib.BrotliEncoderIsFinished.argtypes = [ctypes.c_void_p]
    lib.BrotliEncoderDestroyInstance.argtypes = [ctypes.c_void_p]
    state = lib.BrotliEncoderCreateInstance(None, None, None)
    lib.BrotliEncoderSetParameter(state, 1, 1)    # BROTLI_PARAM_QUALITY
    lib.BrotliEncoderSetParameter(state, 2, 24)   # BROTLI_PARAM_LGWIN
    piece = ctypes.create_string_buffer(16 << 20)
    output = ctypes.create_string_buffer(1 << 20)
    parts = []

    def run(operation, address, count):   # 0: BROTLI_OPERATION_PROCESS, 2: BROTLI_OPERATION_FINISH
        available_in, next_in = ctypes.c_size_t(count), ctypes.c_void_p(address)
        while True:
            available_out, next_out = ctypes.c_size_t(len(output)), ctypes.c_void_p(ctypes.addressof(output))
            if not lib.BrotliEncoderCompressStream(state, operation, ctypes.byref(available_in), ctypes.byref(next_in),
                                                   ctypes.byref(available_out), ctypes.byref(next_out), None):
                raise RuntimeError("brotli failed")
            parts.append(output.raw[:len(output) - available_out.value])
            if available_in.value == 0 and not lib.BrotliEncoderHasMoreOutput(state) and (
                    operation != 2 or lib.BrotliEncoderIsFinished(state)):
                return

    for _ in range(BOMB_SIZE // len(piece)):
        run(0, ctypes.addressof(piece), len(piece))
    run(2, 0, 0)
    lib.BrotliEncoderDestroyInstance(state)
    return b"".join(parts)


def bomb(encoding, make):
    async def route(w, path):
        if path not in BOMBS:
            BOMBS[path] = make()
        body = BOMBS[path]
        w.write(head(200, [(b"Content-Encoding", encoding), (b"Content-Type", b"application/octet-stream"),
                           (b"Content-Length", b"%d" % len(body))]))
        for start in range(0, len(body), 1 << 16):
            w.write(body[start:start + (1 << 16)])
            await w.drain()
    return route


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
    "/conflicting-length": conflicting_length,
    "/truncated-chunked-close": truncated_chunked_close,
    "/truncated-chunked-hang": truncated_chunked_hang,
    "/huge-header": huge_header,
    "/many-headers": many_headers,
    "/redirect-loop": redirect_loop,
    "/gzip-bomb": gzip_bomb,
    "/huge-chunked": huge_chunked,
    "/huge-close": huge_close,
    "/huge-declared": huge_declared,
    "/huge-declared-all": huge_declared,   # not in CI
    "/bomb-gzip": bomb(b"gzip", gzip_zeros),
    "/bomb-deflate": bomb(b"deflate", zlib_zeros),
    "/bomb-br": bomb(b"br", brotli_zeros),
    "/bomb-zstd": bomb(b"zstd", zstd_zeros),
    "/bomb-zstd-16gib": bomb(b"zstd", lambda: zstd_zeros(16 << 30)),   # not in CI: Docs/Limits.md's largest row
    "/small": small,
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

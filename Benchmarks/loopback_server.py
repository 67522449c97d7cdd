"""A keep-alive HTTP/1.1 server on 127.0.0.1 for compare.sh's TCP figures: answers every request with the
same ~230-byte JSON user. Prints its port, then serves until its stdin closes."""
import asyncio
import sys

BODY = (b'{"id":1,"name":"Kim Lee","email":"kim.lee@example.com","isActive":true,"roles":["admin","editor","viewer"],'
        b'"createdAt":"2024-05-01T12:00:00Z","address":{"street":"1 Infinite Loop","city":"Seoul","postcode":"04524","country":"KR"}}')
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY


async def handle(reader, writer):
    try:
        while True:
            line = await reader.readline()
            if not line:
                return
            while (await reader.readline()) not in (b"\r\n", b""):
                pass
            writer.write(ANSWER)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    stdin_closed = asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    async with server:
        await asyncio.wait([asyncio.ensure_future(stdin_closed), asyncio.ensure_future(asyncio.sleep(1800))],
                           return_when=asyncio.FIRST_COMPLETED)


asyncio.run(main())

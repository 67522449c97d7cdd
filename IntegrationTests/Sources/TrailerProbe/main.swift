// One response with a chunked body, served byte for byte by a raw TCP server on 127.0.0.1 in this process,
// and one call for it, in a process of its own: `TrailerProbe SHAPE CLIENT`. Used by ChunkedTrailerTests,
// because FoundationNetworking (Swift 6.3.1, libcurl 7.88.1) traps on a chunked body that ends with
// trailer fields (RFC 9112 section 7.1.2), which kills the whole process.
//
// SHAPE: `plain` (no trailer), `trailer` (`X-Checksum: abc` after the last chunk), `announced` (the same,
// announced by a `Trailer` header field, RFC 9110 section 6.6.2), `empty` (no data chunk, only the last
// chunk and a trailer field). CLIENT: `provider` (a `NetworkProvider` call) or `urlsession` (a plain
// `URLSession` data task with a completion handler). Prints `outcome: ...` and exits 0 when the call ended.
import Foundation
import Networking

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The responses, byte for byte.
let responses: [String: String] = [
    "plain": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "trailer": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n",
    "announced": "HTTP/1.1 200 OK\r\nTrailer: X-Checksum\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n",
    "empty": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Checksum: abc\r\n\r\n",
]

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("TrailerProbe: \(message)\n".utf8))
    exit(2)
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let response = responses[arguments[1]], ["provider", "urlsession"].contains(arguments[2]) else {
    fail("usage: TrailerProbe plain|trailer|announced|empty provider|urlsession")
}

/// A listening socket on 127.0.0.1 and the port the system gave it.
func listenOnLoopback() -> (socket: Int32, port: UInt16) {
    #if canImport(Glibc)
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
        let server = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard server >= 0 else { fail("socket: \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, length) } }
    guard bound == 0, listen(server, 16) == 0 else { fail("bind/listen: \(errno)") }
    let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server, $0, &length) } }
    guard named == 0 else { fail("getsockname: \(errno)") }
    return (server, UInt16(bigEndian: address.sin_port))
}

/// Answers every connection's request (read up to the blank line that ends its header) with `response`.
@Sendable func serve(_ server: Int32, _ response: String) {
    let bytes = Array(response.utf8)
    while true {
        let connection = accept(server, nil, nil)
        guard connection >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var request: [UInt8] = []
        while !request.suffix(4).elementsEqual("\r\n\r\n".utf8) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            request += buffer[0..<count]
        }
        _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
        close(connection)
    }
}

struct Get: Endpoint {
    let baseURL: URL
    let path: String
    var requiresAuthentication: Bool { false }
}

let (server, port) = listenOnLoopback()
Thread.detachNewThread { serve(server, response) }
let base = URL(string: "http://127.0.0.1:\(port)")!
var outcome: String
switch arguments[2] {
case "provider":
    let provider = NetworkProvider(configuration: .ephemeral, maximumAttempts: 1, deadline: 30)
    do {
        let data = try await provider.response(Get(baseURL: base, path: "/trailers")).data
        outcome = "body \(String(decoding: data, as: UTF8.self))"
    } catch {
        outcome = "error \(error)"
    }
default:
    outcome = await withCheckedContinuation { continuation in
        URLSession(configuration: .ephemeral).dataTask(with: base.appendingPathComponent("trailers")) { data, _, error in
            continuation.resume(returning: error.map { "error \($0)" } ?? "body \(String(decoding: data ?? Data(), as: UTF8.self))")
        }.resume()
    }
}
print("outcome: \(outcome)")

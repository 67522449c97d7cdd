import Foundation

/// One part of a `multipart/form-data` body a ``MockServer`` received.
public struct RecordedPart: Sendable, Equatable {
    /// The field name (`Content-Disposition`'s `name`).
    public var name: String
    /// The file name, if the part had one.
    public var filename: String?
    /// The part's `Content-Type`, if it had one.
    public var contentType: String?
    /// The part's header fields, names lowercased.
    public var headers: [String: String]
    /// The part's bytes.
    public var data: Data

    /// The bytes as UTF-8 text.
    public var text: String { String(decoding: data, as: UTF8.self) }
}

/// Why a body could not be read as `multipart/form-data`.
public struct MultipartParseError: Error, Equatable, CustomStringConvertible {
    /// What was wrong.
    public var description: String
}

extension RecordedRequest {
    /// The body read back as `multipart/form-data` (RFC 7578), using the boundary in `Content-Type`.
    ///
    /// ```swift
    /// let parts = try server.requests[0].multipartParts()
    /// #expect(parts.map(\.name) == ["nickname", "photo"])
    /// ```
    ///
    /// - Throws: ``MultipartParseError`` when the content type has no boundary or the framing is broken.
    public func multipartParts() throws -> [RecordedPart] {
        guard let contentType = header("Content-Type"), contentType.lowercased().hasPrefix("multipart/form-data"),
            let boundary = Self.parameter("boundary", in: contentType)
        else { throw MultipartParseError(description: "the Content-Type names no multipart/form-data boundary") }
        let delimiter = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else {
            throw MultipartParseError(description: "the body has no opening boundary")
        }
        var parts: [RecordedPart] = []
        while true {
            if body[cursor...].starts(with: Data("--".utf8)) { return parts }   // the closing boundary
            guard body[cursor...].starts(with: crlf) else { throw MultipartParseError(description: "a boundary line does not end in CRLF") }
            cursor += 2
            guard let headEnd = body.range(of: crlf + crlf, in: cursor..<body.endIndex) else {
                throw MultipartParseError(description: "a part's header block does not end")
            }
            var headers: [String: String] = [:]
            for line in String(decoding: body[cursor..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { throw MultipartParseError(description: "a part header has no colon") }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            guard let next = body.range(of: crlf + delimiter, in: headEnd.upperBound..<body.endIndex) else {
                throw MultipartParseError(description: "a part does not end with a boundary")
            }
            let disposition = headers["content-disposition"] ?? ""
            guard let name = Self.parameter("name", in: disposition) else {
                throw MultipartParseError(description: "a part has no name")
            }
            parts.append(
                RecordedPart(
                    name: name, filename: Self.parameter("filename", in: disposition), contentType: headers["content-type"],
                    headers: headers, data: Data(body[headEnd.upperBound..<next.lowerBound])))
            cursor = next.upperBound
        }
    }

    /// A `name=value` or `name="value"` parameter of a header value (`%22` read back as `"`); a `;` inside
    /// quotes belongs to the value.
    private static func parameter(_ name: String, in value: String) -> String? {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ";" && !quoted {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        for piece in pieces.dropFirst() {
            let pair = piece.trimmingCharacters(in: .whitespaces)
            guard let equals = pair.firstIndex(of: "="), pair[..<equals].lowercased() == name else { continue }
            var text = String(pair[pair.index(after: equals)...])
            if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return text.replacingOccurrences(of: "%22", with: "\"")
        }
        return nil
    }
}

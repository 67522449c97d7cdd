import Foundation

/// The bytes of one ``DiskResponseCache`` entry file, and writing and reading one.
///
/// A file is a fixed header, the metadata (the key and everything of the response but its body) and the
/// body. All integers are little-endian:
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 4 | magic `NWRC` |
/// | 4 | 1 | format version: `1`, or `2` for an entry ``CachePolicy/keepForOffline(upTo:)`` kept |
/// | 5 | 3 | zero |
/// | 8 | 4 | metadata length `M` |
/// | 12 | 8 | body length `B` |
/// | 20 | 8 | FNV-1a 64 of bytes 0..<20, the metadata and the body |
/// | 28 | `M` | metadata |
/// | 28 + `M` | `B` | body |
///
/// The file is exactly `28 + M + B` bytes long. The metadata is, in order: the key (partition as an
/// optional string, method, URL), the response URL (relative string, optional base URL string), the
/// status code (Int64), the request and response dates (the bits of their `timeIntervalSinceReferenceDate`),
/// the headers (a UInt32 count, then name and value strings) and the variant headers (a UInt32 count,
/// then a name string and an optional value string). A string is a UInt32 byte count and its UTF-8
/// bytes; an optional one is a byte 0 (none) or 1 followed by the string. Version 2 adds one field at the
/// end: the keep-until date (the bits of its `timeIntervalSinceReferenceDate`,
/// ``CachedResponse/keptUntil``).
///
/// An entry without a keep-until date is written as version 1, byte for byte as before, so a reader of
/// earlier versions reads it; a kept entry is written as version 2, which such a reader takes for another
/// format: a miss, and the file removed (it never answers as an ordinary entry, which it may not be: a
/// kept response may say `no-store`). This reader reads both.
///
/// Anything else (another magic or version, a length that does not add up to the file's size, a
/// checksum that does not match, a count larger than the bytes left) reads as no entry: decoding checks
/// every length before it uses or allocates it, and never traps.
enum DiskCacheEntryFormat {
    /// A key and the response stored under it.
    struct Entry: Sendable {
        let key: CacheKey
        let response: CachedResponse
    }

    private static let headerSize = 28
    /// The largest metadata accepted: far more than any real URL and headers.
    private static let maximumMetadataSize = 16 * 1_024 * 1_024
    private static let magic: [UInt8] = Array("NWRC".utf8)
    /// The version of an entry without a keep-until date.
    private static let version: UInt8 = 1
    /// The version of a kept entry: ``version``'s metadata and the keep-until date.
    private static let keptVersion: UInt8 = 2

    /// The file bytes of `response` stored under `key`, or `nil` when its metadata is larger than
    /// ``maximumMetadataSize``.
    static func encode(_ response: CachedResponse, for key: CacheKey) -> Data? {
        var metadata = Writer()
        metadata.optionalString(key.partition)
        metadata.string(key.method)
        metadata.string(key.url)
        metadata.string(response.url.relativeString)
        metadata.optionalString(response.url.baseURL?.absoluteString)
        metadata.integer(UInt64(bitPattern: Int64(response.statusCode)), bytes: 8)
        metadata.integer(response.requestDate.timeIntervalSinceReferenceDate.bitPattern, bytes: 8)
        metadata.integer(response.responseDate.timeIntervalSinceReferenceDate.bitPattern, bytes: 8)
        metadata.integer(UInt64(response.headers.count), bytes: 4)
        for (name, value) in response.headers {
            metadata.string(name)
            metadata.string(value)
        }
        metadata.integer(UInt64(response.variantHeaders.count), bytes: 4)
        for (name, value) in response.variantHeaders {
            metadata.string(name)
            metadata.optionalString(value)
        }
        if let keptUntil = response.keptUntil { metadata.integer(keptUntil.timeIntervalSinceReferenceDate.bitPattern, bytes: 8) }
        guard metadata.bytes.count <= maximumMetadataSize else { return nil }

        var header = Writer()
        header.bytes.append(contentsOf: magic)
        header.bytes.append(contentsOf: [response.keptUntil == nil ? version : keptVersion, 0, 0, 0])
        header.integer(UInt64(metadata.bytes.count), bytes: 4)
        header.integer(UInt64(response.body.count), bytes: 8)
        var checksum = FNV1a64()
        checksum.combine(header.bytes)
        checksum.combine(metadata.bytes)
        checksum.combine(response.body)
        header.integer(checksum.value, bytes: 8)

        var file = Data(capacity: headerSize + metadata.bytes.count + response.body.count)
        file.append(contentsOf: header.bytes)
        file.append(contentsOf: metadata.bytes)
        file.append(response.body)
        return file
    }

    /// The entry in the file at `path`, or `nil` when there is none: no file, not a regular file, larger
    /// than `maximumSize`, or not a whole, intact entry of this format. Reading an entry sets the file's
    /// modification date to `accessDate` (the access order a later launch starts from).
    static func load(atPath path: String, maximumSize: Int, accessDate: timespec) -> Entry? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        guard let size = Int(exactly: status.st_size), size >= headerSize, size <= maximumSize, let header = readData(descriptor, count: headerSize) else {
            return nil
        }
        let headerBytes = [UInt8](header)
        var reader = Reader(headerBytes)
        guard reader.take(4).elementsEqual(magic), let fileVersion = reader.take(1).first, fileVersion == version || fileVersion == keptVersion,
            reader.take(3).elementsEqual([0, 0, 0]),
            let metadataCount = reader.integer(bytes: 4).flatMap(Int.init(exactly:)),
            let bodyCount = reader.integer(bytes: 8).flatMap(Int.init(exactly:)), let checksum = reader.integer(bytes: 8),
            metadataCount <= min(maximumMetadataSize, size - headerSize), bodyCount == size - headerSize - metadataCount,
            let metadata = readData(descriptor, count: metadataCount), let body = readData(descriptor, count: bodyCount)
        else { return nil }

        var computed = FNV1a64()
        computed.combine(headerBytes[0..<20])
        computed.combine(metadata)
        computed.combine(body)
        guard computed.value == checksum, let entry = decodeMetadata([UInt8](metadata), body: body, kept: fileVersion == keptVersion) else {
            return nil
        }
        _ = futimens(descriptor, [accessDate, accessDate])   // best effort, as on writing
        return entry
    }

    /// The entry of `bytes`, the metadata, and `body`; `kept`: the metadata ends with a keep-until date
    /// (version 2).
    private static func decodeMetadata(_ bytes: [UInt8], body: Data, kept: Bool) -> Entry? {
        var reader = Reader(bytes)
        guard let partition = reader.optionalString(), let method = reader.string(), let keyURL = reader.string(),
            let relative = reader.string(), let base = reader.optionalString(),
            let status = reader.integer(bytes: 8), let requested = reader.integer(bytes: 8), let responded = reader.integer(bytes: 8),
            let headerCount = reader.integer(bytes: 4)
        else { return nil }
        let baseURL = base.flatMap(URL.init(string:))
        guard (base == nil) == (baseURL == nil), let url = URL(string: relative, relativeTo: baseURL) else { return nil }
        var headers: [String: String] = [:]
        for _ in 0..<min(headerCount, UInt64(bytes.count)) {
            guard let name = reader.string(), let value = reader.string() else { return nil }
            headers[name] = value
        }
        guard let variantCount = reader.integer(bytes: 4) else { return nil }
        var variantHeaders: [String: String?] = [:]
        for _ in 0..<min(variantCount, UInt64(bytes.count)) {
            guard let name = reader.string(), let value = reader.optionalString() else { return nil }
            variantHeaders[name] = .some(value)
        }
        var keptUntil: Date?
        if kept {
            guard let bits = reader.integer(bytes: 8) else { return nil }
            keptUntil = Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
        }
        guard reader.isAtEnd, UInt64(headers.count) == headerCount, UInt64(variantHeaders.count) == variantCount else { return nil }
        var response = CachedResponse(
            url: url, statusCode: Int(truncatingIfNeeded: Int64(bitPattern: status)), headers: headers, body: body,
            requestDate: Date(timeIntervalSinceReferenceDate: Double(bitPattern: requested)),
            responseDate: Date(timeIntervalSinceReferenceDate: Double(bitPattern: responded)), variantHeaders: variantHeaders)
        response.keptUntil = keptUntil
        return Entry(key: CacheKey(partition: partition, method: method, url: keyURL), response: response)
    }

    /// Writes `bytes` to a new file at `path`, readable and writable by the user only, modified at
    /// `modificationDate`. Returns whether it did; a file it could not write whole is removed.
    ///
    /// No `fsync`: a file that a power loss leaves damaged reads as no entry, and the cache's entries are
    /// worth less than a disk flush on every store. `protect` gives the file its protection class while it
    /// is still empty (``DiskResponseCache/FileProtection``); when it cannot, nothing is written.
    static func writeNewFile(_ bytes: Data, atPath path: String, modificationDate: timespec, protect: (String) -> Bool) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        guard protect(path) else {
            close(descriptor)
            unlink(path)
            return false
        }
        var written = bytes.withUnsafeBytes { buffer -> Bool in
            var done = 0
            while done < buffer.count, let base = buffer.baseAddress {
                let result = write(descriptor, base + done, buffer.count - done)
                if result > 0 {
                    done += result
                } else if !(result < 0 && errno == EINTR) {
                    return false
                }
            }
            return true
        }
        _ = futimens(descriptor, [modificationDate, modificationDate])   // best effort: the entry only looks older
        written = close(descriptor) == 0 && written
        if !written { unlink(path) }
        return written
    }

    /// Reads exactly `count` bytes from `descriptor`, or `nil` when the file ends first or a read fails.
    private static func readData(_ descriptor: Int32, count: Int) -> Data? {
        var data = Data(count: count)
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            var done = 0
            while done < count, let base = buffer.baseAddress {
                let result = read(descriptor, base + done, count - done)
                if result > 0 {
                    done += result
                } else if result < 0, errno == EINTR {
                    continue
                } else {
                    return false   // the end of the file, or an error
                }
            }
            return true
        }
        return complete ? data : nil
    }

    /// The 64-bit FNV-1a hash: cheap, and enough to tell a damaged file from an intact one (it is no
    /// defence against someone who can write the folder, who could write any entry anyway).
    private struct FNV1a64 {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func combine(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
        }

        mutating func combine(_ data: Data) {
            data.withUnsafeBytes { combine($0) }
        }
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func integer(_ value: UInt64, bytes count: Int) {
            for index in 0..<count {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(8 * index)))
            }
        }

        /// A string longer than 4 GiB cannot be written; the metadata bound rejects it long before.
        mutating func string(_ text: String) {
            integer(UInt64(text.utf8.count), bytes: 4)
            bytes.append(contentsOf: text.utf8)
        }

        mutating func optionalString(_ text: String?) {
            bytes.append(text == nil ? 0 : 1)
            if let text { string(text) }
        }
    }

    /// Reads the `Writer`'s encoding back; every read returns `nil` past the end.
    private struct Reader {
        private let bytes: [UInt8]
        private var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var isAtEnd: Bool { offset == bytes.count }

        /// The next `count` bytes, or none (an empty slice) when fewer are left.
        mutating func take(_ count: Int) -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else {
                offset = bytes.count
                return []
            }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func integer(bytes count: Int) -> UInt64? {
            let slice = take(count)
            guard slice.count == count else { return nil }
            return slice.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }

        mutating func string() -> String? {
            guard let count = integer(bytes: 4).flatMap(Int.init(exactly:)) else { return nil }
            let slice = take(count)
            guard slice.count == count else { return nil }
            return String(decoding: slice, as: UTF8.self)
        }

        /// `.some(nil)` for an absent string, `nil` when the bytes are not an optional string.
        mutating func optionalString() -> String?? {
            switch take(1).first {
            case 0: return .some(nil)
            case 1: return string().map { .some($0) }
            default: return nil
            }
        }
    }
}

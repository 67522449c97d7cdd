import Foundation

/// The bytes of one durable record: a fixed header that names the record's kind and format, says how long
/// it is and checksums it, then the owner's payload. All integers are little-endian:
///
/// | offset | size | field |
/// | --- | --- | --- |
/// | 0 | 4 | magic: the owner's four bytes (the outbox writes `NWOB`) |
/// | 4 | 1 | layout version: `1` (this table) |
/// | 5 | 1 | payload version: the owner's format of the payload |
/// | 6 | 2 | zero |
/// | 8 | 4 | payload length `P` |
/// | 12 | 4 | CRC-32 (``CRC32``) of bytes 0..<12 and the payload |
/// | 16 | `P` | payload |
///
/// A record is exactly `16 + P` bytes. ``decode(_:magic:)`` checks everything before it trusts anything:
/// a short file (torn), another magic, an unknown layout version, a length that does not match the bytes
/// or a checksum that does not match each read as a ``Damage``, never as a payload and never a trap. The
/// payload version is handed to the owner, which decides which versions it reads.
package struct DurableRecord: Sendable, Equatable {
    /// The size of the header before the payload.
    package static let headerSize = 16
    /// The layout version this code writes and reads.
    package static let layoutVersion: UInt8 = 1
    /// The largest payload a record holds (a length field above it reads as damage).
    package static let maximumPayloadSize = 64 * 1_024 * 1_024

    /// Why bytes are not a record.
    package enum Damage: Error, Sendable, Equatable, CustomStringConvertible {
        /// Fewer bytes than the header, or than the header says: a write that did not finish.
        case truncated(expected: Int, found: Int)
        /// More bytes than the header says.
        case trailingBytes(expected: Int, found: Int)
        /// The first four bytes are not the owner's magic: not one of its records.
        case wrongMagic
        /// A layout version this code does not read (written by a later version of the package).
        case unsupportedLayoutVersion(UInt8)
        /// A payload version the owner does not read.
        case unsupportedPayloadVersion(UInt8)
        /// The reserved bytes are not zero, or the length is above ``DurableRecord/maximumPayloadSize``.
        case malformedHeader
        /// The checksum does not match: a byte changed after the record was written.
        case checksumMismatch
        /// The record's file could not be read (`errno`).
        case unreadable(errno: Int32)
        /// The payload passed the checksum but the owner could not decode it.
        case undecodablePayload

        /// A one-line description for logs and reports.
        package var description: String {
            switch self {
            case .truncated(let expected, let found): return "truncated: \(found) of \(expected) bytes"
            case .trailingBytes(let expected, let found): return "\(found) bytes where \(expected) were written"
            case .wrongMagic: return "not a record of this kind"
            case .unsupportedLayoutVersion(let version): return "record layout version \(version) is not supported"
            case .unsupportedPayloadVersion(let version): return "payload version \(version) is not supported"
            case .malformedHeader: return "malformed header"
            case .checksumMismatch: return "checksum mismatch"
            case .unreadable(let code): return "unreadable (errno \(code))"
            case .undecodablePayload: return "the payload cannot be decoded"
            }
        }
    }

    /// The owner's format of ``payload``.
    package let payloadVersion: UInt8
    /// The owner's bytes.
    package let payload: Data

    /// A record of `payload` in the owner's format `payloadVersion`.
    package init(payloadVersion: UInt8, payload: Data) {
        self.payloadVersion = payloadVersion
        self.payload = payload
    }

    /// The record's bytes under `magic` (four bytes), or `nil` when the payload is larger than
    /// ``maximumPayloadSize`` or `magic` is not four bytes.
    package func encoded(magic: [UInt8]) -> Data? {
        guard magic.count == 4, payload.count <= Self.maximumPayloadSize else { return nil }
        var header = magic + [Self.layoutVersion, payloadVersion, 0, 0]
        Self.append(UInt32(payload.count), to: &header)
        let crc = CRC32.checksum(payload, continuing: CRC32.checksum(header))
        Self.append(crc, to: &header)
        var bytes = Data(capacity: Self.headerSize + payload.count)
        bytes.append(contentsOf: header)
        bytes.append(payload)
        return bytes
    }

    /// The record in `bytes` written under `magic`, or why there is none.
    package static func decode(_ bytes: Data, magic: [UInt8]) -> Result<DurableRecord, Damage> {
        let header = [UInt8](bytes.prefix(headerSize))
        guard header.count == headerSize else { return .failure(.truncated(expected: headerSize, found: header.count)) }
        guard Array(header[0..<4]) == magic else { return .failure(.wrongMagic) }
        guard header[4] == layoutVersion else { return .failure(.unsupportedLayoutVersion(header[4])) }
        guard header[6] == 0, header[7] == 0 else { return .failure(.malformedHeader) }
        let length = Int(integer(header, at: 8))
        guard length <= maximumPayloadSize else { return .failure(.malformedHeader) }
        let expected = headerSize + length
        guard bytes.count >= expected else { return .failure(.truncated(expected: expected, found: bytes.count)) }
        guard bytes.count == expected else { return .failure(.trailingBytes(expected: expected, found: bytes.count)) }
        let payload = Data(bytes.dropFirst(headerSize))
        let crc = CRC32.checksum(payload, continuing: CRC32.checksum(header[0..<12]))
        guard crc == integer(header, at: 12) else { return .failure(.checksumMismatch) }
        return .success(DurableRecord(payloadVersion: header[5], payload: payload))
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    private static func integer(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << UInt32(8 * $1) }
    }
}

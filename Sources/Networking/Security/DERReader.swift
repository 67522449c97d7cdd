/// Reads DER (ITU-T X.690, the Distinguished Encoding Rules) one element at a time, as far as a
/// certificate's outer layers need: tag, length, content. Any input — truncated, lying about a length,
/// not DER at all — ends in `nil`, never in a trap: every index is checked against the end before use.
///
/// Only what DER allows is accepted: definite lengths in their shortest form, of at most three length
/// bytes (16 MiB, far beyond any certificate), and low tag numbers (every tag a certificate's outer
/// layers use).
///
/// ```swift
/// var certificate = DERReader(bytes)
/// guard let outer = certificate.read(tag: DERReader.sequence), certificate.isAtEnd else { return nil }
/// var inside = DERReader(bytes, in: outer.content)
/// ```
struct DERReader {
    /// One element: its tag, where it starts (tag included) and where its content lies.
    struct Element {
        let tag: UInt8
        /// From the tag to the end of the content.
        let whole: Range<Int>
        /// The content, without tag and length.
        let content: Range<Int>
    }

    static let integer: UInt8 = 0x02
    static let bitString: UInt8 = 0x03
    static let objectIdentifier: UInt8 = 0x06
    static let sequence: UInt8 = 0x30
    /// `[0]`, constructed: the explicit version field of a certificate.
    static let contextZero: UInt8 = 0xA0

    private let bytes: [UInt8]
    private var position: Int
    private let end: Int

    /// A reader of all of `bytes`.
    init(_ bytes: [UInt8]) {
        self.init(bytes, in: 0..<bytes.count)
    }

    /// A reader of `range` of `bytes` (an element's content), clamped to `bytes`.
    init(_ bytes: [UInt8], in range: Range<Int>) {
        self.bytes = bytes
        let end = min(max(range.upperBound, 0), bytes.count)
        self.position = min(max(range.lowerBound, 0), end)
        self.end = end
    }

    /// Whether every byte has been read.
    var isAtEnd: Bool { position == end }

    /// The tag of the next element, without reading it.
    var nextTag: UInt8? { position < end ? bytes[position] : nil }

    /// Reads the next element when its tag is `tag`; otherwise, or when it is not well-formed DER, reads
    /// nothing and returns `nil`.
    mutating func read(tag: UInt8) -> Element? {
        guard let element = peek(), element.tag == tag else { return nil }
        position = element.whole.upperBound
        return element
    }

    /// The bytes of `range` (an element's), which lie within the reader's bytes.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        bytes[range.clamped(to: 0..<bytes.count)]
    }

    /// The next element, not read.
    private func peek() -> Element? {
        guard position < end else { return nil }
        let tag = bytes[position]
        guard tag & 0x1F != 0x1F else { return nil }   // a high tag number: nowhere in what is read here
        var cursor = position + 1
        guard cursor < end else { return nil }
        let first = bytes[cursor]
        cursor += 1
        var length = Int(first)
        if first >= 0x80 {
            let count = Int(first & 0x7F)
            // 0x80 is BER's indefinite length, not DER; more than three bytes is no certificate.
            guard (1...3).contains(count), end - cursor >= count, bytes[cursor] != 0 else { return nil }
            length = 0
            for _ in 0..<count {
                length = length << 8 | Int(bytes[cursor])
                cursor += 1
            }
            guard length >= 0x80 else { return nil }   // DER: a short length has the short form
        }
        guard length <= end - cursor else { return nil }
        return Element(tag: tag, whole: position..<(cursor + length), content: cursor..<(cursor + length))
    }
}

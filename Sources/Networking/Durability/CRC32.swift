/// CRC-32 (IEEE 802.3, the polynomial of zlib, PNG and Ethernet: reflected 0xEDB88320, initial value and
/// final XOR 0xFFFFFFFF), the checksum of a ``DurableRecord``. It detects every burst error up to 32 bits
/// and a torn or flipped record with probability 1 - 2⁻³²; it is not a defence against an attacker who
/// can write the folder (nothing is: such a writer can write a valid record).
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1 }
        return value
    }

    /// The checksum of `bytes`, continuing from `crc` (the checksum of the bytes before them; 0 to start).
    package static func checksum(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var value = ~crc
        table.withUnsafeBufferPointer { table in
            for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        }
        return ~value
    }
}

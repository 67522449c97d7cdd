import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed from bytes: IMF-fixdate and the two obsolete forms.
///
/// Foundation's `DateFormatter` is not used: on Linux it traps on some input a server can send (a
/// valid date followed by a combining accent) and leaks on characters outside the BMP. Only printable
/// ASCII is accepted, so nothing a server sends can reach a crash-prone path.
enum HTTPDate {
    /// The longest value, without the white space around it; any real HTTP date is 29 bytes.
    static let maximumLength = 64
    private static let (space, tab) = (UInt8(ascii: " "), UInt8(ascii: "\t"))

    /// The names of the grammar (RFC 9110 §5.6.7), indexed as the scanner returns them.
    fileprivate static let dayNames: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    fileprivate static let longDayNames: [[UInt8]] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .map { Array($0.utf8) }
    fileprivate static let monthNames: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
    fileprivate static let zoneNames: [[UInt8]] = [Array("GMT".utf8)]

    /// The date `text` names, or `nil` when it is not an HTTP date (RFC 9110 §5.6.7).
    ///
    /// ```text
    /// Sun, 06 Nov 1994 08:49:37 GMT    IMF-fixdate
    /// Sunday, 06-Nov-94 08:49:37 GMT   RFC 850: the two-digit year is the one in this century, unless
    ///                                  that is more than 50 years after `now` (then the last century)
    /// Sun Nov  6 08:49:37 1994         asctime: a one-digit day after two spaces, or two digits
    /// ```
    ///
    /// Exactly these shapes: one space where the grammar has `SP`, two-digit day, hour, minute and second,
    /// a four-digit year (two in RFC 850), the zone `GMT`, nothing before or after but the white space
    /// a field value never includes (RFC 9110 §5.5). Anything else (a double space, `UTC`, `+0000`, a
    /// two-digit year in IMF-fixdate, `2:01:18`, dashes or dots in the wrong place, trailing text) is not
    /// a date. Day, month and zone names match in any letter case: the grammar's names are case-sensitive,
    /// but RFC 9111 §4.2 asks a cache to match them case-insensitively. The day name must be one of the
    /// seven but need not be the date's weekday (RFC 9110 does not ask recipients to check it).
    static func parse(_ text: some StringProtocol, relativeTo now: Date = Date()) -> Date? {
        // White space around the value is dropped before the length cap, keeping at most
        // `maximumLength` bytes of value: a long run of it costs a scan, never a copy.
        var (bytes, gap): ([UInt8], [UInt8]) = ([], [])
        for byte in text.utf8 {
            if byte == space || byte == tab {
                if !bytes.isEmpty, gap.count <= maximumLength { gap.append(byte) }
                continue
            }
            guard bytes.count + gap.count < maximumLength else { return nil }
            bytes += gap
            gap.removeAll(keepingCapacity: true)
            bytes.append(byte)
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }   // printable ASCII only
        var scanner = HTTPDateScanner(bytes: bytes)
        if let date = scanner.imfFixdate() { return date }
        scanner.index = 0
        if let date = scanner.rfc850Date(relativeTo: now) { return date }
        scanner.index = 0
        return scanner.asctimeDate()
    }

    // The arithmetic below is in Int64, never Int: Int has 32 bits on watchOS (arm64_32), and the seconds
    // of a date after 2038-01-19 or before 1901-12-13 (an `Expires` in 2099, a year 9999 or 0000) do not
    // fit in 32 bits. Days (at most ±12 million here) would, but are Int64 too, so nothing needs checking.

    /// The date of an RFC 850 `shortYear` (two digits): RFC 9110 §5.6.7 says a timestamp that appears to
    /// be more than 50 years in the future is in the most recent past year with those digits. The whole
    /// date is compared with `now` plus 50 years, to the second: with `now` 2027-01-15 08:00:00,
    /// `15-Jan-77 08:00:00` is 2077 and `15-Jan-77 08:00:01` is 1977.
    fileprivate static func rfc850Date(
        shortYear: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int), relativeTo now: Date
    ) -> Date? {
        let seconds = now.timeIntervalSince1970
        let nowSeconds = seconds.isFinite ? Int64(max(min(seconds, 1e12), -1e12).rounded(.down)) : 0
        let nowDays = floorDivision(nowSeconds, 86_400)
        let today = civilDate(ofDaysSinceEpoch: nowDays)
        let candidate = today.year - floorModulo(today.year, 100) + Int64(shortYear)
        let given = (candidate, Int64(month), Int64(day), secondOfDay(time))
        let limit = (today.year + 50, today.month, today.day, nowSeconds - nowDays * 86_400)
        return date(year: given > limit ? candidate - 100 : candidate, month: month, day: day, time: time)
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (H. Hinnant's `civil_from_days`).
    private static func civilDate(ofDaysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDivision(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153   // 0 is March
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, dayOfYear - (153 * monthIndex + 2) / 5 + 1)
    }

    /// The date at `hour:minute:second` GMT of a calendar day, or `nil` when any field is out of range. A
    /// leap second (`:60`, RFC 9110 §5.6.7) counts as the second before it: RFC 9111 §4.2 asks for the
    /// nearest time at or before the one received.
    fileprivate static func date(year: Int64, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), time.hour < 24, time.minute < 60, time.second <= 60
        else { return nil }
        let days = daysSinceEpoch(year: year, month: Int64(month), day: Int64(day))
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + secondOfDay(time)))
    }

    private static func secondOfDay(_ time: (hour: Int, minute: Int, second: Int)) -> Int64 {
        Int64(time.hour) * 3_600 + Int64(time.minute) * 60 + Int64(min(time.second, 59))
    }

    private static func daysIn(month: Int, year: Int64) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivision(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }

    private static func floorModulo(_ value: Int64, _ divisor: Int64) -> Int64 {
        value - floorDivision(value, divisor) * divisor
    }
}

/// A cursor over the bytes of an HTTP date, reading the three forms of RFC 9110 §5.6.7 exactly.
private struct HTTPDateScanner {
    let bytes: [UInt8]
    var index = 0

    /// `day-name "," SP day SP month SP year SP time-of-day SP GMT`, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    mutating func imfFixdate() -> Date? {
        guard name(in: HTTPDate.dayNames) != nil, take(","), take(" "), let day = digits(2), take(" "), let month = name(in: HTTPDate.monthNames),
            take(" "), let year = digits(4), take(" "), let time = timeOfDay(), take(" "), name(in: HTTPDate.zoneNames) != nil, index == bytes.count
        else { return nil }
        return HTTPDate.date(year: Int64(year), month: month + 1, day: day, time: time)
    }

    /// `day-name-l "," SP day "-" month "-" 2DIGIT SP time-of-day SP GMT`, e.g. `Sunday, 06-Nov-94 08:49:37 GMT`.
    mutating func rfc850Date(relativeTo now: Date) -> Date? {
        guard name(in: HTTPDate.longDayNames) != nil, take(","), take(" "), let day = digits(2), take("-"), let month = name(in: HTTPDate.monthNames),
            take("-"), let shortYear = digits(2), take(" "), let time = timeOfDay(), take(" "), name(in: HTTPDate.zoneNames) != nil,
            index == bytes.count
        else { return nil }
        return HTTPDate.rfc850Date(shortYear: shortYear, month: month + 1, day: day, time: time, relativeTo: now)
    }

    /// `day-name SP month SP ( 2DIGIT / ( SP DIGIT ) ) SP time-of-day SP year`, e.g. `Sun Nov  6 08:49:37 1994`.
    mutating func asctimeDate() -> Date? {
        guard name(in: HTTPDate.dayNames) != nil, take(" "), let month = name(in: HTTPDate.monthNames), take(" "),
            let day = take(" ") ? digits(1) : digits(2), take(" "), let time = timeOfDay(), take(" "), let year = digits(4), index == bytes.count
        else { return nil }
        return HTTPDate.date(year: Int64(year), month: month + 1, day: day, time: time)
    }

    /// `hour ":" minute ":" second`, two digits each.
    private mutating func timeOfDay() -> (hour: Int, minute: Int, second: Int)? {
        guard let hour = digits(2), take(":"), let minute = digits(2), take(":"), let second = digits(2) else { return nil }
        return (hour, minute, second)
    }

    /// Reads `byte` if it comes next.
    private mutating func take(_ byte: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: byte) else { return false }
        index += 1
        return true
    }

    /// Reads exactly `count` ASCII digits and returns their value.
    private mutating func digits(_ count: Int) -> Int? {
        guard bytes.count - index >= count else { return nil }
        var value = 0
        for byte in bytes[index..<index + count] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        index += count
        return value
    }

    /// Reads one of `names`, in any ASCII letter case (RFC 9111 §4.2), and returns its index.
    private mutating func name(in names: [[UInt8]]) -> Int? {
        for (position, name) in names.enumerated() where bytes.count - index >= name.count {
            if zip(name, bytes[index..<index + name.count]).allSatisfy({ Self.lowercased($0) == Self.lowercased($1) }) {
                index += name.count
                return position
            }
        }
        return nil
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

import Foundation

/// HTTP dates (RFC 9110 §5.6.7), parsed from bytes: IMF-fixdate and the two obsolete forms.
///
/// Foundation's `DateFormatter` is not used: on Linux it traps on some input a server can send (a
/// valid date followed by a combining accent) and leaks on characters outside the BMP. Only printable
/// ASCII is accepted, so nothing a server sends can reach a crash-prone path.
enum HTTPDate {
    /// The longest value looked at; any real HTTP date is 29 bytes.
    static let maximumLength = 64

    private static let dayNames: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDayNames: [[UInt8]] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        .map { Array($0.utf8) }
    private static let monthNames: [[UInt8]] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }

    /// The date `text` names, or `nil` when it is not an HTTP date.
    ///
    /// ```text
    /// Sun, 06 Nov 1994 08:49:37 GMT    IMF-fixdate
    /// Sunday, 06-Nov-94 08:49:37 GMT   RFC 850: the two-digit year is the one in this century, unless
    ///                                  that is more than 50 years after `now` (then the last century)
    /// Sun Nov  6 08:49:37 1994         asctime
    /// ```
    static func parse(_ text: some StringProtocol, relativeTo now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8.prefix(maximumLength + 1))
        guard bytes.count <= maximumLength, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        let tokens = bytes.split(separator: UInt8(ascii: " ")).map(Array.init)
        switch tokens.count {
        case 6:   // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard isDayName(tokens[0], in: dayNames, comma: true), tokens[1].count == 2, tokens[3].count == 4, tokens[5] == Array("GMT".utf8),
                let day = number(tokens[1]), let month = month(tokens[2]), let year = number(tokens[3])
            else { return nil }
            return date(year: year, month: month, day: day, time: tokens[4])
        case 4:   // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let parts = tokens[1].split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false).map(Array.init)
            guard isDayName(tokens[0], in: longDayNames, comma: true), tokens[3] == Array("GMT".utf8), parts.count == 3,
                parts[0].count == 2, parts[2].count == 2,
                let day = number(parts[0]), let month = month(parts[1]), let shortYear = number(parts[2])
            else { return nil }
            return date(year: fullYear(shortYear, relativeTo: now), month: month, day: day, time: tokens[2])
        case 5:   // asctime: Sun Nov  6 08:49:37 1994
            guard isDayName(tokens[0], in: dayNames, comma: false), (1...2).contains(tokens[2].count), tokens[4].count == 4,
                let month = month(tokens[1]), let day = number(tokens[2]), let year = number(tokens[4])
            else { return nil }
            return date(year: year, month: month, day: day, time: tokens[3])
        default:
            return nil
        }
    }

    /// RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is the most
    /// recent past year with those digits.
    private static func fullYear(_ shortYear: Int, relativeTo now: Date) -> Int {
        let seconds = now.timeIntervalSince1970
        let days = seconds.isFinite ? Int(max(min(seconds, 1e12), -1e12) / 86_400) : 0
        let currentYear = year(ofDaysSinceEpoch: days)
        let candidate = currentYear - currentYear % 100 + shortYear
        return candidate > currentYear + 50 ? candidate - 100 : candidate
    }

    /// The proleptic Gregorian year of a day counted from 1970-01-01 (H. Hinnant's `civil_from_days`).
    private static func year(ofDaysSinceEpoch days: Int) -> Int {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        return yearOfEra + era * 400 + (monthIndex >= 10 ? 1 : 0)
    }

    private static func isDayName(_ token: [UInt8], in names: [[UInt8]], comma: Bool) -> Bool {
        guard comma else { return names.contains(token) }
        return token.last == UInt8(ascii: ",") && names.contains(Array(token.dropLast()))
    }

    private static func month(_ token: [UInt8]) -> Int? {
        monthNames.firstIndex(of: token).map { $0 + 1 }
    }

    /// The value of a run of ASCII digits (at most 4).
    private static func number(_ digits: some Collection<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.count <= 4 else { return nil }
        var value = 0
        for byte in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The date at `time` (`hh:mm:ss`, GMT) of a calendar day, or `nil` when any field is out of range.
    private static func date(year: Int, month: Int, day: Int, time: [UInt8]) -> Date? {
        let parts = time.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ $0.count == 2 }),
            let hour = number(parts[0]), let minute = number(parts[1]), let second = number(parts[2]),
            hour < 24, minute < 60, second <= 60,   // 60: a leap second
            day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

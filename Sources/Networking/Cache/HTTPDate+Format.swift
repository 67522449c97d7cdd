import Foundation

extension HTTPDate {
    private static let dayNames = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]   // 1 January 1970 was a Thursday
    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as an IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, to the second
    /// below it. Plain arithmetic (no `DateFormatter`, which traps on Linux for some values); a date
    /// before 1970, after 9999 or not finite is written as the nearest of those bounds.
    static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        // Int64, not Int (32 bits on watchOS, arm64_32): the seconds up to 9999 need 38 bits, the days 22.
        let clamped: Int64 = seconds.isFinite ? Int64(min(max(seconds, 0), 253_402_300_799).rounded(.down)) : (seconds > 0 ? 253_402_300_799 : 0)
        let (days, time) = (Int(clamped / 86_400), Int(clamped % 86_400))
        // Days since 1970 to a Gregorian date (the civil-from-days algorithm: eras of 400 years, March first).
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(dayNames[days % 7]), \(two(day)) \(monthNames[month - 1]) \(year) \(two(time / 3_600)):\(two(time / 60 % 60)):\(two(time % 60)) GMT"
    }
}

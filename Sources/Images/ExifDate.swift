import Foundation

/// EXIF's "YYYY:MM:DD HH:MM:SS" dates and "+HH:MM" offsets, converted without a calendar object.
enum ExifDate {
    /// The instant a local EXIF time names, with its offset from UTC (UTC when `offset` is nil or invalid);
    /// nil when the text is not a valid date.
    static func parse(_ text: String, offset: String?) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for i in range {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
            }
            return value
        }
        guard b[4] == 0x3A, b[7] == 0x3A, b[10] == 0x20 || b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        var seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        if let offset, let offsetSeconds = parseOffset(offset) { seconds -= offsetSeconds }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// "+HH:MM" / "-HH:MM" in seconds east of UTC.
    static func parseOffset(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count >= 6, b[0] == 0x2B || b[0] == 0x2D, b[3] == 0x3A else { return nil }
        let digits = [b[1], b[2], b[4], b[5]]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let hours = Int(digits[0] - 0x30) * 10 + Int(digits[1] - 0x30)
        let minutes = Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30)
        guard hours <= 14, minutes < 60 else { return nil }
        return (b[0] == 0x2D ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// The local time "YYYY:MM:DD HH:MM:SS" of `date` at `offsetSeconds` east of UTC.
    static func format(_ date: Date, offsetSeconds: Int) -> String {
        let total = Int(date.timeIntervalSince1970.rounded(.down)) + offsetSeconds
        let days = Int((Double(total) / 86_400).rounded(.down))
        let secondsOfDay = total - days * 86_400
        let (year, month, day) = civilFromDays(days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let yearText = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(yearText):\(two(month)):\(two(day)) \(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):"
            + two(secondsOfDay % 60)
    }

    /// "+HH:MM" for an offset in seconds east of UTC.
    static func formatOffset(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let minutes = abs(seconds) / 60
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(sign)\(two(minutes / 60)):\(two(minutes % 60))"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

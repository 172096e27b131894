import Foundation

/// Parses the two date formats S3 uses, without locale-dependent formatters.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// RFC 7231 IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func parse(_ string: String) -> Date? {
        let parts = string.split(separator: " ")
        guard parts.count == 6, parts[5] == "GMT", let day = Int(parts[1]),
            let month = months.firstIndex(of: String(parts[2])), let year = Int(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard time.count == 3, let h = Int(time[0]), let m = Int(time[1]), let s = Int(time[2]) else { return nil }
        return make(year: year, month: month + 1, day: day, hour: h, minute: m, second: s, fraction: 0)
    }

    /// ISO 8601 as in listings: `2009-10-12T17:50:30.000Z`.
    static func parseISO8601(_ string: String) -> Date? {
        let b = Array(string.utf8)
        guard b.count >= 20, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x54, b[13] == 0x3A, b[16] == 0x3A,
            b.last == 0x5A
        else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
            let mi = num(14..<16), let s = num(17..<19)
        else { return nil }
        var fraction = 0.0
        if b.count > 20 {
            guard b[19] == 0x2E, b.count > 21, let f = num(20..<(b.count - 1)) else { return nil }
            fraction = Double(f) / pow(10, Double(b.count - 21))
        } else if b[19] != 0x5A {
            return nil
        }
        return make(year: y, month: mo, day: d, hour: h, minute: mi, second: s, fraction: fraction)
    }

    private static func make(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, fraction: Double)
        -> Date?
    {
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month - 1)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&t)) + fraction)
    }
}

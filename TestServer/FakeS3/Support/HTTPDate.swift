import AWSSigV4
import Essentials
import Foundation

/// Formats and parses the date forms S3 uses: RFC 1123 in headers, ISO 8601 in XML.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func components(_ date: Date) -> tm {
        var time = time_t(Int64(date.timeIntervalSince1970.rounded(.down)))
        var value = tm()
        gmtime_r(&time, &value)
        return value
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func rfc1123(_ date: Date) -> String {
        let t = components(date)
        var out = [UInt8]()
        out.reserveCapacity(29)
        out += days[Int(t.tm_wday)].utf8
        out += ", ".utf8
        SigV4.appendDecimal(Int(t.tm_mday), digits: 2, to: &out)
        out.append(UInt8(ascii: " "))
        out += months[Int(t.tm_mon)].utf8
        out.append(UInt8(ascii: " "))
        SigV4.appendDecimal(Int(t.tm_year) + 1900, digits: 4, to: &out)
        out.append(UInt8(ascii: " "))
        SigV4.appendDecimal(Int(t.tm_hour), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        SigV4.appendDecimal(Int(t.tm_min), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        SigV4.appendDecimal(Int(t.tm_sec), digits: 2, to: &out)
        out += " GMT".utf8
        return String(decoding: out, as: UTF8.self)
    }

    private static let cachedNow = LockedBox<(second: Int64, text: String)>((-1, ""))

    /// The current time in RFC 1123 form, formatted at most once per second (the `Date` header).
    static func now() -> String {
        let second = Int64(Date().timeIntervalSince1970)
        if let hit = cachedNow.withLock({ $0.second == second ? $0.text : nil }) { return hit }
        let text = rfc1123(Date(timeIntervalSince1970: TimeInterval(second)))
        cachedNow.withLock { $0 = (second, text) }
        return text
    }

    /// `2024-05-01T12:00:00.000Z`.
    static func iso8601(_ date: Date) -> String {
        let t = components(date)
        let millis = Int((date.timeIntervalSince1970 - date.timeIntervalSince1970.rounded(.down)) * 1000)
        var out = [UInt8]()
        out.reserveCapacity(24)
        SigV4.appendDecimal(Int(t.tm_year) + 1900, digits: 4, to: &out)
        out.append(UInt8(ascii: "-"))
        SigV4.appendDecimal(Int(t.tm_mon) + 1, digits: 2, to: &out)
        out.append(UInt8(ascii: "-"))
        SigV4.appendDecimal(Int(t.tm_mday), digits: 2, to: &out)
        out.append(UInt8(ascii: "T"))
        SigV4.appendDecimal(Int(t.tm_hour), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        SigV4.appendDecimal(Int(t.tm_min), digits: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        SigV4.appendDecimal(Int(t.tm_sec), digits: 2, to: &out)
        out.append(UInt8(ascii: "."))
        SigV4.appendDecimal(min(999, max(0, millis)), digits: 3, to: &out)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses RFC 1123 (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`) dates; nil when malformed.
    static func parse(_ string: String) -> Date? {
        let tokens = string.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        var day: Int?
        var month: Int?
        var year: Int?
        var time: (Int, Int, Int)?
        switch tokens.count {
        case 6 where tokens[5] == "GMT":  // IMF-fixdate
            (day, month, year) = (Int(tokens[1]), months.firstIndex(of: tokens[2]), Int(tokens[3]))
            time = clock(tokens[4])
        case 4 where tokens[3] == "GMT":  // RFC 850
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let yy = Int(parts[2]) else { return nil }
            (day, month, year) = (Int(parts[0]), months.firstIndex(of: parts[1]), yy < 70 ? 2000 + yy : 1900 + yy)
            time = clock(tokens[2])
        case 5:  // asctime
            (day, month, year) = (Int(tokens[2]), months.firstIndex(of: tokens[1]), Int(tokens[4]))
            time = clock(tokens[3])
        default:
            return nil
        }
        guard let day, let month, let year, let time, (1...31).contains(day) else { return nil }
        var value = tm()
        value.tm_year = Int32(year - 1900)
        value.tm_mon = Int32(month)
        value.tm_mday = Int32(day)
        value.tm_hour = Int32(time.0)
        value.tm_min = Int32(time.1)
        value.tm_sec = Int32(time.2)
        return Date(timeIntervalSince1970: TimeInterval(timegm(&value)))
    }

    private static func clock(_ text: String) -> (Int, Int, Int)? {
        let p = text.split(separator: ":").compactMap { Int($0) }
        guard p.count == 3, p[0] < 24, p[1] < 60, p[2] < 61 else { return nil }
        return (p[0], p[1], p[2])
    }
}

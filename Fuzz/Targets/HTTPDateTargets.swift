import Essentials
import Foundation

extension FuzzCatalog {
    /// `Date` headers, listings' `LastModified` and SigV4's `x-amz-date`: the three parsers must not trap on any
    /// text, and what each accepts must format back to a text it parses to the same instant.
    static let httpDate = FuzzTarget(
        name: "http-date",
        summary: "HTTPDate.parse / parseISO8601 / parseAmzDate; formatted dates parse back to the same instant",
        maxLength: 128,
        seeds: {
            [
                "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
                "2009-10-12T17:50:30.000Z", "2009-10-12T17:50:30Z", "20130524T000000Z",
            ].map { Array($0.utf8) }
        },
        check: { bytes throws(FuzzFailure) in
            let text = String(decoding: bytes, as: UTF8.self)
            // The byte-level reading of the common form gives what the token reading gives, or leaves it to it.
            if let fast = HTTPDate.parseFixdate(text) {
                let general = HTTPDate.parseTokens(text)
                try expect(general == fast, "\(text.debugDescription): fixdate \(fast), tokens \(general as Any)")
            }
            if let date = HTTPDate.parse(text), formattable(date) {
                let again = HTTPDate.parse(HTTPDate.rfc1123(date))
                try expect(
                    again == date, "\(text.debugDescription) → \(date) → \(HTTPDate.rfc1123(date)) → \(again as Any)")
            }
            if let date = HTTPDate.parseISO8601(text), formattable(date) {
                let formatted = HTTPDate.iso8601(date)
                let again = HTTPDate.parseISO8601(formatted)
                // The formatter keeps milliseconds: the instant comes back to the millisecond, never later.
                try expect(
                    again.map { abs($0.timeIntervalSince(date)) < 0.001 } == true,
                    "\(text.debugDescription) → \(date) → \(formatted) → \(again as Any)")
            }
            if let date = HTTPDate.parseAmzDate(text) {
                try expect(formattable(date), "x-amz-date \(text.debugDescription) gave \(date), outside 0001…9999")
            }
            // The formatters on a date the bytes pick in the range every form can hold.
            var reader = FuzzReader(bytes)
            let seconds = Int64(bitPattern: reader.uint64()) % 253_402_300_800
            let date = Date(timeIntervalSince1970: TimeInterval(abs(seconds) - 62_135_596_800))
            try expect(HTTPDate.parse(HTTPDate.rfc1123(date)) == date, "rfc1123 round trip of \(date)")
            try expect(HTTPDate.parseISO8601(HTTPDate.iso8601(date)) == date, "ISO 8601 round trip of \(date)")
        })

    /// Years 1 to 9999: the four-digit forms can hold these and no others.
    private static func formattable(_ date: Date) -> Bool {
        date.timeIntervalSince1970 >= -62_135_596_800 && date.timeIntervalSince1970 < 253_402_300_800
    }
}

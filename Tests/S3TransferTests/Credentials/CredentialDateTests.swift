import Essentials
import Foundation
import S3Transfer
import Testing

/// Expiration times and `x-amz-meta-creation-date` values: internet date-times read by hand, never by ICU (which
/// crashed the process on a long fraction with an offset: Fuzz/regressions/credentials).
@Suite("Internet date-times (RFC 3339)")
struct CredentialDateTests {
    static let noon = Date(timeIntervalSince1970: 1_777_636_800)  // 2026-05-01T12:00:00Z

    @Test(arguments: [
        ("2026-05-01T12:00:00Z", 0.0), ("2026-05-01T12:00:00z", 0), ("2026-05-01t12:00:00Z", 0),
        ("2026-05-01T14:00:00+02:00", 0), ("2026-05-01T14:00:00+0200", 0), ("2026-05-01T08:30:00-03:30", 0),
        ("2026-05-01T12:00:00.5Z", 0.5), ("2026-05-01T12:00:00.250+00:00", 0.25),
        ("2026-05-01T14:00:00." + String(repeating: "2", count: 120) + "123+02:00", 0.222_222_222),
    ])
    func readsUTCOffsetsAndFractions(text: String, fraction: Double) throws {
        let date = try #require(CredentialDate.parse(text), "\(text)")
        #expect(abs(date.timeIntervalSince(Self.noon) - fraction) < 1e-6, "\(text): \(date)")
    }

    @Test(arguments: [
        "", "2026-05-01", "2026-05-01T12:00:00", "2026-05-01T12:00:00+02", "2026-05-01T12:00:00+2:00",
        "2026-05-01T12:00:00.Z", "2026-05-01T12:00:00.5", "2026-05-01T12:00:00Zjunk", "2026-13-01T12:00:00Z",
        "2026-05-01T24:00:00Z", "2026-05-01T12:00:00+24:00", "2026-05-01T12:00:00+02:60", "2026-05-01 12:00:00Z",
        "2026-05-01T12:00:00.1e5Z", "+026-05-01T12:00:00Z",
    ])
    func refusesEverythingElse(text: String) {
        #expect(CredentialDate.parse(text) == nil, "\(text)")
    }

    /// The input the fuzzer found, as a credential process would print it: parsed, no crash.
    @Test func theFuzzersExpirationIsRead() throws {
        let json = Data(
            #"{"Version": 1, "AccessKeyId": "AKID", "SecretAccessKey": "scret", "SessionToken": "tn", "Expiration": "2026-05-01T12:00:00.2222222222222222222222222222222222222222222222222222222222222222222222222222222222222123+02:00"}"#
                .utf8)
        let fields = try CredentialJSON.parse(json, tokenKey: "SessionToken", requiresExpiration: true).get()
        let expiration = try #require(fields.expiration)
        #expect(abs(expiration.timeIntervalSince(Self.noon.addingTimeInterval(-7200)) - 0.222_222_222) < 1e-6)
    }
}

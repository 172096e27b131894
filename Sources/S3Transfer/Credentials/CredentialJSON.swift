package import AWSSigV4
import Essentials
package import Foundation

/// Expiration times as credential sources write them: ISO 8601 with `Z` or an offset, with or without fractions
/// of a second (`2024-05-01T12:00:00Z`, `2024-05-01T12:00:00.123+02:00`). Pure functions; thread-safe.
package enum CredentialDate {
    /// The date, nil when the text is not an internet date-time (``HTTPDate/parseInternetDateTime(_:)``).
    package static func parse(_ text: String) -> Date? { HTTPDate.parseInternetDateTime(text) }

    /// `2024-05-01T12:00:00Z`.
    package static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// The JSON document that `credential_process`, container endpoints and instance metadata answer with:
/// `AccessKeyId`, `SecretAccessKey`, the token (`SessionToken` for a process, `Token` for the endpoints) and
/// `Expiration`. Pure functions; thread-safe.
package enum CredentialJSON {
    /// The fields read.
    package struct Fields: Sendable {
        package var credentials: AWSCredentials
        package var expiration: Date?
        /// The document's `Version`: nil when it has none, -1 when it is not an integer.
        package var version: Int?
    }

    /// Reads the document.
    /// - Parameters:
    ///   - data: The bytes received.
    ///   - tokenKey: `SessionToken` or `Token`.
    ///   - requiresExpiration: Whether `Expiration` must be there (the endpoints always send it).
    /// - Returns: The fields, or a reason (never quoting the document, which may hold a secret).
    package static func parse(_ data: Data, tokenKey: String, requiresExpiration: Bool) -> Result<Fields, Failure> {
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch let failure as Failure {
            return .failure(failure)
        } catch {
            return .failure(Failure("its output is not a JSON object"))
        }
        guard let key = document.strings["AccessKeyId"], !key.isEmpty else {
            return .failure(Failure("AccessKeyId is missing"))
        }
        guard let secret = document.strings["SecretAccessKey"], !secret.isEmpty else {
            return .failure(Failure("SecretAccessKey is missing"))
        }
        var expiration: Date?
        if let text = document.strings["Expiration"] {
            guard let date = CredentialDate.parse(text) else {
                return .failure(
                    Failure("Expiration \"\(CredentialError.oneLine(text, limit: 40))\" is not an ISO 8601 date"))
            }
            expiration = date
        } else if requiresExpiration {
            return .failure(Failure("Expiration is missing"))
        }
        let token = document.strings[tokenKey].flatMap { $0.isEmpty ? nil : $0 }
        return .success(
            Fields(
                credentials: AWSCredentials(accessKeyID: key, secretAccessKey: secret, sessionToken: token),
                expiration: expiration, version: document.version))
    }

    /// The keys read, each checked for its type (a number where a string belongs is refused, naming the key).
    private struct Document: Decodable {
        static let keys = ["AccessKeyId", "SecretAccessKey", "SessionToken", "Token", "Expiration"]
        var strings: [String: String] = [:]
        var version: Int?

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for name in Self.keys {
                let key = Key(stringValue: name)
                guard container.contains(key), try !container.decodeNil(forKey: key) else { continue }
                // try?: thrown below as "not a string"
                guard let value = try? container.decode(String.self, forKey: key) else {
                    throw Failure("\(name) is not a string")
                }
                strings[name] = value
            }
            let versionKey = Key(stringValue: "Version")
            if container.contains(versionKey) {
                // A JSON `true` or `"1"` is not the version 1 (JSONDecoder reads neither as an Int).
                version = try? container.decode(Int.self, forKey: versionKey)
                if version == nil { version = -1 }
            }
        }
    }

    /// Why a document was refused.
    package struct Failure: Error, Sendable {
        package var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

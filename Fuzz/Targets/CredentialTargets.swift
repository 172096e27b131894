import Foundation
import S3Transfer

extension FuzzCatalog {
    /// The files and answers credentials come from: `~/.aws/credentials` and `~/.aws/config` (the INI dialect),
    /// the JSON of `credential_process` and the container / instance endpoints, and their expiration dates.
    static let credentials = FuzzTarget(
        name: "credentials",
        summary: "ProfileFile.parse (INI), CredentialJSON.parse, CredentialDate.parse; sections and fields well formed",
        maxLength: 4096,
        seeds: {
            [
                """
                [default]
                aws_access_key_id = AKIDEXAMPLE
                aws_secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY
                # comment
                ; comment
                [profile photos]
                region = eu-central-1
                s3 =
                  addressing_style = path
                """,
                """
                {"Version": 1, "AccessKeyId": "AKID", "SecretAccessKey": "secret", "SessionToken": "token",
                 "Expiration": "2026-05-01T12:00:00.123+02:00"}
                """,
                "\u{FEFF}[default]\nregion=us-east-1\n",
            ].map { Array($0.utf8) }
        },
        check: { bytes throws(FuzzFailure) in
            let data = Data(bytes)
            if let sections = try? ProfileFile.parse(data, path: "fuzz") {
                try expect(Set(sections.map(\.name)).count == sections.count, "a section read twice")
                for section in sections {
                    try expect(section.values.keys.allSatisfy { $0 == $0.lowercased() }, "a key not lower-cased")
                }
            }
            for tokenKey in ["SessionToken", "Token"] {
                if case .success(let fields) = CredentialJSON.parse(data, tokenKey: tokenKey, requiresExpiration: true)
                {
                    try expect(
                        !fields.credentials.accessKeyID.isEmpty && !fields.credentials.secretAccessKey.isEmpty
                            && fields.expiration != nil,
                        "accepted credentials without a key, a secret or a required expiration")
                }
            }
            _ = CredentialDate.parse(String(decoding: bytes, as: UTF8.self))
        })
}

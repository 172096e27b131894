import Essentials
package import Foundation

/// The INI dialect of `~/.aws/credentials` and `~/.aws/config`, read as botocore reads it (Python's
/// `RawConfigParser`): `[section]` headers, `key = value` or `key: value` lines (keys lower-cased, values
/// trimmed), whole-line comments starting with `#` or `;` (no inline comments: a `#` inside a value is part of
/// it), indented lines continuing the previous value (nested settings such as `s3 =` then `  addressing_style =
/// path`). A key before any section, a line that is neither, a repeated section or a repeated key in one section
/// is an error naming the file and the line, as it is for botocore.
///
/// Pure functions; thread-safe.
package enum ProfileFile {
    /// One `[section]` with its keys.
    package struct Section: Sendable, Hashable {
        /// The text between the brackets, as written.
        package var name: String
        /// Lower-cased keys and their values.
        package var values: [String: String]
    }

    /// The largest file read (a credentials file is a few hundred bytes).
    static let sizeLimit = 1 << 20

    /// Reads and parses a file.
    /// - Throws: ``CredentialError/unreadableFile(path:reason:)`` when it cannot be read or is too large,
    ///   ``CredentialError/malformedFile(path:line:reason:)`` when it is not valid.
    static func read(_ path: String) throws(CredentialError) -> [Section] {
        let data: Data
        do {
            data = try LocalFile.read(URL(fileURLWithPath: path), limit: sizeLimit + 1)
        } catch {
            throw .unreadableFile(path: path, reason: LocalFile.reason(error, otherwise: "it is not a readable file"))
        }
        guard data.count <= sizeLimit else { throw .unreadableFile(path: path, reason: "it is larger than 1 MiB") }
        return try parse(data, path: path)
    }

    /// Parses the bytes of a file.
    /// - Parameters:
    ///   - data: The file's bytes (UTF-8, a byte order mark allowed).
    ///   - path: The file's path, for errors.
    /// - Throws: ``CredentialError/malformedFile(path:line:reason:)``.
    package static func parse(_ data: Data, path: String) throws(CredentialError) -> [Section] {
        var bytes = Array(data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .malformedFile(path: path, line: 1, reason: "it is not UTF-8 text")
        }
        var sections: [Section] = []
        var seen: Set<String> = []
        var lastKey: String?
        // "\r\n" is one Character: lines end at it, at "\n" and at a lone "\r", as Python's universal newlines.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (index, line) in lines.enumerated() {
            let number = index + 1
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty {
                lastKey = nil
                continue
            }
            if trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
            if let first = line.first, first == " " || first == "\t", let key = lastKey {
                sections[sections.count - 1].values[key]! += "\n" + trimmed
                continue
            }
            if trimmed.hasPrefix("["), let close = trimmed.lastIndex(of: "]"),
                close > trimmed.index(after: trimmed.startIndex)
            {
                let name = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
                guard seen.insert(name).inserted else {
                    throw .malformedFile(path: path, line: number, reason: "the section [\(name)] appears twice")
                }
                sections.append(Section(name: name, values: [:]))
                lastKey = nil
                continue
            }
            guard !sections.isEmpty else {
                throw .malformedFile(path: path, line: number, reason: "a value comes before any [section]")
            }
            guard let separator = trimmed.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
                throw .malformedFile(path: path, line: number, reason: "expected key = value")
            }
            let key = trimmed[..<separator].trimmingCharacters(in: .whitespaces).lowercased()
            guard !key.isEmpty else { throw .malformedFile(path: path, line: number, reason: "a value without a key") }
            let value = trimmed[trimmed.index(after: separator)...].trimmingCharacters(in: .whitespaces)
            guard sections[sections.count - 1].values[key] == nil else {
                let section = sections[sections.count - 1].name
                throw .malformedFile(path: path, line: number, reason: "\(key) appears twice in [\(section)]")
            }
            sections[sections.count - 1].values[key] = value
            lastKey = key
        }
        return sections
    }
}

/// The profiles of the two shared files as botocore sees them: in the credentials file every `[x]` is the
/// profile `x`; in the config file `[profile x]` is the profile `x` and `[default]` the profile `default` (other
/// sections, such as `[sso-session …]` or `[services …]`, are not profiles). A profile in both files has the
/// config file's keys with the credentials file's over them. A value; thread-safe.
package struct SharedProfiles: Sendable {
    /// The credentials file's path (absent or not).
    package var credentialsPath: String
    /// The config file's path (absent or not).
    package var configPath: String
    /// The credentials file's profiles; nil when the file does not exist.
    package var credentials: [String: [String: String]]?
    /// The config file's profiles; nil when the file does not exist.
    package var config: [String: [String: String]]?

    /// - Parameters:
    ///   - credentialsPath: The credentials file's path.
    ///   - configPath: The config file's path.
    ///   - credentialsSections: Its sections, nil when absent.
    ///   - configSections: The config file's sections, nil when absent.
    package init(
        credentialsPath: String, configPath: String, credentialsSections: [ProfileFile.Section]?,
        configSections: [ProfileFile.Section]?
    ) {
        self.credentialsPath = credentialsPath
        self.configPath = configPath
        credentials = credentialsSections.map { sections in
            var profiles: [String: [String: String]] = [:]
            for section in sections { profiles[section.name] = section.values }
            return profiles
        }
        config = configSections.map { sections in
            var profiles: [String: [String: String]] = [:]
            for section in sections {
                if section.name == "default" {
                    profiles["default"] = section.values
                    continue
                }
                let words = section.name.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if words.count == 2, words[0] == "profile" { profiles[String(words[1])] = section.values }
            }
            return profiles
        }
    }

    /// Whether either file has the profile.
    package func contains(_ profile: String) -> Bool {
        credentials?[profile] != nil || config?[profile] != nil
    }

    /// The profile's keys from both files (the credentials file's win); nil when neither has it.
    package func merged(_ profile: String) -> [String: String]? {
        guard contains(profile) else { return nil }
        var values = config?[profile] ?? [:]
        for (key, value) in credentials?[profile] ?? [:] { values[key] = value }
        return values
    }
}

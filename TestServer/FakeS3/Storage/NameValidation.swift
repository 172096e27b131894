/// Rules for bucket names and object keys. Every name that reaches storage passed these checks.
enum NameValidation {
    /// S3's bucket naming rules: 3–63 characters of `a-z 0-9 . -`, starting and ending with a letter
    /// or digit, no `..`, not an IP address. Such a name is also a safe directory name.
    static func isValidBucketName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (3...63).contains(bytes.count) else { return false }
        func alnum(_ b: UInt8) -> Bool { (b >= 97 && b <= 122) || (b >= 48 && b <= 57) }
        guard alnum(bytes.first!), alnum(bytes.last!) else { return false }
        for b in bytes where !(alnum(b) || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")) { return false }
        if name.contains("..") || name.contains(".-") || name.contains("-.") { return false }
        let parts = name.split(separator: ".")
        if parts.count == 4 && parts.allSatisfy({ Int($0) != nil }) { return false }
        return true
    }

    /// Checks an object key: 1 to 1,024 UTF-8 bytes, no NUL (a listing's XML cannot carry it). Any other key
    /// S3 accepts is accepted — `..` segments, a leading `/`, `\\` — because no key ever becomes a path: disk
    /// storage names an object's files after the SHA-256 of its key, inside the storage root (see `ObjectStore`).
    /// - Throws: `KeyTooLongError` or `InvalidArgument`.
    static func validateKey(_ key: String) throws(S3Error) {
        let bytes = key.utf8
        if bytes.count > 1024 { throw .keyTooLong }
        if bytes.isEmpty { throw .invalidArgument("The object key must not be empty.", name: "key", value: key) }
        if bytes.contains(0) {
            throw .invalidArgument("Object keys must not contain NUL characters.", name: "key")
        }
    }
}

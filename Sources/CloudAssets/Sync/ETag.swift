/// ETags compared the way S3 means them: without the surrounding quotes (and a weak `W/` marker).
enum ETag {
    static func normalized(_ etag: String) -> String {
        var value = Substring(etag)
        if value.hasPrefix("W/") { value = value.dropFirst(2) }
        if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
        return String(value)
    }

    static func same(_ a: String, _ b: String) -> Bool { normalized(a) == normalized(b) }
}

import Foundation

/// One multipart upload driven through ``S3TestClient`` (bucket `photos`).
struct MultipartSession {
    let client: S3TestClient
    let key: String
    let id: String

    /// CreateMultipartUpload with extra headers (`x-amz-checksum-algorithm`, …).
    static func start(_ client: S3TestClient, key: String, headers: [(String, String)] = []) async throws
        -> MultipartSession
    {
        let r = try await client.send("POST", "/photos/\(key)", query: [("uploads", "")], headers: headers)
        guard r.status == 200, let id = xmlValues("UploadId", in: r.text).first else {
            throw SessionError(response: r)
        }
        return MultipartSession(client: client, key: key, id: id)
    }

    struct SessionError: Error {
        var response: TestResponse
    }

    /// UploadPart; the response (its `ETag` header is the part's ETag).
    @discardableResult
    func put(_ number: Int, _ data: Data, headers: [(String, String)] = []) async throws -> (
        etag: String, response: TestResponse
    ) {
        let r = try await client.send(
            "PUT", "/photos/\(key)", query: [("partNumber", String(number)), ("uploadId", id)], headers: headers,
            body: data, payloadHash: "UNSIGNED-PAYLOAD")
        return (r.header("ETag") ?? "", r)
    }

    /// CompleteMultipartUpload listing `parts` (number, ETag, optional checksum element).
    func complete(
        _ parts: [(Int, String)], checksums: [String: String] = [:], headers: [(String, String)] = []
    ) async throws -> TestResponse {
        var xml = "<CompleteMultipartUpload>"
        for (number, etag) in parts {
            xml += "<Part><PartNumber>\(number)</PartNumber><ETag>\(etag)</ETag>"
            for (element, value) in checksums.sorted(by: { $0.key < $1.key }) where element.hasSuffix("#\(number)") {
                let name = String(element.prefix { $0 != "#" })
                xml += "<\(name)>\(value)</\(name)>"
            }
            xml += "</Part>"
        }
        xml += "</CompleteMultipartUpload>"
        return try await client.send(
            "POST", "/photos/\(key)", query: [("uploadId", id)], headers: headers, body: Data(xml.utf8))
    }

    /// ListParts.
    func list() async throws -> TestResponse {
        try await client.send("GET", "/photos/\(key)", query: [("uploadId", id)])
    }
}

/// The texts of every `<name>` element of a document, in order.
func xmlValues(_ name: String, in text: String) -> [String] {
    text.components(separatedBy: "<\(name)>").dropFirst().map { String($0.prefix { $0 != "<" }) }
}

/// CRC-32C (Castagnoli, reflected 0x82F63B78), table-driven: the tests' own reference, independent of the
/// server's hardware-assisted one.
enum TestCRC32C {
    static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    static func checksum(_ data: Data, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        table.withUnsafeBufferPointer { t in
            data.withUnsafeBytes { raw in
                for byte in raw { c = t[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
            }
        }
        return ~c
    }

    /// Base64 of the big-endian bytes, as S3 writes a CRC.
    static func base64(_ value: UInt32) -> String {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
            .base64EncodedString()
    }

    static func base64(of data: Data) -> String { base64(checksum(data)) }
}

/// The XML request bodies of CompleteMultipartUpload and DeleteObjects, read into what their operations need
/// (all of a document is read and checked before an operation acts on any of it).
package enum RequestDocuments {
    /// One `<Part>` of a CompleteMultipartUpload document.
    package struct CompletionPart: Equatable, Sendable {
        package var number: Int
        package var etag: String
        /// The text of the part's checksum element of the upload's algorithm, when there is one.
        package var checksum: String?

        package init(number: Int, etag: String, checksum: String?) {
            self.number = number
            self.etag = etag
            self.checksum = checksum
        }
    }

    /// The parts a `<CompleteMultipartUpload>` document lists, in its order (the order is checked by the operation).
    /// - Parameter checksumElement: The checksum element of the upload's algorithm (`ChecksumCRC32`), nil for none.
    /// - Throws: `MalformedXML`: not XML, another root, no part, or a part without a numeric `PartNumber` or an
    ///   `ETag`.
    package static func completionParts(_ body: [UInt8], checksumElement: String?) throws(S3Error)
        -> [CompletionPart]
    {
        let root = try XMLElement.parse(body)
        guard root.name == "CompleteMultipartUpload" else { throw .malformedXML }
        let parts = try root.all("Part").map { (p: XMLElement) throws(S3Error) -> CompletionPart in
            guard let n = p.child("PartNumber").flatMap({ Int($0.text) }), let etag = p.child("ETag")?.text else {
                throw S3Error.malformedXML
            }
            return CompletionPart(number: n, etag: etag, checksum: checksumElement.flatMap { p.child($0)?.text })
        }
        guard !parts.isEmpty else { throw .malformedXML }
        return parts
    }

    /// The keys a `<Delete>` document names (1 to 1,000, in its order) and whether it asks for a quiet answer.
    /// - Throws: `MalformedXML`: not XML, another root, no object or more than 1,000, or an object without a `Key`.
    package static func deleteRequest(_ body: [UInt8]) throws(S3Error) -> (quiet: Bool, keys: [String]) {
        let root = try XMLElement.parse(body)
        guard root.name == "Delete" else { throw .malformedXML }
        let quiet = root.child("Quiet")?.text.lowercased() == "true"
        let objects = root.all("Object")
        guard !objects.isEmpty, objects.count <= 1000 else { throw .malformedXML }
        let keys = try objects.map { (object: XMLElement) throws(S3Error) -> String in
            guard let key = object.child("Key")?.text else { throw S3Error.malformedXML }
            return key
        }
        return (quiet, keys)
    }
}

import FakeS3
import Foundation
import S3Transfer

extension FuzzCatalog {
    /// The fake server's XML reading of request bodies (`XMLElement`, the CompleteMultipartUpload and
    /// DeleteObjects documents). By the first byte:
    ///
    /// - 0: the rest is a body: the reader and the two documents must not trap, and what they return must lie
    ///   within the body (no more text than it holds, 1 to 1,000 keys).
    /// - 1: a tree of elements the input picks (names of any letters, texts of any Unicode, namespaces, text
    ///   between children), written by the server's `XMLWriter`, must read back as the same tree.
    /// - 2: parts (numbers, ETags and checksums of any Unicode) written by the client's
    ///   CompleteMultipartUpload writer must read back as the same parts.
    /// - 3: keys written as a `<Delete>` document by `XMLWriter` must read back as the same keys.
    static let serverXML = FuzzTarget(
        name: "server-xml",
        summary: "fake S3 XMLElement + CompleteMultipartUpload/Delete bodies; written trees and documents read back",
        maxLength: 16_384,
        cpuMinutesGoal: 30,
        seeds: { ServerXMLFuzz.seeds() },
        check: { bytes throws(FuzzFailure) in
            guard let first = bytes.first else { return }
            var reader = FuzzReader(Array(bytes.dropFirst()))
            switch first % 4 {
            case 0: try ServerXMLFuzz.checkBody(Array(bytes.dropFirst()))
            case 1: try ServerXMLFuzz.checkTree(&reader)
            case 2: try ServerXMLFuzz.checkCompletion(&reader)
            default: try ServerXMLFuzz.checkDelete(&reader)
            }
        })
}

enum ServerXMLFuzz {
    static func checkBody(_ body: [UInt8]) throws(FuzzFailure) {
        if let root = try? XMLElement.parse(body) {
            try expect(!root.name.isEmpty, "a root element without a name")
            try expect(textBytes(root) <= body.count, "the tree holds more text than the body")
        }
        if let parts = try? RequestDocuments.completionParts(body, checksumElement: "ChecksumCRC32") {
            try expect(!parts.isEmpty, "a completion of no parts")
        }
        if let request = try? RequestDocuments.deleteRequest(body) {
            try expect((1...1000).contains(request.keys.count), "a Delete of \(request.keys.count) keys")
        }
    }

    /// The bytes of every name and text in the tree.
    static func textBytes(_ element: XMLElement) -> Int {
        element.children.reduce(element.name.utf8.count + element.text.utf8.count) { $0 + textBytes($1) }
    }

    /// An element as the harness means it: its name, its text (all text pieces, concatenated) and children.
    struct Tree: Equatable {
        var name: [UInt8]
        var text: [UInt8]
        var children: [Tree]

        init(_ element: XMLElement) {
            name = Array(element.name.utf8)
            text = Array(element.text.utf8)
            children = element.children.map(Tree.init)
        }

        init(name: String, text: String, children: [Tree]) {
            self.name = Array(name.utf8)
            self.text = Array(text.utf8)
            self.children = children
        }
    }

    /// A name of the letters, digits and `-._` the input gives (a letter first; `a` when none).
    static func name(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let letter = scalar.properties.isAlphabetic
            let other = "0"..."9" ~= scalar || "-._".unicodeScalars.contains(scalar)
            if letter || (!scalars.isEmpty && other) { scalars.append(scalar) }
        }
        return scalars.isEmpty ? "a" : String(scalars)
    }

    /// Writes an element the input picks (children up to `depth` levels down) and returns what was meant.
    static func write(_ writer: inout XMLWriter, _ reader: inout FuzzReader, depth: Int) -> Tree {
        let elementName = name(reader.string(upTo: 12))
        let shape = reader.byte()
        if depth == 0 || shape % 3 == 0 {
            let text = reader.string(upTo: 40)
            writer.element(elementName, text)
            return Tree(name: elementName, text: text, children: [])
        }
        writer.open(elementName, namespace: shape & 4 != 0)
        var children: [Tree] = []
        var text = ""
        for _ in 0..<(1 + shape / 8 % 4) {
            if reader.byte() % 4 == 0 {
                let piece = reader.string(upTo: 16)
                writer.text(piece)
                text += piece
            }
            children.append(write(&writer, &reader, depth: depth - 1))
        }
        writer.close(elementName)
        return Tree(name: elementName, text: text, children: children)
    }

    static func checkTree(_ reader: inout FuzzReader) throws(FuzzFailure) {
        var writer = XMLWriter()
        let meant = write(&writer, &reader, depth: 4)
        let document = writer.document
        do {
            let read = try XMLElement.parse(Array(document.utf8))
            try expect(Tree(read) == meant, "\(document.debugDescription) does not read back as written")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("\(document.debugDescription), written by XMLWriter, does not read: \(error)")
        }
    }

    static func checkCompletion(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let algorithm = S3ChecksumAlgorithm.allCases[Int(reader.byte()) % S3ChecksumAlgorithm.allCases.count]
        var parts: [S3PartToComplete] = []
        for _ in 0..<(1 + reader.byte() % 8) {
            let number = Int(reader.uint32() % 10_001)
            let etag = reader.string(upTo: 40)
            let checksum =
                reader.byte() % 2 == 0 ? nil : S3ChecksumValue(algorithm: algorithm, base64: reader.string(upTo: 16))
            parts.append(S3PartToComplete(number: number, etag: etag, checksum: checksum))
        }
        let document = S3Client.completionDocument(parts)
        let read: [RequestDocuments.CompletionPart]
        do {
            read = try RequestDocuments.completionParts(Array(document.utf8), checksumElement: algorithm.xmlElement)
        } catch {
            throw FuzzFailure("the client's completion \(document.debugDescription) does not read: \(error)")
        }
        let meant = parts.map { part in
            RequestDocuments.CompletionPart(
                number: part.number, etag: "\"\(part.etag)\"", checksum: part.checksum?.base64)
        }
        try expect(
            read.count == meant.count
                && zip(read, meant).allSatisfy {
                    $0.number == $1.number && ServerFuzzing.same($0.etag, $1.etag)
                        && ServerFuzzing.same($0.checksum, $1.checksum)
                },
            "the client's completion \(document.debugDescription) reads as \(read)")
    }

    static func checkDelete(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let quiet = reader.byte() % 2 == 0
        var keys: [String] = []
        for _ in 0..<(1 + reader.byte() % 8) { keys.append(reader.string(upTo: 60)) }
        var writer = XMLWriter()
        writer.open("Delete")
        if quiet { writer.element("Quiet", "true") }
        for key in keys {
            writer.open("Object", namespace: false)
            writer.element("Key", key)
            writer.close("Object")
        }
        writer.close("Delete")
        let document = writer.document
        do {
            let request = try RequestDocuments.deleteRequest(Array(document.utf8))
            try expect(
                request.quiet == quiet && request.keys.count == keys.count
                    && zip(request.keys, keys).allSatisfy { ServerFuzzing.same($0, $1) },
                "\(document.debugDescription) reads as \(request)")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("\(document.debugDescription) does not read: \(error)")
        }
    }

    static func seeds() -> [[UInt8]] {
        var seeds: [[UInt8]] = [
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <CompleteMultipartUpload xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Part><PartNumber>1</PartNumber><ETag>"a54357aff0632cce46d942af68356b38"</ETag>\
            <ChecksumCRC32>sZ0ZfA==</ChecksumCRC32></Part>
              <Part><PartNumber>2</PartNumber><ETag>&quot;0c78aef83f66abc1fa1e8477f296d394&quot;</ETag></Part>
            </CompleteMultipartUpload>
            """,
            """
            <Delete><Quiet>true</Quiet><Object><Key>a&amp;b&#x41;&#66;</Key></Object>\
            <Object><Key><![CDATA[c<d]]></Key><VersionId>null</VersionId></Object><!-- c --></Delete>
            """,
            "<CreateBucketConfiguration xmlns='x'><LocationConstraint>eu-west-1</LocationConstraint>"
                + "</CreateBucketConfiguration>",
        ].map { [0] + Array($0.utf8) }
        seeds.append([1, 3] + Array("Tag".utf8) + [12, 4, 1] + Array("a".utf8) + [3, 2] + Array("é\u{1}".utf8))
        seeds.append(
            [2, 1, 2] + [0, 0, 0, 1, 4] + Array("abcd".utf8) + [1, 4] + Array("AA==".utf8) + [
                0, 0, 0, 2, 2, 0x26, 0x3C, 0,
            ])
        seeds.append([3, 1, 2, 3] + Array("a/b".utf8) + [4] + Array("<&>\"".utf8))
        return seeds
    }
}

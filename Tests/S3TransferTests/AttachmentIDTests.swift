import Foundation
import Testing

@testable import S3Transfer

@Suite struct AttachmentIDTests {
    @Test("request identifiers are distinct, well-formed version-4 UUIDs sharing the process's prefix")
    func identifiersAreDistinctVersion4UUIDs() {
        let ids = (0..<1000).map { _ in AttachmentID.next() }
        #expect(Set(ids).count == ids.count)
        let uuids = ids.map(\.uuid)
        #expect(Set(uuids).count == uuids.count)
        for uuid in uuids.prefix(10) {
            let text = uuid.uuidString
            #expect(text[text.index(text.startIndex, offsetBy: 14)] == "4")
            #expect("89AB".contains(text[text.index(text.startIndex, offsetBy: 19)]))
            #expect(text.prefix(18) == uuids[0].uuidString.prefix(18))
        }
    }
}

import Foundation
import Video

/// The `Video` module's reader on bytes in memory, for the library's tests.
enum VideoMetadataReaderForTests {
    static func metadata(of data: Data) throws -> VideoMetadata {
        try VideoMetadataReader.read(bytes: [UInt8](data)).metadata
    }
}

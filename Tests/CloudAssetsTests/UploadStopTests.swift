import Foundation
import S3Transfer
import Testing

@testable import CloudAssets

/// Which upload errors stop the other uploads of a pass (the bucket's, the credentials', the connection's) and
/// which fail one upload alone (its file's, its object's).
@Suite struct UploadStopTests {
    @Test("an error of one file or one object fails that upload alone; the bucket's or the connection's stops all")
    func errorsAreOfOneUploadOrOfAll() {
        #expect(!UploadEngine.stopsEveryUpload(S3Error.fileSystem(path: "/x", errno: EIO)))
        #expect(!UploadEngine.stopsEveryUpload(S3Error.checksumMismatch(expected: "a", actual: "b", algorithm: "md5")))
        #expect(!UploadEngine.stopsEveryUpload(S3Error.accessDenied))
        #expect(!UploadEngine.stopsEveryUpload(S3Error.retriesExhausted(lastError: .slowDown, attempts: 5)))
        #expect(!UploadEngine.stopsEveryUpload(CocoaError(.fileReadNoPermission)))
        #expect(UploadEngine.stopsEveryUpload(S3Error.noSuchBucket))
        #expect(UploadEngine.stopsEveryUpload(S3Error.signatureDoesNotMatch))
        #expect(UploadEngine.stopsEveryUpload(S3Error.invalidAccessKeyId))
        #expect(
            UploadEngine.stopsEveryUpload(
                S3Error.retriesExhausted(lastError: .transport(curlCode: 7, message: "refused"), attempts: 5)))
    }
}

import AWSSigV4
import CZlib
import Foundation
import Hashing
import NIOCore

extension ServerCore {
    /// Stores an object directly (no HTTP), as a PUT would.
    @discardableResult
    func putObject(
        bucket: String, key: String, data: Data, contentType: String? = nil, metadata: [String: String] = [:],
        checksumCRC32: Bool = false
    ) throws(S3Error) -> ObjectInfo {
        try NameValidation.validateKey(key)
        var info = ObjectInfo(
            key: key, size: Int64(data.count), etag: "\"\(SigV4.hex(Insecure.MD5.hash(data: data)))\"",
            lastModified: S3Service.now(), contentType: contentType ?? "binary/octet-stream")
        for (name, value) in metadata { info.userMetadata[name.lowercased()] = value }
        if checksumCRC32 {
            let crc = data.withUnsafeBytes { czlib_crc32(0, $0.baseAddress, $0.count) }
            info.checksums["crc32"] = Data(Digest32.bigEndian(crc)).base64EncodedString()
        }
        let sink = try store.makeUpload(bucket: bucket, allocator: ByteBufferAllocator(), expectedSize: data.count)
        do {
            try sink.write(ByteBuffer(bytes: data))
        } catch {
            sink.abort()
            throw error
        }
        return try store.commit(bucket: bucket, info: info, upload: sink)
    }
}

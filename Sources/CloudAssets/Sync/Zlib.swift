import CZlib
package import Foundation

/// zlib streams (compress2 / uncompress2).
package enum Zlib {
    package static func compress(_ data: Data) -> Data {
        var out = Data(count: czlib_compress_bound(data.count))
        var length = out.count
        let rc = out.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                czlib_compress(output.baseAddress, &length, input.baseAddress, input.count, 6)
            }
        }
        precondition(rc == 0, "compress2 cannot fail with a bound-sized buffer")
        out.count = length
        return out
    }

    /// Inflates a whole stream of `size` bytes; nil when it is not one.
    package static func uncompress(_ data: Data, size: Int) -> Data? {
        guard size >= 0, size < 1 << 31 else { return nil }
        var out = Data(count: size)
        var length = size
        let rc = out.withUnsafeMutableBytes { output in
            data.withUnsafeBytes { input in
                czlib_uncompress(output.baseAddress, &length, input.baseAddress, input.count)
            }
        }
        guard rc == 0, length == size else { return nil }
        return out
    }
}

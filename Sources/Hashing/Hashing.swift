internal import CLibCrypto
public import Foundation

/// A message digest function: MD5, SHA-1 or SHA-256, computed by OpenSSL's libcrypto (the library libcurl already
/// links), with the value semantics of swift-crypto's hash functions: a copy hashes on independently of the
/// original, and ``finalize()`` leaves the function usable. Thread-safety: a value is used by one thread at a time,
/// as any `var`; copies may go to other threads.
public protocol HashFunction: Sendable {
    /// The algorithm's block size in bytes (for HMAC).
    static var blockByteCount: Int { get }
    /// A function with nothing hashed yet.
    init()
    /// Hashes `bytes` after what was hashed so far.
    mutating func update(bufferPointer bytes: UnsafeRawBufferPointer)
    /// The digest of everything hashed so far.
    func finalize() -> HashDigest
}

extension HashFunction {
    /// The digest type, as swift-crypto spells it (`SHA256.Digest`).
    public typealias Digest = HashDigest

    /// Hashes `data` after what was hashed so far.
    public mutating func update(data: some DataProtocol) {
        if let done = data.withContiguousStorageIfAvailable({ update(bufferPointer: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        for region in data.regions { region.withUnsafeBytes { update(bufferPointer: $0) } }
    }

    /// The digest of `data`.
    public static func hash(data: some DataProtocol) -> HashDigest {
        var function = Self()
        function.update(data: data)
        return function.finalize()
    }

    /// The digest of the bytes in `bytes`.
    public static func hash(bufferPointer bytes: UnsafeRawBufferPointer) -> HashDigest {
        var function = Self()
        function.update(bufferPointer: bytes)
        return function.finalize()
    }
}

/// A digest's bytes. A collection of bytes, so `Data(digest)`, `Array(digest)` and `digest.map` read it.
public struct HashDigest: Sendable, Hashable, RandomAccessCollection, ContiguousBytes {
    public let bytes: [UInt8]
    public var startIndex: Int { bytes.startIndex }
    public var endIndex: Int { bytes.endIndex }
    public subscript(position: Int) -> UInt8 { bytes[position] }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// An OpenSSL digest context, shared by copies of a hash function until one of them changes it.
// @unchecked: the context is changed only through a uniquely referenced box (copy-on-write), or copied under no
// change; never by two threads at once.
final class DigestContext: @unchecked Sendable {
    let context: OpaquePointer

    init(_ algorithm: OpaquePointer?) {
        context = EVP_MD_CTX_new()!
        EVP_DigestInit_ex(context, algorithm, nil)
    }

    init(copying other: DigestContext) {
        context = EVP_MD_CTX_new()!
        EVP_MD_CTX_copy_ex(context, other.context)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest, from a copy of the context (this one goes on).
    func digest(length: Int) -> HashDigest {
        let copy = DigestContext(copying: self)
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var written: UInt32 = 0
        EVP_DigestFinal_ex(copy.context, &out, &written)
        return HashDigest(bytes: Array(out.prefix(min(Int(written), length))))
    }
}

/// Which OpenSSL digest a ``Hash`` computes.
public protocol HashAlgorithm: Sendable {
    /// The digest's length in bytes.
    static var digestByteCount: Int { get }
    /// OpenSSL's digest (`EVP_sha256()`, …).
    static var digest: OpaquePointer? { get }
}

/// A hash function of one algorithm (``SHA256``, ``Insecure/MD5``, ``Insecure/SHA1``).
public struct Hash<Algorithm: HashAlgorithm>: HashFunction {
    public static var blockByteCount: Int { 64 }
    /// The context, shared by copies until one of them changes it (copy-on-write).
    private var box = DigestContext(Algorithm.digest)

    public init() {}

    public mutating func update(bufferPointer bytes: UnsafeRawBufferPointer) {
        if !isKnownUniquelyReferenced(&box) { box = DigestContext(copying: box) }
        box.update(bytes)
    }

    public func finalize() -> HashDigest { box.digest(length: Algorithm.digestByteCount) }
}

/// SHA-256 (FIPS 180-4).
public enum SHA256Algorithm: HashAlgorithm {
    public static var digestByteCount: Int { 32 }
    public static var digest: OpaquePointer? { EVP_sha256() }
}

/// MD5 (RFC 1321).
public enum MD5Algorithm: HashAlgorithm {
    public static var digestByteCount: Int { 16 }
    public static var digest: OpaquePointer? { EVP_md5() }
}

/// SHA-1 (FIPS 180-4).
public enum SHA1Algorithm: HashAlgorithm {
    public static var digestByteCount: Int { 20 }
    public static var digest: OpaquePointer? { EVP_sha1() }
}

/// SHA-256 (FIPS 180-4).
public typealias SHA256 = Hash<SHA256Algorithm>

/// Hash functions kept for what still requires them (ETags, `Content-MD5`, SigV2), not for security.
public enum Insecure {
    /// MD5 (RFC 1321).
    public typealias MD5 = Hash<MD5Algorithm>
    /// SHA-1 (FIPS 180-4).
    public typealias SHA1 = Hash<SHA1Algorithm>
}

/// A secret key's bytes (an HMAC key).
public struct SymmetricKey: Sendable {
    let bytes: [UInt8]

    /// A key of these bytes.
    public init(data: some ContiguousBytes) { bytes = data.withUnsafeBytes { Array($0) } }

    /// Calls `body` with the key's bytes.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

/// HMAC (RFC 2104) over one of the hash functions.
public enum HMAC<H: HashFunction> {
    /// The authentication code of `data` under `key`.
    public static func authenticationCode(for data: some DataProtocol, using key: SymmetricKey) -> HashDigest {
        var block = [UInt8](repeating: 0, count: H.blockByteCount)
        if key.bytes.count > H.blockByteCount {
            let hashed = H.hash(data: key.bytes)
            block.replaceSubrange(0..<hashed.count, with: hashed)
        } else {
            block.replaceSubrange(0..<key.bytes.count, with: key.bytes)
        }
        var inner = H()
        inner.update(data: block.map { $0 ^ 0x36 })
        inner.update(data: data)
        var outer = H()
        outer.update(data: block.map { $0 ^ 0x5C })
        outer.update(data: inner.finalize().bytes)
        return outer.finalize()
    }
}

import Foundation

/// One fuzz target: a parser (or a pair of them that must agree) and the properties every input must keep.
///
/// `check` is the whole harness: it feeds the bytes to the parser under test and throws ``FuzzFailure`` when a
/// property breaks (a round trip that does not return what went in, two parsers that disagree, a result out of
/// the input's bounds). A crash, a trap or a sanitizer report is a failure too. Under libFuzzer (`make fuzz`) a
/// failure aborts, so the input is saved as an artifact; in `make test` (`FuzzReplayTests`) every committed input
/// is replayed through the same `check`.
package struct FuzzTarget: Sendable {
    /// The name `make fuzz FUZZ_TARGETS=…` and the corpus folder (`Fuzz/corpus/NAME`) use.
    package let name: String
    /// What the target feeds and what it checks, one line.
    package let summary: String
    /// The longest input the fuzzer makes (libFuzzer's `-max_len`).
    package let maxLength: Int
    /// The largest single allocation an input may cause, in MiB (libFuzzer's `-malloc_limit_mb`): inputs of a few
    /// KiB must not make the parser allocate more.
    package let mallocLimitMB: Int
    /// The CPU time, in minutes, this target is to be fuzzed for across the work (Fuzz/ledger.tsv sums what it
    /// had): 20 for a parser, more for those with the most room to go wrong (images, XML).
    /// `make fuzz FUZZ_CPU_GOAL=1` runs each target for what it still lacks.
    package let cpuMinutesGoal: Int
    /// Inputs the corpus starts from, made by the code that writes these formats (the fake server's XML writer,
    /// the journal encoder, the sample library's JPEGs…), so a seed is always a valid input of today's format.
    package let seeds: @Sendable () -> [[UInt8]]
    /// Runs one input; throws when a property breaks.
    package let check: @Sendable ([UInt8]) throws(FuzzFailure) -> Void

    package init(
        name: String, summary: String, maxLength: Int = 4096, cpuMinutesGoal: Int = 20, mallocLimitMB: Int = 64,
        seeds: @escaping @Sendable () -> [[UInt8]], check: @escaping @Sendable ([UInt8]) throws(FuzzFailure) -> Void
    ) {
        self.name = name
        self.summary = summary
        self.maxLength = maxLength
        self.mallocLimitMB = mallocLimitMB
        self.cpuMinutesGoal = cpuMinutesGoal
        self.seeds = seeds
        self.check = check
    }
}

/// A property a target states that one input broke.
package struct FuzzFailure: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// Throws a ``FuzzFailure`` saying `message` unless `condition` holds.
package func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// Reads structured values out of fuzz bytes, for targets that build an input (a listing to write, a date to
/// format) rather than parse the bytes themselves. Past the end every read returns zero or empty.
package struct FuzzReader {
    private let bytes: [UInt8]
    private var position = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var isAtEnd: Bool { position >= bytes.count }

    package mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    package mutating func uint32() -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) }
    }

    package mutating func uint64() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// Up to `limit` bytes, the count taken from the next byte.
    package mutating func bytes(upTo limit: Int) -> [UInt8] {
        let count = min(Int(byte()), limit, bytes.count - min(position, bytes.count))
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// A string of up to `limit` bytes, decoded as UTF-8 (ill-formed sequences become U+FFFD).
    package mutating func string(upTo limit: Int) -> String { String(decoding: bytes(upTo: limit), as: UTF8.self) }
}

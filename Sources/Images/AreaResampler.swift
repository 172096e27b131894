/// A streaming area-average (box filter with fractional coverage) resampler for RGBA8 rows: each output pixel
/// is the mean of the source area it covers, partly covered source pixels weighted by the covered fraction.
/// Source rows are pushed one at a time and output rows come out as soon as they are complete, so it holds
/// only a few output-width rows (plus its weights), never the source image.
struct AreaResampler {
    let sourceWidth: Int
    let sourceHeight: Int
    let width: Int
    let height: Int
    /// Per output column: the first source column and how many it covers; weights in `columnWeights`
    /// at `x * taps`.
    private var columnStart: [Int]
    private var columnCount: [Int]
    private var columnWeights: [Float]
    private let taps: Int
    private let rowScale: Double
    /// Accumulators for the output rows still open, `ring` rows of `width * 4` floats.
    private var accumulators: [Float]
    private let ring: Int
    private var horizontal: [Float]
    private var nextSourceRow = 0
    private var nextOutputRow = 0
    /// One past the last output row whose accumulator is zeroed and in use.
    private var openRows = 0
    private var outputRow: [UInt8]

    /// Bytes of buffers this resampler holds.
    var bufferBytes: Int {
        (accumulators.count + horizontal.count + columnWeights.count) * 4 + outputRow.count
            + (columnStart.count + columnCount.count) * 8
    }

    init(sourceWidth: Int, sourceHeight: Int, width: Int, height: Int) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.width = width
        self.height = height
        let columnScale = Double(sourceWidth) / Double(width)
        let taps = Int(columnScale.rounded(.up)) + 2
        self.taps = taps
        columnStart = [Int](repeating: 0, count: width)
        columnCount = [Int](repeating: 0, count: width)
        columnWeights = [Float](repeating: 0, count: width * taps)
        for x in 0..<width {
            let lower = Double(x) * columnScale
            let upper = min(Double(sourceWidth), Double(x + 1) * columnScale)
            let first = min(sourceWidth - 1, Int(lower.rounded(.down)))
            var count = 0
            var j = first
            while j < sourceWidth, Double(j) < upper, count < taps {
                let overlap = min(upper, Double(j + 1)) - max(lower, Double(j))
                if overlap > 0 {
                    if count == 0 { columnStart[x] = j }
                    columnWeights[x * taps + count] = Float(overlap / columnScale)
                    count += 1
                }
                j += 1
            }
            if count == 0 {
                columnStart[x] = first
                columnWeights[x * taps] = 1
                count = 1
            }
            columnCount[x] = count
        }
        rowScale = Double(sourceHeight) / Double(height)
        ring = Int((1 / rowScale).rounded(.up)) + 2
        accumulators = [Float](repeating: 0, count: ring * width * 4)
        horizontal = [Float](repeating: 0, count: width * 4)
        outputRow = [UInt8](repeating: 0, count: width * 4)
    }

    /// Adds the next source row (`sourceWidth` RGBA8 pixels) and hands each output row it completes to `emit`,
    /// in order, as `width` RGBA8 pixels.
    mutating func push(
        _ row: UnsafeRawBufferPointer, emit: (_ y: Int, _ row: UnsafeBufferPointer<UInt8>) throws(ImageError) -> Void
    ) throws(ImageError) {
        let j = nextSourceRow
        guard j < sourceHeight else { return }
        nextSourceRow += 1
        let (width, taps) = (self.width, self.taps)
        columnStart.withUnsafeBufferPointer { start in
            columnCount.withUnsafeBufferPointer { count in
                columnWeights.withUnsafeBufferPointer { weights in
                    horizontal.withUnsafeMutableBufferPointer { out in
                        let source = row.bindMemory(to: UInt8.self)
                        for x in 0..<width {
                            var r: Float = 0
                            var g: Float = 0
                            var b: Float = 0
                            var a: Float = 0
                            var p = start[x] * 4
                            let w0 = x * taps
                            for t in 0..<count[x] {
                                let w = weights[w0 + t]
                                r += w * Float(source[p])
                                g += w * Float(source[p + 1])
                                b += w * Float(source[p + 2])
                                a += w * Float(source[p + 3])
                                p += 4
                            }
                            out[x * 4] = r
                            out[x * 4 + 1] = g
                            out[x * 4 + 2] = b
                            out[x * 4 + 3] = a
                        }
                    }
                }
            }
        }
        // Output rows this source row overlaps: [r * rowScale, (r + 1) * rowScale) meets [j, j + 1).
        let firstRow = min(height - 1, Int((Double(j) / rowScale).rounded(.down)))
        var r = firstRow
        while r < height, Double(r) * rowScale < Double(j + 1) {
            let overlap = min(Double(j + 1), Double(r + 1) * rowScale) - max(Double(j), Double(r) * rowScale)
            if overlap > 0 {
                openRow(r)
                let weight = Float(overlap / rowScale)
                let base = (r % ring) * width * 4
                accumulators.withUnsafeMutableBufferPointer { acc in
                    horizontal.withUnsafeBufferPointer { h in
                        for i in 0..<(width * 4) { acc[base + i] += weight * h[i] }
                    }
                }
            }
            r += 1
        }
        while nextOutputRow < height,
            Double(nextOutputRow + 1) * rowScale <= Double(j + 1) + 1e-9 || nextSourceRow == sourceHeight
        {
            try emitRow(emit)
        }
    }

    private mutating func openRow(_ r: Int) {
        while openRows <= r {
            let base = (openRows % ring) * width * 4
            accumulators.withUnsafeMutableBufferPointer { acc in
                for i in base..<(base + width * 4) { acc[i] = 0 }
            }
            openRows += 1
        }
    }

    private mutating func emitRow(
        _ emit: (_ y: Int, _ row: UnsafeBufferPointer<UInt8>) throws(ImageError) -> Void
    ) throws(ImageError) {
        let r = nextOutputRow
        openRow(r)
        let base = (r % ring) * width * 4
        let count = width * 4
        accumulators.withUnsafeBufferPointer { acc in
            outputRow.withUnsafeMutableBufferPointer { out in
                for i in 0..<count {
                    let v = acc[base + i] + 0.5
                    out[i] = v <= 0 ? 0 : v >= 255 ? 255 : UInt8(v)
                }
            }
        }
        nextOutputRow += 1
        try outputRow.withUnsafeBufferPointer { (row) throws(ImageError) in try emit(r, row) }
    }
}

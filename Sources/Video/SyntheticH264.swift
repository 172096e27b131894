/// A real H.264 stream written in code, with no encoder: every keyframe is an IDR picture of I_PCM macroblocks
/// (the samples stored raw, which any decoder reproduces exactly), every other frame a P picture that skips all
/// its macroblocks (a copy of the one before, a few bytes). Baseline profile, CAVLC, 4:2:0, 8 bits. What
/// ``SyntheticMovie`` puts in a movie's media data when it is to be decodable: the demo's video and the tests'
/// poster frames, without ffmpeg at run time.
package struct SyntheticH264 {
    /// The displayed size (the coded size is the next multiple of 16, cropped back).
    package let width: Int
    package let height: Int
    private var macroblocksWide: Int { (width + 15) / 16 }
    private var macroblocksHigh: Int { (height + 15) / 16 }

    /// A stream of `width` × `height` (even, at least 16 × 16).
    package init(width: Int, height: Int) {
        self.width = max(16, width & ~1)
        self.height = max(16, height & ~1)
    }

    /// The sequence parameter set, as a NAL unit (no start code, no length).
    package var sequenceParameterSet: [UInt8] {
        var bits = BitWriter()
        bits.write(66, count: 8)  // profile_idc: Baseline
        bits.write(0xC0, count: 8)  // constraint_set0 and constraint_set1
        bits.write(40, count: 8)  // level_idc 4.0
        bits.ue(0)  // seq_parameter_set_id
        bits.ue(0)  // log2_max_frame_num_minus4: frame_num has 4 bits
        bits.ue(2)  // pic_order_cnt_type 2: output in decoding order
        bits.ue(1)  // max_num_ref_frames
        bits.write(0, count: 1)  // gaps_in_frame_num_value_allowed_flag
        bits.ue(macroblocksWide - 1)
        bits.ue(macroblocksHigh - 1)
        bits.write(1, count: 1)  // frame_mbs_only_flag
        bits.write(1, count: 1)  // direct_8x8_inference_flag
        let cropRight = (macroblocksWide * 16 - width) / 2
        let cropBottom = (macroblocksHigh * 16 - height) / 2
        if cropRight > 0 || cropBottom > 0 {
            bits.write(1, count: 1)  // frame_cropping_flag, in units of 2 samples (4:2:0)
            bits.ue(0)
            bits.ue(cropRight)
            bits.ue(0)
            bits.ue(cropBottom)
        } else {
            bits.write(0, count: 1)
        }
        bits.write(0, count: 1)  // vui_parameters_present_flag
        return Self.nal(header: 0x67, bits.trailing())
    }

    /// The picture parameter set, as a NAL unit.
    package var pictureParameterSet: [UInt8] {
        var bits = BitWriter()
        bits.ue(0)  // pic_parameter_set_id
        bits.ue(0)  // seq_parameter_set_id
        bits.write(0, count: 1)  // entropy_coding_mode_flag: CAVLC
        bits.write(0, count: 1)  // bottom_field_pic_order_in_frame_present_flag
        bits.ue(0)  // num_slice_groups_minus1
        bits.ue(0)  // num_ref_idx_l0_default_active_minus1
        bits.ue(0)  // num_ref_idx_l1_default_active_minus1
        bits.write(0, count: 1)  // weighted_pred_flag
        bits.write(0, count: 2)  // weighted_bipred_idc
        bits.se(0)  // pic_init_qp_minus26
        bits.se(0)  // pic_init_qs_minus26
        bits.se(0)  // chroma_qp_index_offset
        bits.write(1, count: 1)  // deblocking_filter_control_present_flag
        bits.write(0, count: 1)  // constrained_intra_pred_flag
        bits.write(0, count: 1)  // redundant_pic_cnt_present_flag
        return Self.nal(header: 0x68, bits.trailing())
    }

    /// The `avcC` box's body: the decoder configuration record with both parameter sets, 4-byte NAL lengths.
    package var decoderConfiguration: [UInt8] {
        let sps = sequenceParameterSet
        let pps = pictureParameterSet
        return [1, 66, 0xC0, 40, 0xFF, 0xE1] + be16(sps.count) + sps + [1] + be16(pps.count) + pps
    }

    /// An IDR picture whose pixels are `pixel(x, y)` (RGB), as a NAL unit.
    package func keyframe(idrID: Int, pixel: (Int, Int) -> (red: UInt8, green: UInt8, blue: UInt8)) -> [UInt8] {
        var bits = BitWriter()
        bits.ue(0)  // first_mb_in_slice
        bits.ue(7)  // slice_type: I, every slice of the picture
        bits.ue(0)  // pic_parameter_set_id
        bits.write(0, count: 4)  // frame_num
        bits.ue(idrID & 0xFFFF)  // idr_pic_id
        bits.write(0, count: 1)  // no_output_of_prior_pics_flag
        bits.write(0, count: 1)  // long_term_reference_flag
        bits.se(0)  // slice_qp_delta
        bits.ue(1)  // disable_deblocking_filter_idc
        var luma = [UInt8](repeating: 0, count: 256)
        var blue = [UInt8](repeating: 0, count: 64)
        var red = [UInt8](repeating: 0, count: 64)
        for row in 0..<macroblocksHigh {
            for column in 0..<macroblocksWide {
                bits.ue(25)  // mb_type I_PCM
                bits.align()  // pcm_alignment_zero_bit
                for y in 0..<16 {
                    for x in 0..<16 {
                        luma[y * 16 + x] = Self.ycbcr(pixel(column * 16 + x, row * 16 + y)).y
                    }
                }
                for y in 0..<8 {
                    for x in 0..<8 {
                        let sample = Self.ycbcr(pixel(column * 16 + x * 2, row * 16 + y * 2))
                        blue[y * 8 + x] = sample.cb
                        red[y * 8 + x] = sample.cr
                    }
                }
                bits.append(luma)
                bits.append(blue)
                bits.append(red)
            }
        }
        return Self.nal(header: 0x65, bits.trailing())
    }

    /// A P picture that copies the one before (every macroblock skipped), as a NAL unit; `frameNumber` counts
    /// the pictures since the last keyframe (which is 0).
    package func repeatFrame(frameNumber: Int) -> [UInt8] {
        var bits = BitWriter()
        bits.ue(0)  // first_mb_in_slice
        bits.ue(5)  // slice_type: P, every slice of the picture
        bits.ue(0)  // pic_parameter_set_id
        bits.write(UInt32(frameNumber & 15), count: 4)  // frame_num
        bits.write(0, count: 1)  // num_ref_idx_active_override_flag
        bits.write(0, count: 1)  // ref_pic_list_modification_flag_l0
        bits.write(0, count: 1)  // adaptive_ref_pic_marking_mode_flag
        bits.se(0)  // slice_qp_delta
        bits.ue(1)  // disable_deblocking_filter_idc
        bits.ue(macroblocksWide * macroblocksHigh)  // mb_skip_run: all of them
        return Self.nal(header: 0x41, bits.trailing())
    }

    /// BT.601 limited range, never 0 (which early decoders refuse in PCM samples).
    static func ycbcr(_ rgb: (red: UInt8, green: UInt8, blue: UInt8)) -> (y: UInt8, cb: UInt8, cr: UInt8) {
        let (r, g, b) = (Double(rgb.red), Double(rgb.green), Double(rgb.blue))
        func clamp(_ value: Double) -> UInt8 { UInt8(max(1, min(255, value.rounded()))) }
        return (
            clamp(16 + 0.257 * r + 0.504 * g + 0.098 * b), clamp(128 - 0.148 * r - 0.291 * g + 0.439 * b),
            clamp(128 + 0.439 * r - 0.368 * g - 0.071 * b)
        )
    }

    /// A NAL unit: its header byte, then the payload with emulation prevention bytes where three bytes would
    /// read as a start code.
    static func nal(header: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [header]
        out.reserveCapacity(payload.count + payload.count / 64 + 1)
        var zeros = 0
        for byte in payload {
            if zeros >= 2 && byte <= 3 {
                out.append(3)
                zeros = 0
            }
            out.append(byte)
            zeros = byte == 0 ? zeros + 1 : 0
        }
        return out
    }

    private func be16(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    /// Bits written most significant first, with Exp-Golomb codes.
    struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var current: UInt32 = 0
        private var used = 0

        mutating func write(_ value: UInt32, count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) {
                current = current << 1 | (value >> UInt32(shift) & 1)
                used += 1
                if used == 8 {
                    bytes.append(UInt8(current))
                    current = 0
                    used = 0
                }
            }
        }

        /// Unsigned Exp-Golomb.
        mutating func ue(_ value: Int) {
            let coded = UInt32(value + 1)
            let length = 32 - coded.leadingZeroBitCount
            write(0, count: length - 1)
            write(coded, count: length)
        }

        /// Signed Exp-Golomb.
        mutating func se(_ value: Int) { ue(value > 0 ? 2 * value - 1 : -2 * value) }

        /// Zero bits to the next byte boundary.
        mutating func align() { if used > 0 { write(0, count: 8 - used) } }

        /// Whole bytes (the writer is byte-aligned).
        mutating func append(_ data: [UInt8]) { bytes += data }

        /// The RBSP trailing bits (a one, then zeros to the byte boundary), and the bytes.
        mutating func trailing() -> [UInt8] {
            write(1, count: 1)
            align()
            return bytes
        }
    }
}

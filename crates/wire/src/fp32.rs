//! FP32 tensors as bytes: the little-endian, row-major layout of every wire format here (OIP
//! binary data, gRPC raw contents, the QUIC frame). On a little-endian machine both directions
//! are one `memcpy`.

/// Appends `data` to `out` as little-endian FP32 bytes.
pub fn extend_le(out: &mut Vec<u8>, data: &[f32]) {
    #[cfg(target_endian = "little")]
    out.extend_from_slice(bytemuck::cast_slice(data));
    #[cfg(not(target_endian = "little"))]
    out.extend(data.iter().flat_map(|x| x.to_le_bytes()));
}

/// The FP32 values of little-endian `bytes` (whose length is a multiple of 4; a trailing
/// partial value is ignored).
pub fn decode_le(bytes: &[u8]) -> Vec<f32> {
    let mut out = vec![0f32; bytes.len() / 4];
    let whole = &bytes[..out.len() * 4];
    #[cfg(target_endian = "little")]
    bytemuck::cast_slice_mut::<f32, u8>(&mut out).copy_from_slice(whole);
    #[cfg(not(target_endian = "little"))]
    for (x, c) in out.iter_mut().zip(whole.chunks_exact(4)) {
        *x = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_matches_the_per_value_layout() {
        let xs = [1.5f32, -2.0, f32::MIN_POSITIVE, 3.25e7, 0.0];
        let mut out = vec![9u8];
        extend_le(&mut out, &xs);
        let expected: Vec<u8> = std::iter::once(9u8)
            .chain(xs.iter().flat_map(|x| x.to_le_bytes()))
            .collect();
        assert_eq!(out, expected);
        assert_eq!(decode_le(&out[1..]), xs);
        // A trailing partial value is ignored, an empty input gives nothing.
        assert_eq!(decode_le(&out[1..8]), [1.5]);
        assert!(decode_le(&[]).is_empty());
    }
}

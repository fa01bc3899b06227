//! Reading tensors from a safetensors file: an 8-byte little-endian header length, a JSON header
//! naming each tensor's dtype, shape and byte range, then the data. The format is small enough to
//! read here, checked at every step, instead of adding a dependency.

use serde_json::Value;

/// The largest header read: the format's own reference reader refuses headers over 100 MB.
const MAX_HEADER_BYTES: u64 = 100 << 20;

/// A tensor's place in the file and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TensorInfo {
    pub(crate) dtype: String,
    pub(crate) shape: Vec<usize>,
    /// The byte range in the file's data.
    start: usize,
    end: usize,
}

/// A parsed safetensors file: its tensors' descriptions and the bytes they point into.
#[derive(Debug)]
pub(crate) struct Tensors<'a> {
    header: serde_json::Map<String, Value>,
    data: &'a [u8],
}

impl<'a> Tensors<'a> {
    /// Parses the header of `bytes`; every tensor's range is checked against the data.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, String> {
        let length = bytes
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_le_bytes)
            .ok_or("shorter than the 8 bytes of a safetensors header length")?;
        if length > MAX_HEADER_BYTES {
            return Err(format!(
                "its header claims {length} bytes, more than a safetensors header may have"
            ));
        }
        let header_end = usize::try_from(length)
            .ok()
            .and_then(|n| n.checked_add(8))
            .filter(|&end| end <= bytes.len())
            .ok_or_else(|| format!("its header claims {length} bytes, past the end of the file"))?;
        let header: Value =
            serde_json::from_slice(&bytes[8..header_end]).map_err(|err| format!("its header is not JSON: {err}"))?;
        let Value::Object(header) = header else {
            return Err("its header is not a JSON object".to_owned());
        };
        Ok(Self {
            header,
            data: &bytes[header_end..],
        })
    }

    /// The description of tensor `name`, `None` when the file has none of that name.
    pub(crate) fn info(&self, name: &str) -> Result<Option<TensorInfo>, String> {
        let Some(entry) = self.header.get(name) else {
            return Ok(None);
        };
        let bad = |what: &str| format!("tensor `{name}`: {what}");
        let dtype = entry
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no dtype"))?
            .to_owned();
        let numbers = |key: &str| -> Result<Vec<usize>, String> {
            entry
                .get(key)
                .and_then(Value::as_array)
                .ok_or_else(|| bad(&format!("no {key}")))?
                .iter()
                .map(|n| n.as_u64().and_then(|n| usize::try_from(n).ok()))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(&format!("{key} holds something other than sizes")))
        };
        let shape = numbers("shape")?;
        let [start, end] = numbers("data_offsets")?[..] else {
            return Err(bad("data_offsets is not [start, end]"));
        };
        if start > end || end > self.data.len() {
            return Err(bad(&format!(
                "data_offsets {start}..{end} lie outside the {} bytes of data",
                self.data.len()
            )));
        }
        let elements = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        let expected = elements.and_then(|n| dtype_size(&dtype).and_then(|s| n.checked_mul(s)));
        if let Some(expected) = expected
            && expected != end - start
        {
            return Err(bad(&format!(
                "shape {shape:?} of {dtype} needs {expected} bytes, its data_offsets hold {}",
                end - start
            )));
        }
        Ok(Some(TensorInfo {
            dtype,
            shape,
            start,
            end,
        }))
    }

    /// The tensor's values as `f32` (F32, F16, BF16, F64, I8, I32 and I64 are read).
    pub(crate) fn floats(&self, name: &str, info: &TensorInfo) -> Result<Vec<f32>, String> {
        let bytes = &self.data[info.start..info.end];
        let values = match info.dtype.as_str() {
            "F32" => le::<4>(bytes).map(f32::from_le_bytes).collect(),
            "F16" => le::<2>(bytes).map(|b| f16_to_f32(u16::from_le_bytes(b))).collect(),
            "BF16" => le::<2>(bytes)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes(b)) << 16))
                .collect(),
            "F64" => le::<8>(bytes).map(|b| f64::from_le_bytes(b) as f32).collect(),
            "I8" => bytes.iter().map(|&b| f32::from(b as i8)).collect(),
            other => {
                return Err(format!(
                    "tensor `{name}` has dtype {other}; F32, F16, BF16, F64 or I8 are read"
                ));
            }
        };
        Ok(values)
    }

    /// The tensor's values as indices (I32, I64, U32 or U64, none negative).
    pub(crate) fn indices(&self, name: &str, info: &TensorInfo) -> Result<Vec<usize>, String> {
        let bytes = &self.data[info.start..info.end];
        let values: Vec<Option<usize>> = match info.dtype.as_str() {
            "I32" => le::<4>(bytes)
                .map(|b| usize::try_from(i32::from_le_bytes(b)).ok())
                .collect(),
            "U32" => le::<4>(bytes)
                .map(|b| usize::try_from(u32::from_le_bytes(b)).ok())
                .collect(),
            "I64" => le::<8>(bytes)
                .map(|b| usize::try_from(i64::from_le_bytes(b)).ok())
                .collect(),
            "U64" => le::<8>(bytes)
                .map(|b| usize::try_from(u64::from_le_bytes(b)).ok())
                .collect(),
            other => {
                return Err(format!(
                    "tensor `{name}` has dtype {other}; I32, U32, I64 or U64 are read"
                ));
            }
        };
        values
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("tensor `{name}` holds a negative index"))
    }
}

/// The bytes of one element of `dtype`, for the dtypes whose size is known.
fn dtype_size(dtype: &str) -> Option<usize> {
    match dtype {
        "F64" | "I64" | "U64" => Some(8),
        "F32" | "I32" | "U32" => Some(4),
        "F16" | "BF16" | "I16" | "U16" => Some(2),
        "I8" | "U8" | "BOOL" => Some(1),
        _ => None,
    }
}

/// `bytes` as little-endian groups of `N` (the length is a multiple of `N`, checked by the shape).
fn le<const N: usize>(bytes: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    bytes.chunks_exact(N).map(|c| {
        let mut group = [0u8; N];
        group.copy_from_slice(c);
        group
    })
}

/// An IEEE half-precision value as `f32` (exact: every half is a float).
fn f16_to_f32(half: u16) -> f32 {
    let sign = u32::from(half & 0x8000) << 16;
    let exponent = u32::from((half >> 10) & 0x1f);
    let mantissa = u32::from(half & 0x03ff);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: the value is m x 2^-24.
            let value = m as f32 * f32::from_bits(0x3380_0000);
            return if sign == 0 { value } else { -value };
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, m) => sign | 0x7fc0_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_convert_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65_504.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(f16_to_f32(0x8001), -(2f32.powi(-24)));
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn a_header_past_the_end_or_not_json_is_refused() {
        assert!(Tensors::parse(b"\x01\x00").is_err());
        let mut bytes = 100u64.to_le_bytes().to_vec();
        bytes.extend(b"{}");
        assert!(Tensors::parse(&bytes).unwrap_err().contains("past the end"));
        let mut bytes = 2u64.to_le_bytes().to_vec();
        bytes.extend(b"[]");
        assert!(Tensors::parse(&bytes).unwrap_err().contains("not a JSON object"));
    }
}

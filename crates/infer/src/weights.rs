//! A checkpoint's weights as plain vectors, by variable name, read from its safetensors bytes
//! (the layout candle writes: row-major, little-endian f32). A layer is looked up by its name and
//! the shape the network expects; a missing weight or one of another shape is refused with a
//! message naming it.

use std::collections::BTreeMap;

/// One variable: its dimensions and its values, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Dimensions, outermost first.
    pub dims: Vec<usize>,
    /// Values, row-major.
    pub data: Vec<f32>,
}

/// Every variable of a network, in name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Weights {
    map: BTreeMap<String, Param>,
}

impl Weights {
    /// The variables of a safetensors file's `bytes`; a tensor that is not f32 is refused.
    pub fn read(bytes: &[u8]) -> Result<Self, String> {
        let st = safetensors::SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
        let mut map = BTreeMap::new();
        for (name, view) in st.tensors() {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(format!(
                    "weight `{name}` is {:?}, expected F32",
                    view.dtype()
                ));
            }
            let data = view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            map.insert(
                name,
                Param {
                    dims: view.shape().to_vec(),
                    data,
                },
            );
        }
        Ok(Self { map })
    }

    /// Adds (or replaces) the variable `name`.
    pub fn insert(&mut self, name: impl Into<String>, dims: Vec<usize>, data: Vec<f32>) {
        self.map.insert(name.into(), Param { dims, data });
    }

    /// The variable `name`, if present.
    pub fn get(&self, name: &str) -> Option<&Param> {
        self.map.get(name)
    }

    /// Every variable, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Param)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The values of `name`, which must have dimensions `dims`.
    pub fn tensor(&self, name: &str, dims: &[usize]) -> Result<&[f32], String> {
        let p = self
            .map
            .get(name)
            .ok_or_else(|| format!("weight `{name}` is missing"))?;
        if p.dims != dims {
            return Err(format!(
                "weight `{name}` is {:?}, the network expects {dims:?}",
                p.dims
            ));
        }
        Ok(&p.data)
    }

    /// The dense layer `prefix` (`prefix.weight`, `[outs][ins]`, and `prefix.bias` when `bias`):
    /// its row-major weights and its bias (zeros without one).
    pub(crate) fn linear(
        &self,
        prefix: &str,
        outs: usize,
        ins: usize,
        bias: bool,
    ) -> Result<(Vec<f32>, Vec<f32>), String> {
        let w = self
            .tensor(&format!("{prefix}.weight"), &[outs, ins])?
            .to_vec();
        let b = if bias {
            self.tensor(&format!("{prefix}.bias"), &[outs])?.to_vec()
        } else {
            vec![0.0; outs]
        };
        Ok((w, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written by the safetensors writer reads back value for value; a missing weight or
    /// a weight of another shape is named in the error.
    #[test]
    fn reads_back_and_names_what_is_wrong() {
        let data: Vec<f32> = vec![1.5, -2.0, 0.25, 3.0, 0.0, -0.5];
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view =
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![2, 3], &bytes)
                .unwrap();
        let file = safetensors::serialize([("l.weight", view)], None).unwrap();
        let w = Weights::read(&file).unwrap();
        assert_eq!(w.tensor("l.weight", &[2, 3]).unwrap(), &data[..]);
        let (rows, bias) = w.linear("l", 2, 3, false).unwrap();
        assert_eq!((rows, bias), (data.clone(), vec![0.0, 0.0]));
        let e = w.linear("l", 2, 3, true).unwrap_err();
        assert!(e.contains("`l.bias` is missing"), "{e}");
        let e = w.tensor("l.weight", &[3, 2]).unwrap_err();
        assert!(e.contains("[2, 3], the network expects [3, 2]"), "{e}");
        assert!(Weights::read(b"not a file").is_err());
    }
}

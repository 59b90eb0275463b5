//! An E5S1 file written in memory: the format `file` reads (its layout is
//! in `scripts/model/derive.py`'s docstring). A model in another layout
//! (`hf`) becomes one of these at load, so the tokenizer and the encoder
//! know a single format.

use super::file::{DTYPE_F32, DTYPE_Q4_0, QK, Shape};
use super::quant::quantize_row;

/// Tensor data starts on this boundary, as `derive.py` writes it.
const ALIGN: usize = 64;

/// A tensor to write: f32 values, stored as f32 or quantized to Q4_0 by
/// rows of `row` values.
pub(crate) struct Values {
    pub name: String,
    pub values: Vec<f32>,
    pub quantized_rows: Option<usize>,
}

/// Everything an E5S1 file holds.
pub(crate) struct Image {
    pub shape: Shape,
    pub vocabulary: Vocabulary,
    pub tensors: Vec<Values>,
}

/// The tokenizer's part of it.
pub(crate) struct Vocabulary {
    /// Each piece's bytes ("▁" for a space) and log-probability, by id.
    pub pieces: Vec<(Vec<u8>, f32)>,
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    pub unk: u32,
    /// The normalizer: each changed codepoint, in order, and what it becomes.
    pub norm: Vec<(u32, Vec<char>)>,
}

impl Image {
    pub fn to_bytes(&self) -> Vec<u8> {
        let (s, v) = (&self.shape, &self.vocabulary);
        let mut head = b"E5S1".to_vec();
        head.extend(1u32.to_le_bytes());
        for n in [s.hidden, s.layers, s.heads, s.ff, s.rows, s.max_positions, s.type_vocab] {
            head.extend((n as i32).to_le_bytes());
        }
        head.extend(s.eps.to_le_bytes());
        head.extend((QK as i32).to_le_bytes());

        let blob: Vec<u8> = v.pieces.iter().flat_map(|(p, _)| p.iter().copied()).collect();
        for n in [v.pieces.len() as u32, v.bos, v.eos, v.pad, v.unk] {
            head.extend((n as i32).to_le_bytes());
        }
        head.extend((blob.len() as u64).to_le_bytes());
        let mut offset = 0u32;
        head.extend(offset.to_le_bytes());
        for (piece, _) in &v.pieces {
            offset += piece.len() as u32;
            head.extend(offset.to_le_bytes());
        }
        v.pieces.iter().for_each(|(_, score)| head.extend(score.to_le_bytes()));
        head.extend(&blob);

        let mut norm = Vec::new();
        for (from, to) in &v.norm {
            norm.extend(from.to_le_bytes());
            norm.push(to.len() as u8);
            to.iter().for_each(|&c| norm.extend((c as u32).to_le_bytes()));
        }
        head.extend((v.norm.len() as i32).to_le_bytes());
        head.extend((norm.len() as u32).to_le_bytes());
        head.extend(norm);

        let data: Vec<(u8, Vec<u8>)> = self.tensors.iter().map(encode).collect();
        let directory: usize = 4 + self.tensors.iter().map(|t| 2 + t.name.len() + 1 + 4 + 8 + 8).sum::<usize>();
        let mut at = head.len() + directory;
        let mut body = Vec::new();
        head.extend((self.tensors.len() as i32).to_le_bytes());
        for (tensor, (dtype, bytes)) in self.tensors.iter().zip(&data) {
            let pad = at.next_multiple_of(ALIGN) - at;
            body.resize(body.len() + pad, 0);
            at += pad;
            head.extend((tensor.name.len() as u16).to_le_bytes());
            head.extend(tensor.name.as_bytes());
            head.push(*dtype);
            head.extend((tensor.values.len() as u32).to_le_bytes());
            head.extend((at as u64).to_le_bytes());
            head.extend((bytes.len() as u64).to_le_bytes());
            body.extend(bytes);
            at += bytes.len();
        }
        head.extend(body);
        head
    }
}

/// A tensor's type and bytes.
fn encode(tensor: &Values) -> (u8, Vec<u8>) {
    match tensor.quantized_rows {
        Some(row) => (DTYPE_Q4_0, tensor.values.chunks_exact(row).flat_map(quantize_row).collect()),
        None => (DTYPE_F32, tensor.values.iter().flat_map(|v| v.to_le_bytes()).collect()),
    }
}

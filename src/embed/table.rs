//! A static embedding table distilled from the encoder, the Model2Vec
//! recipe without its dimension reduction: each vocabulary piece runs
//! through the encoder alone (`<s> piece </s>`), its mean hidden state is
//! its row, and the rows' mean is taken out of each (the encoder's states
//! share one large direction). A text's vector is then the mean of its
//! pieces' rows, each weighted by how rare the piece is (its negative
//! unigram log-probability, an IDF the tokenizer already holds),
//! L2-normalized: microseconds, where the encoder takes milliseconds.
//!
//! Only the recall benchmark uses it (`--static`), to measure issue #25's
//! static route beside the encoder: on the labelled set it finds far less
//! than the encoder, questions above all, so search does not use it.

use super::{Embedder, unit_length};

/// Pieces distilled per pass of the encoder.
const BATCH: usize = 64;

/// One row per vocabulary piece.
pub struct StaticTable {
    dim: usize,
    rows: Vec<f32>,
    weights: Vec<f32>,
}

impl StaticTable {
    /// The table as bytes: its width, then its rows and weights, each a
    /// little-endian `f32`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = (self.dim as u32).to_le_bytes().to_vec();
        self.rows.iter().chain(&self.weights).for_each(|x| out.extend(x.to_le_bytes()));
        out
    }

    /// A table from [`StaticTable::to_bytes`], or `None` when `bytes` are not one.
    pub fn from_bytes(bytes: &[u8]) -> Option<StaticTable> {
        let dim = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
        let floats: Vec<f32> = bytes[4..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
        let pieces = floats.len() / (dim + 1);
        let whole = bytes.len().is_multiple_of(4) && pieces > 0 && pieces * (dim + 1) == floats.len();
        whole.then(|| StaticTable {
            dim,
            rows: floats[..pieces * dim].to_vec(),
            weights: floats[pieces * dim..].to_vec(),
        })
    }
}

/// Subtracts the rows' mean from each: the encoder's states share one
/// large direction, which would otherwise make every text look alike.
fn center(rows: &mut [f32], dim: usize) {
    let count = (rows.len() / dim).max(1) as f32;
    let mut mean = vec![0f32; dim];
    rows.chunks(dim).for_each(|row| mean.iter_mut().zip(row).for_each(|(m, x)| *m += x / count));
    rows.chunks_mut(dim).for_each(|row| row.iter_mut().zip(&mean).for_each(|(x, m)| *x -= m));
}

impl Embedder {
    /// Distills the table of every piece of the vocabulary on `threads`
    /// threads, calling `progress` with the pieces done.
    pub fn distill(&self, threads: usize, progress: &(dyn Fn(usize) + Sync)) -> StaticTable {
        let (dim, pieces) = (self.dim(), self.tokenizer.pieces());
        let (bos, eos) = (self.tokenizer.bos(), self.tokenizer.eos());
        let mut rows = vec![0f32; pieces * dim];
        let per_thread = pieces.div_ceil(threads.max(1));
        let done = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for (part, out) in rows.chunks_mut(per_thread * dim).enumerate() {
                let done = &done;
                scope.spawn(move || {
                    let first = part * per_thread;
                    for (batch, out) in out.chunks_mut(BATCH * dim).enumerate() {
                        let start = first + batch * BATCH;
                        let seqs: Vec<Vec<u32>> =
                            (start..start + out.len() / dim).map(|id| vec![bos, id as u32, eos]).collect();
                        let means = self.encoder.forward(&self.bytes, self.kernel, &seqs);
                        out.chunks_mut(dim).zip(means).for_each(|(row, mean)| row.copy_from_slice(&mean));
                        let total = done.fetch_add(seqs.len(), std::sync::atomic::Ordering::Relaxed) + seqs.len();
                        progress(total);
                    }
                });
            }
        });
        center(&mut rows, dim);
        let weights = (0..pieces).map(|id| -self.tokenizer.score(&self.bytes, id as u32)).collect();
        StaticTable { dim, rows, weights }
    }

    /// `text`'s vector from the table: its pieces' rows (the first 512),
    /// weighted by rarity, averaged and L2-normalized.
    pub fn embed_static(&self, table: &StaticTable, text: &str) -> Vec<f32> {
        let mut sum = vec![0f32; table.dim];
        for id in self.content("", text, self.encoder.max_positions()) {
            let id = id as usize;
            let (row, weight) = (&table.rows[id * table.dim..(id + 1) * table.dim], table.weights[id]);
            sum.iter_mut().zip(row).for_each(|(s, r)| *s += weight * r);
        }
        unit_length(&mut sum);
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_comes_back_from_its_bytes_and_junk_is_refused() {
        let table = StaticTable { dim: 2, rows: vec![1.0, -2.0, 0.5, 3.25], weights: vec![0.1, 7.0] };
        let back = StaticTable::from_bytes(&table.to_bytes()).expect("a table");
        assert_eq!((back.dim, back.rows, back.weights), (2, table.rows.clone(), table.weights.clone()));
        assert!(StaticTable::from_bytes(&[2, 0, 0, 0, 1, 2, 3]).is_none());
        assert!(StaticTable::from_bytes(&[0, 0, 0, 0]).is_none());
        let mut cut = table.to_bytes();
        cut.truncate(cut.len() - 4);
        assert!(StaticTable::from_bytes(&cut).is_none());
    }

    #[test]
    fn centering_takes_the_rows_mean_out() {
        let mut rows = vec![1.0, 10.0, 3.0, 20.0];
        center(&mut rows, 2);
        assert_eq!(rows, vec![-1.0, -5.0, 1.0, 5.0]);
    }
}

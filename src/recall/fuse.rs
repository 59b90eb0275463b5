//! One ranking from two: the rows ranked by words (`rank`) and the rows
//! ranked by meaning (`meaning`), fused by reciprocal rank (RRF, Cormack et
//! al. 2009), each hit saying which of the two found it.
//!
//! RRF uses ranks, not scores: a BM25 score and a cosine similarity have
//! no common scale, and a rank means the same in both lists.

use serde::Serialize;

/// RRF's constant: how quickly a lower rank stops counting. The paper's 60
/// suits deep lists; what matters here is the first five, and a smaller
/// constant keeps the first ranks of each list apart. Chosen with the
/// weights below on the recall benchmark's tuning half (10 and 0.7, with
/// 0.1 then for queries naming something exact, which meaning no longer
/// orders: recall@5 0.95 on its first 166 queries; 60 with equal weights:
/// 0.89), then reported once on the held-out half.
const K: f64 = 10.0;

/// How much each list counts. Words weigh more: a row holding the query's
/// own words is the answer more surely than one that says something
/// alike; meaning decides among rows words cannot tell apart, and finds
/// those they miss.
const WORDS: f64 = 1.0;
const MEANING: f64 = 0.7;

/// What found a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FoundBy {
    /// It holds the query's terms (or their synonyms).
    Words,
    /// Its vector is near the query's: it says something alike, in other words.
    Meaning,
    Both,
}

/// A row's place in the fused ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fused {
    /// The caller's name for the row.
    pub key: usize,
    /// Higher is better: about 0.9 for first by words alone, up to about
    /// 1.6 for first in both lists.
    pub score: f64,
    pub by: FoundBy,
}

/// Fuses two rankings of the caller's keys, best first in each. Ties keep
/// the words' order, then the meaning's.
pub fn fuse(words: &[usize], meaning: &[usize]) -> Vec<Fused> {
    let mut fused: Vec<(Fused, usize)> = Vec::with_capacity(words.len() + meaning.len());
    for (rank, &key) in words.iter().enumerate() {
        fused.push((Fused { key, score: K * WORDS / (K + rank as f64 + 1.0), by: FoundBy::Words }, rank));
    }
    for (rank, &key) in meaning.iter().enumerate() {
        let share = K * MEANING / (K + rank as f64 + 1.0);
        match fused.iter_mut().find(|(f, _)| f.key == key) {
            Some((f, _)) => {
                f.score += share;
                f.by = FoundBy::Both;
            }
            None => fused.push((Fused { key, score: share, by: FoundBy::Meaning }, words.len() + rank)),
        }
    }
    fused.sort_by(|a, b| b.0.score.total_cmp(&a.0.score).then(a.1.cmp(&b.1)));
    fused.into_iter().map(|(f, _)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_both_lists_rank_comes_first_and_says_so() {
        let fused = fuse(&[1, 2, 3], &[3, 4]);
        let keys: Vec<usize> = fused.iter().map(|f| f.key).collect();
        assert_eq!(keys, vec![3, 1, 2, 4]);
        let by: Vec<FoundBy> = fused.iter().map(|f| f.by).collect();
        assert_eq!(by, vec![FoundBy::Both, FoundBy::Words, FoundBy::Words, FoundBy::Meaning]);
        assert!((fused[1].score - 10.0 / 11.0).abs() < 1e-9);
    }

    #[test]
    fn one_list_alone_keeps_its_order() {
        let keys = |f: Vec<Fused>| f.into_iter().map(|f| f.key).collect::<Vec<_>>();
        assert_eq!(keys(fuse(&[5, 3, 9], &[])), vec![5, 3, 9]);
        assert_eq!(keys(fuse(&[], &[7, 2])), vec![7, 2]);
    }
}

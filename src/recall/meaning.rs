//! Candidates by meaning: the rows whose vectors lie nearest the query's,
//! from the embedding model inside the binary (`embed`). Words find what
//! was said in the query's words; this finds what was said in others
//! ("slow" for "latency", 崩溃 for "crash").

use anyhow::Result;

use crate::embed::{self, Embedder, stored};
use crate::store::{Filters, Store, Table};

/// A row near the query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Near {
    pub table: Table,
    pub id: i64,
    /// Cosine similarity, from -1 to 1.
    pub similarity: f32,
}

/// Below this similarity a row is not near, however few rows there are:
/// multilingual-e5's cosines are compressed, with unrelated texts of one
/// language at about 0.70 to 0.80, paraphrases above, and a Chinese
/// question about an English answer just above. (0.78 and 0.82 gave the
/// same recall on the benchmark's tuning half.)
pub const FLOOR: f32 = 0.80;

/// How far below the nearest row a row may be and still count as near.
/// The cosines of one query's rows lie close together: on the recall
/// benchmark's tuning half, a relevant row among the 30 nearest was at most
/// 0.024 below the nearest; rows further down are the many that merely
/// share a language or a topic (a Chinese question sits at about 0.81
/// from every English row).
pub const WINDOW: f32 = 0.04;

/// A query's vector, begun on a thread of its own: the encoder keeps a
/// core busy for 10–20 ms, and the words' lookups meanwhile keep this
/// one busy, so a search waits for the longer of the two, not their sum.
pub struct QueryVector(Option<Pending>);

enum Pending {
    Thread(std::thread::JoinHandle<Vec<f32>>),
    /// No thread could be had: computed when it is needed.
    Here(&'static Embedder, String),
}

impl QueryVector {
    /// Begins `text`'s vector by the model the store's vectors came from:
    /// none when the store has no vectors (until `trae-mem embed` has run,
    /// search finds by words alone) or their model cannot be loaded.
    pub fn begin(store: &Store, text: &str) -> Result<QueryVector> {
        let Some(embedder) = embed::of_store(store)? else { return Ok(QueryVector(None)) };
        let owned = text.to_owned();
        let thread =
            std::thread::Builder::new().name("query vector".into()).spawn(move || embedder.embed_query(&owned));
        Ok(QueryVector(Some(match thread {
            Ok(handle) => Pending::Thread(handle),
            Err(_) => Pending::Here(embedder, text.to_owned()),
        })))
    }

    /// The vector, once computed, ready to meet the stored ones.
    fn wait(self) -> Option<stored::Query> {
        let vector = match self.0? {
            // A panic there was printed; search goes on by words alone.
            Pending::Thread(handle) => handle.join().ok()?,
            Pending::Here(embedder, text) => embedder.embed_query(&text),
        };
        Some(stored::Query::new(&vector))
    }
}

/// Which rows count as near.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// Within `FLOOR` and `WINDOW`: the rows search adds by meaning.
    Search,
    /// However far: the model alone (the recall benchmark's dense baseline).
    None,
}

/// The rows (at most `limit`) whose vectors are nearest the query, nearest
/// first, within `bounds`.
pub fn nearest(
    store: &Store,
    query: QueryVector,
    filters: &Filters,
    tables: &[Table],
    limit: usize,
    bounds: Bounds,
) -> Result<Vec<Near>> {
    let floor = if bounds == Bounds::Search { FLOOR } else { f32::NEG_INFINITY };
    let mut near = by_similarity(store, query, filters, tables, floor)?;
    if bounds == Bounds::Search {
        let window = near.first().map_or(FLOOR, |nearest| nearest.similarity - WINDOW);
        near.retain(|n| n.similarity >= window);
    }
    near.truncate(limit);
    Ok(near)
}

/// Every row with a vector at least `floor` near the query, nearest first.
fn by_similarity(
    store: &Store,
    query: QueryVector,
    filters: &Filters,
    tables: &[Table],
    floor: f32,
) -> Result<Vec<Near>> {
    let Some(query) = query.wait() else { return Ok(Vec::new()) };
    let mut near: Vec<Near> = Vec::new();
    for &table in tables {
        store.each_vector(table, filters, |id, packed| {
            if let Some(similarity) = query.similarity(packed)
                && similarity >= floor
            {
                near.push(Near { table, id, similarity });
            }
        })?;
    }
    near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
    Ok(near)
}

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

/// Which rows count as near.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// Within `FLOOR` and `WINDOW`: the rows search adds by meaning.
    Search,
    /// However far: the model alone (the recall benchmark's dense baseline).
    None,
}

/// The rows nearest a query, sought on a thread of its own: the encoder
/// keeps a core busy for about 5 ms and the stored vectors take a few
/// more to read (5 ms for 15,000), while the words' lookups and the reading
/// of their candidates keep this thread busy, so a search waits for the
/// longer of the two, not their sum. The thread reads through a
/// connection of its own.
pub struct Nearest(Option<Pending>);

enum Pending {
    Thread(std::thread::JoinHandle<Result<Vec<Near>>>),
    /// No thread or connection could be had: sought when it is needed.
    Here(Box<Seek>),
}

/// What is sought: the rows (at most `limit`) whose vectors are nearest
/// `text`'s, within `bounds`.
struct Seek {
    embedder: &'static Embedder,
    text: String,
    filters: Filters,
    tables: Vec<Table>,
    limit: usize,
    bounds: Bounds,
}

impl Nearest {
    /// Begins seeking the rows (at most `limit`) nearest `text` in meaning,
    /// by the model the store's vectors came from: none when the store has
    /// no vectors (until `trae-mem embed` has run, search finds by words
    /// alone) or their model cannot be loaded.
    pub fn begin(
        store: &Store,
        text: &str,
        filters: &Filters,
        tables: &[Table],
        limit: usize,
        bounds: Bounds,
    ) -> Result<Nearest> {
        let Some(embedder) = embed::of_store(store)? else { return Ok(Nearest(None)) };
        let seek = || Seek {
            embedder,
            text: text.to_owned(),
            filters: filters.clone(),
            tables: tables.to_vec(),
            limit,
            bounds,
        };
        let Ok(reader) = store.reader() else { return Ok(Nearest(Some(Pending::Here(Box::new(seek()))))) };
        let handed = seek();
        let thread = std::thread::Builder::new().name("nearest rows".into()).spawn(move || handed.run(&reader));
        Ok(Nearest(Some(match thread {
            Ok(handle) => Pending::Thread(handle),
            Err(_) => Pending::Here(Box::new(seek())),
        })))
    }

    /// Nothing sought: search goes by words alone.
    pub fn none() -> Nearest {
        Nearest(None)
    }

    /// The rows sought, nearest first.
    pub fn wait(self, store: &Store) -> Result<Vec<Near>> {
        match self.0 {
            None => Ok(Vec::new()),
            // A panic there was printed; search goes on by words alone.
            Some(Pending::Thread(handle)) => handle.join().unwrap_or_else(|_| Ok(Vec::new())),
            Some(Pending::Here(seek)) => seek.run(store),
        }
    }
}

impl Seek {
    fn run(self, store: &Store) -> Result<Vec<Near>> {
        let query = stored::Query::new(&self.embedder.embed_query(&self.text));
        let floor = if self.bounds == Bounds::Search { FLOOR } else { f32::NEG_INFINITY };
        let mut near: Vec<Near> = Vec::new();
        for &table in &self.tables {
            store.each_vector(table, &self.filters, |id, packed| {
                if let Some(similarity) = query.similarity(packed)
                    && similarity >= floor
                {
                    near.push(Near { table, id, similarity });
                }
            })?;
        }
        near.sort_by(|a, b| b.similarity.total_cmp(&a.similarity).then(b.id.cmp(&a.id)));
        if self.bounds == Bounds::Search {
            let window = near.first().map_or(FLOOR, |nearest| nearest.similarity - WINDOW);
            near.retain(|n| n.similarity >= window);
        }
        near.truncate(self.limit);
        Ok(near)
    }
}

//! Recall: what memory gives back, and only reads. The front ends read
//! through it alone: search, and everything else they show through a
//! `reader::Reader`, which decides once what becomes of private rows.
//! Search (`search`) understands a query (`query`, with
//! `thesaurus`), ranks candidates the store nominates by words (`rank`,
//! with questions after statements: `asking`) and by meaning (`meaning`),
//! fuses the two (`fuse`) and marks excerpts (`snippet`);
//! `context` builds the blocks given at session start (telling the
//! `earlier` sessions that mattered) and with each prompt.

pub mod asking;
pub mod context;
pub mod earlier;
pub mod fuse;
mod gloss;
pub mod meaning;
pub mod query;
pub mod rank;
pub mod reader;
pub mod search;
pub mod snippet;
pub mod thesaurus;

pub use reader::{Private, Reader};
pub use search::{SearchHit, SearchRequest, search};
pub use snippet::{MARK_END, MARK_START};

//! Recall: what memory gives back. Query understanding (`query`, with
//! `thesaurus`), ranking (`rank`), and the context blocks given at session
//! start and with each prompt (`context`). The store finds candidates; these
//! decide what they mean.

pub mod context;
pub mod query;
pub mod rank;
pub mod thesaurus;

//! Recall: what memory gives back. Today the context block a session
//! starts with (`context`); search and timelines live in the store.

pub mod context;

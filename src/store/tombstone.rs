//! Tombstones: what a deletion leaves behind, so that an import or a pull
//! does not bring back what was forgotten. They name a session by its id
//! and an observation by its `fingerprint`, never by its text.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::Store;

/// What a deletion leaves behind, so that it stays deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tombstone {
    pub kind: TombstoneKind,
    /// A session's id, or an observation's `fingerprint`.
    pub key: String,
    /// Unix milliseconds.
    pub forgotten_at: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TombstoneKind {
    Session,
    Observation,
}

impl TombstoneKind {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            TombstoneKind::Session => "session",
            TombstoneKind::Observation => "observation",
        }
    }
}

/// An observation's identity in every copy of the store: its session, time
/// and text. The local id is not it: an import gives a row another id
/// when its own is taken.
pub fn fingerprint(session_id: &str, ts: i64, content: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(session_id.as_bytes());
    hash.update([0]);
    hash.update(ts.to_le_bytes());
    hash.update(content.as_bytes());
    let digest = hash.finalize();
    crate::text::hex(&digest[..16])
}

/// Records a tombstone; returns false when it was there already.
pub(super) fn bury(conn: &Connection, kind: TombstoneKind, key: &str, at: i64) -> Result<bool> {
    let inserted = conn
        .prepare_cached("INSERT INTO tombstones(kind, key, forgotten_at) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING")?
        .execute(params![kind.as_str(), key, at])?;
    Ok(inserted == 1)
}

/// Every tombstone, oldest first, read on `conn` (a transaction's, too).
pub(super) fn tombstones(conn: &Connection) -> Result<Vec<Tombstone>> {
    let mut stmt =
        conn.prepare_cached("SELECT kind, key, forgotten_at FROM tombstones ORDER BY forgotten_at, kind, key")?;
    let stones = stmt
        .query_map([], |row| {
            let kind: String = row.get(0)?;
            let kind = if kind == "session" { TombstoneKind::Session } else { TombstoneKind::Observation };
            Ok(Tombstone { kind, key: row.get(1)?, forgotten_at: row.get(2)? })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(stones)
}

/// Whether a tombstone names this session, or this observation.
pub(super) fn is_buried(conn: &Connection, kind: TombstoneKind, key: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM tombstones WHERE kind = ?1 AND key = ?2")?
        .query_row(params![kind.as_str(), key], |_| Ok(()))
        .optional()?
        .is_some())
}

impl Store {
    /// Every tombstone, oldest first.
    pub(crate) fn tombstones(&self) -> Result<Vec<Tombstone>> {
        tombstones(&self.conn)
    }
}

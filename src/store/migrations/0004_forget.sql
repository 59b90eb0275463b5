-- 0004: forgetting. What `trae-mem forget` removed leaves a tombstone, so
-- that importing an older export does not bring it back (and, later, so
-- that sync can carry the deletion to other machines). A session's key is
-- its id; an observation's is a fingerprint of its session, time and text
-- (see `store::forget`), which stays the same in every copy of it.
-- The full-text indexes switch to FTS5's secure-delete in code
-- (`index::secure_delete`), since the LIKE mode has none.

CREATE TABLE tombstones (
    kind         TEXT NOT NULL CHECK (kind IN ('session', 'observation')),
    key          TEXT NOT NULL,
    forgotten_at INTEGER NOT NULL,
    PRIMARY KEY (kind, key)
) WITHOUT ROWID;

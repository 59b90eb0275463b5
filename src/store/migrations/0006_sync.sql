-- Team sync's bookkeeping (`trae-mem sync`); nothing on the hook's path
-- reads or writes these tables.

-- Each shared project as this device syncs it: how far it has read the
-- server's log, and how far it has looked for records to push.
CREATE TABLE sync_projects (
    id                INTEGER PRIMARY KEY,
    project_path      TEXT NOT NULL UNIQUE,
    -- The last server sequence number applied here.
    cursor            INTEGER NOT NULL DEFAULT 0,
    -- Observations up to this local id have been offered for pushing, and
    -- the fingerprint of that row: when the row is gone or changed, ids
    -- below it may have been reused, and the next push looks again at all.
    observation_mark  INTEGER NOT NULL DEFAULT 0,
    mark_fingerprint  TEXT,
    last_sync         INTEGER
);

-- Every record that is on the server (pushed from here, or pulled), by its
-- global id, and the project it belongs to: never pushed again, and what a
-- tombstone pushed for it names.
CREATE TABLE sync_records (
    record_id BLOB PRIMARY KEY,
    project   INTEGER NOT NULL REFERENCES sync_projects(id) ON DELETE CASCADE
) WITHOUT ROWID;

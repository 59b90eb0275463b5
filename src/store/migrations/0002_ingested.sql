-- 0002: the ids of the events already stored. Ingest gives every event an
-- id (a UUIDv7, as 16 bytes) and records it here in the same transaction as
-- the event's observations, so that an event delivered twice (a commit that
-- raced the hook's watchdog and was spooled too, a replay after a crash) is
-- stored once. About 40 bytes an event.

CREATE TABLE ingested (
    event_id    BLOB PRIMARY KEY,
    received_at INTEGER NOT NULL
) WITHOUT ROWID;

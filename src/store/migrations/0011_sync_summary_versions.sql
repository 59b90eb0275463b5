-- Which session's summary, at which level, a record on the server is
-- ('<session>/<level>'; NULL for other records): a newer version pushed
-- from here withdraws the older ones from the server, so that a summary
-- rewritten (a rescan that took a secret out of it) leaves no copy there.
ALTER TABLE sync_records ADD COLUMN summary_of TEXT;
CREATE INDEX sync_records_summary_of ON sync_records(summary_of) WHERE summary_of IS NOT NULL;

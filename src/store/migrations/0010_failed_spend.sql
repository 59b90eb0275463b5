-- The part of each day's `tokens` charged for requests a model's server
-- received but that failed (timed out, refused, answered badly): no count
-- came back, so the request's estimate is charged, and `stats` says so.
ALTER TABLE summary_spend ADD COLUMN failed_tokens INTEGER NOT NULL DEFAULT 0;

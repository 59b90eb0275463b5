-- 0003: summaries are searchable. Their full-text index depends on the
-- store's index mode, so `schema::migrate` creates it in code
-- (`index::create_summary_index`); this step only moves the version on.
SELECT 1;

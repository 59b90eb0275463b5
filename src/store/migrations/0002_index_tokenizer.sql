-- Version 2 changes no table. The trigram index moved to trae-mem's own
-- tokenizer (`tokenize='trae_mem'`, see store/tokenizer.rs), which
-- indexes one- and two-character pieces too; `schema::migrate` rebuilds
-- the index of a version 1 database in Rust, where the index is defined.
SELECT 1;

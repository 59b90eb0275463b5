//! SentencePiece's precompiled normalizer (`precompiled_charsmap`, the
//! `Precompiled` normalizer of a `tokenizer.json`): a darts-clone double
//! array trie whose keys are UTF-8 strings and whose values are offsets of
//! their replacements, NUL-terminated, in the bytes after the trie.
//!
//! Layout (sentencepiece `normalizer.cc`): a little-endian u32, the trie's
//! size in bytes; the trie, little-endian u32 units; the replacements.
//! A unit holds a label, a leaf flag, and the offset to its children, or,
//! under a leaf, a value (darts-clone's `DoubleArrayUnit`).

use anyhow::{Result, ensure};

pub(super) struct Charsmap {
    trie: Vec<u32>,
    replacements: Vec<u8>,
}

impl Charsmap {
    pub fn parse(bytes: &[u8]) -> Result<Charsmap> {
        ensure!(bytes.len() >= 4, "the precompiled charsmap is {} bytes long", bytes.len());
        let size = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        ensure!(
            size.is_multiple_of(4) && size >= 4 && 4 + size <= bytes.len(),
            "the precompiled charsmap's trie of {size} bytes does not fit its {} bytes",
            bytes.len()
        );
        let trie = bytes[4..4 + size].chunks_exact(4).map(|u| u32::from_le_bytes(u.try_into().expect("4"))).collect();
        Ok(Charsmap { trie, replacements: bytes[4 + size..].to_vec() })
    }

    /// `text` normalized: at each place the longest key that starts there
    /// is replaced, and a character no key starts is kept, as SentencePiece
    /// normalizes.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            match self.longest_prefix(rest.as_bytes()) {
                Some((len, replacement)) if rest.is_char_boundary(len) => {
                    out.push_str(replacement);
                    rest = &rest[len..];
                }
                _ => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }

    /// The longest key that `key` starts with: its length and replacement.
    /// A malformed trie finds nothing rather than panicking.
    fn longest_prefix(&self, key: &[u8]) -> Option<(usize, &str)> {
        let unit = |pos: usize| self.trie.get(pos).copied();
        let mut pos = offset(unit(0)?);
        let mut found = None;
        for (i, &byte) in key.iter().enumerate() {
            pos ^= byte as usize;
            let Some(u) = unit(pos) else { break };
            if label(u) != byte as u32 {
                break;
            }
            pos ^= offset(u);
            if has_leaf(u) {
                let at = (unit(pos)? & 0x7fff_ffff) as usize;
                let tail = self.replacements.get(at..)?;
                let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
                found = std::str::from_utf8(&tail[..end]).ok().map(|r| (i + 1, r));
            }
        }
        found
    }
}

fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}

fn label(unit: u32) -> u32 {
    unit & (0x8000_0000 | 0xff)
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built by SentencePiece itself (`spm_train --normalization_rule_tsv`)
    /// from `charsmap-rules.tsv`: A→a, あ→00, fi→FI, Ａ→A.
    const RULES: &[u8] = include_bytes!("../../../tests/fixtures/models/charsmap-rules.bin");

    #[test]
    fn normalizes_as_sentencepiece() {
        let map = Charsmap::parse(RULES).unwrap();
        // What sentencepiece's own `normalize` gives, without its "▁" prefix.
        for (text, expected) in
            [("A", "a"), ("あ", "00"), ("Ａ", "A"), ("xfiy", "xFIy"), ("f", "f"), ("b配", "b配"), ("", "")]
        {
            assert_eq!(map.normalize(text), expected, "{text:?}");
        }
    }

    #[test]
    fn a_broken_charsmap_is_an_error_or_finds_nothing() {
        assert!(Charsmap::parse(&RULES[..3]).is_err());
        assert!(Charsmap::parse(&[0xff, 0xff, 0, 0, 1, 2]).is_err());
        // A trie whose units point anywhere, and no replacements after it:
        // no panic, and nothing but the input (or less) comes out.
        let mut garbage = 64u32.to_le_bytes().to_vec();
        garbage.extend((0..64u8).map(|i| i.wrapping_mul(37)));
        let map = Charsmap::parse(&garbage).unwrap();
        for text in ["Aあfi", "\u{10FFFF}\u{0}x"] {
            assert!(map.normalize(text).len() <= text.len(), "{text:?}");
        }
    }
}

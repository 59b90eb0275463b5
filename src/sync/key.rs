//! The team key: 32 random bytes that seal a team's records, kept in the
//! home as `sync.key` (owner-only) and shared out of band as 64 hex digits.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::{Generate, Key};
use sha2::{Digest, Sha256};

use crate::owner_only;
use crate::text::{from_hex, hex};

/// The key's file in the home.
pub const KEY_FILE: &str = "sync.key";

/// The fewest distinct byte values a key may hold. 32 random bytes hold
/// about 30 (fewer than 16 about once in 3 * 10^16 keys), while a
/// made-up key (all zeros, one byte repeated, a short pattern such as
/// `0123456789abcdef` four times) holds 8 or fewer.
const MIN_DISTINCT_BYTES: usize = 16;

/// A team key.
#[derive(Clone, PartialEq, Eq)]
pub struct TeamKey([u8; 32]);

impl std::fmt::Debug for TeamKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TeamKey({})", self.id())
    }
}

impl TeamKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Self {
        Self(Key::<XChaCha20Poly1305>::generate().into())
    }

    /// Reads a key as `to_hex` writes it; spaces and line breaks are ignored.
    /// A key that is not random (see `MIN_DISTINCT_BYTES`) is refused.
    pub fn parse(text: &str) -> Result<Self> {
        let digits: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let Some(key) = from_hex::<32>(&digits) else {
            match digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                true => bail!(
                    "a team key is 64 hex digits, and this has {}: copy the whole line `trae-mem sync key new` printed",
                    digits.len()
                ),
                false => bail!("a team key is 64 hex digits (0-9, a-f), as `trae-mem sync key new` prints it"),
            }
        };
        let distinct = key.iter().collect::<std::collections::BTreeSet<_>>().len();
        if distinct < MIN_DISTINCT_BYTES {
            bail!(
                "this is not a random key ({}): anyone could guess it; make a team key with `trae-mem sync key new`",
                match distinct {
                    1 => format!("every byte is {:02x}", key[0]),
                    _ => format!("it repeats {distinct} byte values"),
                }
            );
        }
        Ok(Self(key))
    }

    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    /// A short name for the key that gives nothing of it away, so that
    /// teammates can check they hold the same one.
    pub fn id(&self) -> String {
        let digest = Sha256::new().chain_update(b"trae-mem key id\0").chain_update(self.0).finalize();
        hex(&digest[..4])
    }

    pub(super) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key kept in `home`, if there is one.
    pub fn load(home: &Path) -> Result<Option<Self>> {
        let path = home.join(KEY_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text).with_context(|| format!("{} is not a team key", path.display())).map(Some),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Keeps the key in `home`, readable by its owner only. An existing,
    /// different key is replaced only when `replace` says so: records
    /// sealed with it would no longer open here.
    pub fn save(&self, home: &Path, replace: bool) -> Result<PathBuf> {
        let path = home.join(KEY_FILE);
        if let Some(old) = Self::load(home)? {
            if old == *self {
                return Ok(path);
            }
            if !replace {
                bail!(
                    "{} already holds another team key ({}); pass --force to replace it \
                     (this home then no longer opens records sealed with the old one)",
                    path.display(),
                    old.id()
                );
            }
        }
        std::fs::create_dir_all(home).with_context(|| format!("cannot create {}", home.display()))?;
        let temporary = home.join(format!("{KEY_FILE}.{}.tmp", std::process::id()));
        let written = owner_only::create_new(&temporary).and_then(|mut file| {
            file.write_all(format!("{}\n", self.to_hex()).as_bytes())?;
            file.sync_all()
        });
        written
            .and_then(|()| std::fs::rename(&temporary, &path))
            .inspect_err(|_| drop(std::fs::remove_file(&temporary)))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_back_as_written_and_stays_private() {
        let home = tempfile::tempdir().unwrap();
        let key = TeamKey::generate();
        assert_ne!(key, TeamKey::generate());
        assert_eq!(TeamKey::parse(&format!("  {}\n", key.to_hex())).unwrap(), key);
        let path = key.save(home.path(), false).unwrap();
        assert_eq!(TeamKey::load(home.path()).unwrap(), Some(key.clone()));
        #[cfg(unix)]
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions()) & 0o777,
            0o600
        );

        let other = TeamKey::generate();
        let refused = other.save(home.path(), false).unwrap_err().to_string();
        assert!(refused.contains("--force"), "{refused}");
        assert_eq!(TeamKey::load(home.path()).unwrap(), Some(key));
        other.save(home.path(), true).unwrap();
        assert_eq!(TeamKey::load(home.path()).unwrap(), Some(other));
        assert!(TeamKey::parse("abc").is_err());
    }

    #[test]
    fn keys_nobody_drew_at_random_are_refused() {
        for weak in ["00".repeat(32), "ab".repeat(32), "0123456789abcdef".repeat(4)] {
            let refused = TeamKey::parse(&weak).unwrap_err().to_string();
            assert!(refused.contains("not a random key") && refused.contains("sync key new"), "{refused}");
        }
        for _ in 0..1000 {
            let key = TeamKey::generate();
            assert_eq!(TeamKey::parse(&key.to_hex()).unwrap(), key);
        }
    }
}

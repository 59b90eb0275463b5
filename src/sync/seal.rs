//! Sealing records for the server: XChaCha20-Poly1305 under a key derived
//! from the team key and the project's portable key, with a random nonce.
//! The record's id, kind and project are the associated data, so that the
//! server cannot move a body to another record or project.

use anyhow::{Result, anyhow};
use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

use super::SyncError;
use super::key::TeamKey;
use crate::store::RecordId;

/// The project as the server knows it, whatever the key: a hash of its
/// portable key.
pub fn project_id(portable_key: &str) -> [u8; 32] {
    Sha256::new().chain_update(b"trae-mem project v1\0").chain_update(portable_key).finalize().into()
}

/// How the records of one project are sealed and opened on this device.
pub struct Sealer {
    /// `None` in plaintext mode.
    cipher: Option<XChaCha20Poly1305>,
    /// The project as the server knows it: a hash of its portable key.
    pub project: [u8; 32],
}

/// A record as the server stores it.
pub struct Sealed {
    pub id: RecordId,
    pub kind: i16,
    /// Empty for a plaintext record.
    pub nonce: Vec<u8>,
    pub body: Vec<u8>,
}

impl Sealer {
    /// Seals with `key`, or stores plaintext when there is none.
    pub fn new(key: Option<&TeamKey>, portable_key: &str) -> Self {
        let cipher = key.map(|key| {
            let derived = Sha256::new()
                .chain_update(b"trae-mem seal v1\0")
                .chain_update(key.bytes())
                .chain_update(portable_key)
                .finalize();
            XChaCha20Poly1305::new(&derived)
        });
        Self { cipher, project: project_id(portable_key) }
    }

    fn associated(&self, id: &RecordId, kind: i16) -> Vec<u8> {
        [&id[..], &kind.to_be_bytes(), &self.project].concat()
    }

    pub fn seal(&self, id: RecordId, kind: i16, plain: Vec<u8>) -> Result<Sealed> {
        let Some(cipher) = &self.cipher else {
            return Ok(Sealed { id, kind, nonce: Vec::new(), body: plain });
        };
        let nonce = XNonce::generate();
        let aad = self.associated(&id, kind);
        let body =
            cipher.encrypt(&nonce, Payload { msg: &plain, aad: &aad }).map_err(|_| anyhow!("cannot seal a record"))?;
        Ok(Sealed { id, kind, nonce: nonce.to_vec(), body })
    }

    /// The record's plaintext. A record that does not open says why, and
    /// nothing of it is used.
    pub fn open(&self, sealed: &Sealed) -> Result<Vec<u8>> {
        match (&self.cipher, sealed.nonce.is_empty()) {
            (None, true) => Ok(sealed.body.clone()),
            (None, false) => Err(SyncError::SealedWithoutKey.into()),
            (Some(_), true) => Err(SyncError::Unsealed.into()),
            (Some(cipher), false) => {
                let nonce = XNonce::try_from(sealed.nonce.as_slice())
                    .map_err(|_| anyhow!("a record's nonce is not 24 bytes"))?;
                let aad = self.associated(&sealed.id, sealed.kind);
                Ok(cipher.decrypt(&nonce, Payload { msg: &sealed.body, aad: &aad }).map_err(|_| SyncError::WrongKey)?)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_record_opens_only_with_its_key_id_and_project() {
        let key = TeamKey::generate();
        let sealer = Sealer::new(Some(&key), "example.com/team/app");
        let sealed = sealer.seal([7; 16], 2, b"the invoice export".to_vec()).unwrap();
        assert_eq!(sealed.nonce.len(), 24);
        assert!(!sealed.body.windows(7).any(|w| w == b"invoice"));
        assert_eq!(sealer.open(&sealed).unwrap(), b"the invoice export");

        let moved = Sealed { id: [8; 16], ..sealed };
        assert!(sealer.open(&moved).is_err(), "another record's id");
        let sealed = Sealed { id: [7; 16], ..moved };
        assert!(Sealer::new(Some(&key), "example.com/team/other").open(&sealed).is_err(), "another project");
        let wrong = Sealer::new(Some(&TeamKey::generate()), "example.com/team/app").open(&sealed).unwrap_err();
        assert!(wrong.to_string().contains("does not open"), "{wrong}");
        assert!(Sealer::new(None, "example.com/team/app").open(&sealed).is_err(), "no key");
    }
}

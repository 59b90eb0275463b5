//! Why a sync could not run, or would not take what the server holds: each
//! says what to do about it. Errors from the server and the network travel
//! as they come, with context.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// No server is configured.
    #[error("no sync server: set TRAE_MEM_SYNC_URL, or [sync] url in {}", config.display())]
    NoServer { config: PathBuf },
    /// The project seals its records and this home holds no team key.
    #[error(
        "no team key in {}: the first teammate runs `trae-mem sync key new` and shares what it prints; \
         the others run `trae-mem sync key import`",
        home.display()
    )]
    NoKey { home: PathBuf },
    /// A sealed record reached a device that has no key.
    #[error(
        "the project's records are sealed, and this device has no team key: \
         `trae-mem sync key import` takes the team's"
    )]
    SealedWithoutKey,
    /// An unsealed record reached a device that seals.
    #[error(
        "the server holds an unsealed record for this project; this device seals its records \
         and does not take unsealed ones (set [sync] plaintext = true if the team chose plaintext)"
    )]
    Unsealed,
    /// A record did not open with this device's key.
    #[error(
        "this device's team key does not open the project's records: its key differs from the \
         one that sealed them (compare `trae-mem sync key show` with a teammate's); nothing was changed"
    )]
    WrongKey,
    /// A record opened, but is not what its id and kind say.
    #[error("a pulled record's id or kind does not match what it holds; it was not stored")]
    Mismatched,
    /// The server's tables were made by a newer trae-mem.
    #[error(
        "the sync server's schema is version {found}, newer than this trae-mem understands ({known}); upgrade trae-mem"
    )]
    NewerSchema { found: i32, known: usize },
}

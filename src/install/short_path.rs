//! The binary's path as a Windows hook command names it.
//!
//! Clients run hook commands through Git Bash, cmd or PowerShell, and no
//! quoting suits all three: PowerShell reads a leading `"C:/Program
//! Files/…"` as a string value and fails on the word after it. A path
//! without spaces needs no quotes, so a path that would need them is
//! written by its 8.3 short name (`C:/PROGRA~1/…`), which every shell and
//! Windows itself take as it is.

use std::borrow::Cow;
use std::path::Path;

/// `path` by its short name when it holds a character a shell reads and
/// the volume keeps short names; otherwise `path` itself (quoted later).
#[cfg(windows)]
pub fn for_commands(path: &Path) -> Cow<'_, Path> {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    use windows_sys::Win32::Storage::FileSystem::GetShortPathNameW;

    if !super::shell_quote(path).starts_with('"') {
        return Cow::Borrowed(path);
    }
    let long: Vec<u16> = path.as_os_str().encode_wide().chain(Some(0)).collect();
    let mut short = vec![0u16; long.len() + 1];
    // SAFETY: `long` is NUL-terminated; `short` has the length passed.
    let written = unsafe { GetShortPathNameW(long.as_ptr(), short.as_mut_ptr(), short.len() as u32) } as usize;
    // 0 is failure; a value above the buffer is the size it would need,
    // which a short name never does (it is never longer than the long one).
    if written == 0 || written >= short.len() {
        return Cow::Borrowed(path);
    }
    let short = std::path::PathBuf::from(std::ffi::OsString::from_wide(&short[..written]));
    // A volume without short names gives back the long path, spaces and all.
    if super::shell_quote(&short).starts_with('"') { Cow::Borrowed(path) } else { Cow::Owned(short) }
}

/// Elsewhere a path is quoted the shell's way, which every client's shell reads.
#[cfg(not(windows))]
pub fn for_commands(path: &Path) -> Cow<'_, Path> {
    Cow::Borrowed(path)
}

//! Owner-only on Windows: a folder's protected access list with one entry,
//! full control for the user running trae-mem, inherited by every file and
//! folder made inside it. The database, its write-ahead log and shared
//! memory (which SQLite creates), the spool and the sync key all live in
//! the home, so restricting the home when it is made covers them, as mode
//! 0700 does on Unix.

use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, ERROR_SUCCESS, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT, SetNamedSecurityInfoW};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_REVISION, AddAccessAllowedAceEx, CONTAINER_INHERIT_ACE,
    DACL_SECURITY_INFORMATION, EqualSid, GetAce, GetLengthSid, GetTokenInformation, InitializeAcl, OBJECT_INHERIT_ACE,
    PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::FILE_ALL_ACCESS;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The ACE type of an entry that allows (`ACCESS_ALLOWED_ACE_TYPE`).
const ALLOWED: u8 = 0;

/// A path as Windows' wide-string APIs take it.
fn wide(path: &Path) -> Vec<u16> {
    path.as_os_str().encode_wide().chain(Some(0)).collect()
}

/// The current user's `TOKEN_USER`, in a buffer aligned for it; its SID
/// points inside the buffer.
fn token_user() -> io::Result<Vec<u64>> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of this process, and a place for the token.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut needed = 0u32;
    // SAFETY: asks only for the size needed (no buffer is written).
    unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut needed) };
    let mut buffer = vec![0u64; (needed as usize).div_ceil(8).max(1)];
    let size = (buffer.len() * 8) as u32;
    // SAFETY: `buffer` holds `size` bytes, aligned for TOKEN_USER.
    let read = unsafe { GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast(), size, &mut needed) };
    let error = io::Error::last_os_error();
    // SAFETY: the token opened above, closed once.
    unsafe { CloseHandle(token) };
    if read == 0 {
        return Err(error);
    }
    Ok(buffer)
}

/// Gives `dir` a protected access list: full control for the current user,
/// inherited by what is made inside, and nothing for anyone else.
pub fn restrict(dir: &Path) -> io::Result<()> {
    let user = token_user()?;
    // SAFETY: `token_user` filled the buffer with a TOKEN_USER.
    let sid = unsafe { (*user.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    // SAFETY: a valid SID, inside `user`.
    let sid_bytes = unsafe { GetLengthSid(sid) } as usize;
    let acl_bytes = size_of::<ACL>() + size_of::<ACCESS_ALLOWED_ACE>() - size_of::<u32>() + sid_bytes;
    let mut acl = vec![0u64; acl_bytes.div_ceil(8)];
    let acl_ptr = acl.as_mut_ptr().cast::<ACL>();
    let acl_size = (acl.len() * 8) as u32;
    // SAFETY: `acl` holds `acl_size` bytes, aligned for an ACL.
    if unsafe { InitializeAcl(acl_ptr, acl_size, ACL_REVISION) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let inherit = OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE;
    // SAFETY: the ACL initialized above has room for this one entry.
    if unsafe { AddAccessAllowedAceEx(acl_ptr, ACL_REVISION, inherit, FILE_ALL_ACCESS, sid) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;
    let path = wide(dir);
    // SAFETY: a NUL-terminated path and a valid ACL; nothing else is set.
    let status = unsafe {
        SetNamedSecurityInfoW(
            path.as_ptr(),
            SE_FILE_OBJECT,
            info,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            acl_ptr,
            std::ptr::null(),
        )
    };
    match status {
        ERROR_SUCCESS => Ok(()),
        code => Err(io::Error::from_raw_os_error(code as i32)),
    }
}

/// Whether only the current user may open `path`: its access list allows
/// no one else (an entry that denies is no grant).
pub fn is_owner_only(path: &Path) -> io::Result<bool> {
    let user = token_user()?;
    // SAFETY: `token_user` filled the buffer with a TOKEN_USER.
    let sid = unsafe { (*user.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let wide = wide(path);
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path; Windows allocates the descriptor,
    // which `dacl` points into, and it is freed below.
    let status = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut descriptor,
        )
    };
    if status != ERROR_SUCCESS {
        return Err(io::Error::from_raw_os_error(status as i32));
    }
    // No access list at all lets everyone in.
    let mut owner_only = !dacl.is_null();
    if owner_only {
        // SAFETY: `dacl` points to a valid ACL inside the descriptor.
        let count = unsafe { (*dacl).AceCount };
        for index in 0..u32::from(count) {
            let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
            // SAFETY: `index` is below the ACL's count of entries.
            if unsafe { GetAce(dacl, index, &mut ace) } == 0 {
                owner_only = false;
                break;
            }
            // SAFETY: every entry begins with an ACE_HEADER.
            let header = unsafe { *ace.cast::<ACE_HEADER>() };
            if header.AceType != ALLOWED {
                continue;
            }
            // SAFETY: an allowing entry is an ACCESS_ALLOWED_ACE, its SID at `SidStart`.
            let grantee = unsafe { std::ptr::addr_of_mut!((*ace.cast::<ACCESS_ALLOWED_ACE>()).SidStart) };
            // SAFETY: two valid SIDs.
            if unsafe { EqualSid(grantee.cast(), sid) } == 0 {
                owner_only = false;
                break;
            }
        }
    }
    // SAFETY: the descriptor GetNamedSecurityInfoW allocated, freed once.
    unsafe { LocalFree(descriptor) };
    Ok(owner_only)
}

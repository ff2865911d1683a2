//! The module's C ABI, for `WebAssembly.instantiate` without generated
//! glue. Every call works on one [`Session`] held by the module.
//!
//! Memory: the page asks [`herald_alloc`] for a buffer, writes into it and
//! hands it to a call that takes it over ([`herald_add_input`],
//! [`herald_add_keyring`], [`herald_require`]: the module frees it), or
//! gives it back with [`herald_free`]. Calls that answer write UTF-8 JSON
//! to one output buffer and return its length; [`herald_out_ptr`] says
//! where it is, valid until the next call.
//!
//! Why `unsafe`: a C ABI passes buffers as raw pointers, and turning one
//! back into the boxed slice [`herald_alloc`] leaked is the only way to
//! read it. Each `unsafe` block relies on the one contract above: a
//! pointer given to the module came from [`herald_alloc`] with that length
//! and is handed over once.

use std::sync::{Mutex, MutexGuard};

use crate::Session;

static SESSION: Mutex<Option<Session>> = Mutex::new(None);
static OUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

fn session() -> MutexGuard<'static, Option<Session>> {
    // Nothing panics while holding the lock; were it poisoned, the
    // session is still whole (every change is one assignment).
    SESSION.lock().unwrap_or_else(|e| e.into_inner())
}

/// Put `text` in the output buffer; its length.
fn answer(text: &str) -> usize {
    let mut out = OUT.lock().unwrap_or_else(|e| e.into_inner());
    out.clear();
    out.extend_from_slice(text.as_bytes());
    out.len()
}

/// Take over a buffer from [`herald_alloc`].
///
/// # Safety
/// `ptr` and `len` are those of one [`herald_alloc`] call not yet handed
/// over (or `len` is 0).
unsafe fn take(ptr: *mut u8, len: usize) -> Box<[u8]> {
    if len == 0 || ptr.is_null() {
        return Box::default();
    }
    // SAFETY: by the contract, `ptr` is the start of a `Box<[u8]>` of
    // exactly `len` bytes that `herald_alloc` leaked and nobody else owns.
    unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr, len)) }
}

/// A zeroed buffer of `len` bytes for the page to fill (null for 0).
#[unsafe(no_mangle)]
pub extern "C" fn herald_alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return core::ptr::null_mut();
    }
    Box::into_raw(vec![0u8; len].into_boxed_slice()).cast()
}

/// Give back a buffer from [`herald_alloc`] that was not handed over.
///
/// # Safety
/// `ptr` and `len` are those of one [`herald_alloc`] call not yet handed
/// over (or `len` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn herald_free(ptr: *mut u8, len: usize) {
    // SAFETY: the caller's contract is `take`'s.
    drop(unsafe { take(ptr, len) });
}

/// Where the last answer is (valid until the next call).
#[unsafe(no_mangle)]
pub extern "C" fn herald_out_ptr() -> *const u8 {
    OUT.lock().unwrap_or_else(|e| e.into_inner()).as_ptr()
}

/// The length of the last answer.
#[unsafe(no_mangle)]
pub extern "C" fn herald_out_len() -> usize {
    OUT.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Start a new, empty session.
#[unsafe(no_mangle)]
pub extern "C" fn herald_reset() {
    *session() = Some(Session::new());
}

/// Add an input named by the UTF-8 buffer `name` with the bytes `data`
/// (both taken over).
///
/// # Safety
/// Each buffer is that of one [`herald_alloc`] call not yet handed over
/// (or of length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn herald_add_input(
    name: *mut u8,
    name_len: usize,
    data: *mut u8,
    data_len: usize,
) {
    // SAFETY: the caller's contract is `take`'s, for each buffer.
    let (name, data) = unsafe { (take(name, name_len), take(data, data_len)) };
    session()
        .get_or_insert_with(Session::new)
        .add_input(&String::from_utf8_lossy(&name), data.into_vec());
}

/// Add keyring text (both buffers taken over): the number of keys, or -1
/// with the error message as the answer.
///
/// # Safety
/// Each buffer is that of one [`herald_alloc`] call not yet handed over
/// (or of length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn herald_add_keyring(
    name: *mut u8,
    name_len: usize,
    text: *mut u8,
    text_len: usize,
) -> i32 {
    // SAFETY: the caller's contract is `take`'s, for each buffer.
    let (name, text) = unsafe { (take(name, name_len), take(text, text_len)) };
    let result = session()
        .get_or_insert_with(Session::new)
        .add_keyring(&String::from_utf8_lossy(&name), &text);
    match result {
        Ok(n) => i32::try_from(n).unwrap_or(i32::MAX),
        Err(e) => {
            answer(&e);
            -1
        }
    }
}

/// Require a valid signature in the scope named by `scope` (taken over):
/// 0, or -1 with the error message as the answer.
///
/// # Safety
/// The buffer is that of one [`herald_alloc`] call not yet handed over
/// (or of length 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn herald_require(scope: *mut u8, scope_len: usize) -> i32 {
    // SAFETY: the caller's contract is `take`'s.
    let scope = unsafe { take(scope, scope_len) };
    match session()
        .get_or_insert_with(Session::new)
        .require(&String::from_utf8_lossy(&scope))
    {
        Ok(()) => 0,
        Err(e) => {
            answer(&e);
            -1
        }
    }
}

/// Audit the session at `now` (Unix seconds; negative or not finite: no
/// time checks). The answer is the `herald verify --json` report.
#[unsafe(no_mangle)]
pub extern "C" fn herald_verify(now: f64) -> usize {
    let now = (now.is_finite() && now >= 0.0).then_some(now as u64);
    let json = session().get_or_insert_with(Session::new).verify(now);
    answer(&json)
}

/// The answer is the nodes of the last report ([`Session::nodes`]).
#[unsafe(no_mangle)]
pub extern "C" fn herald_nodes() -> usize {
    let json = session().as_ref().map(Session::nodes);
    answer(json.as_deref().unwrap_or("[]"))
}

/// The answer is the detail of report entry `index` ([`Session::detail`]),
/// or `null` past the end.
#[unsafe(no_mangle)]
pub extern "C" fn herald_detail(index: u32) -> usize {
    let json = session().as_ref().and_then(|s| s.detail(index as usize));
    answer(json.as_deref().unwrap_or("null"))
}

/// The answer is the tree heads of the last report's bundled proofs
/// ([`Session::proofs`]).
#[unsafe(no_mangle)]
pub extern "C" fn herald_proofs() -> usize {
    let json = session().as_ref().map(Session::proofs);
    answer(json.as_deref().unwrap_or("[]"))
}

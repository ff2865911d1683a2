//! `herald witness serve` on 127.0.0.1:0, its URL from the `listening on`
//! line, killed when dropped.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use super::{herald, keygen};

/// A running witness: the child and its URL prefix.
pub(crate) struct Serve(pub(crate) Child, pub(crate) String);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A new witness `name` (key `d/name.key`, key name `name.example`, state
/// `d/name-state`) for the log `origin` with checkpoint verifier key
/// `vkey`; the running server and its cosigner verifier key.
pub(crate) fn serve(d: &Path, name: &str, origin: &str, vkey: &str) -> (Serve, String) {
    keygen(d, name);
    let key = format!("{name}.key");
    let wname = format!("{name}.example");
    let v = herald(d, &["witness", "key", "--key", &key, "--name", &wname]);
    v.expect(0);
    let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
        .current_dir(d)
        .args(["witness", "serve", "--key", &key, "--name", &wname])
        .args([
            "--state",
            &format!("{name}-state"),
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--log-key")
        .arg(format!("{origin}={vkey}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let url = super::listening(&mut child, "listening on ");
    (Serve(child, url), v.out().trim().to_owned())
}

//! `herald heraldry serve` on 127.0.0.1:0 (CONDUIT.md), the requests a
//! subject sends it, and the checks a verifier makes of its answers
//! (PROFILE P14: the certification, its tlog-proof, the checkpoint under
//! a log policy).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use herald_core::cbor::{Map, Value};
use herald_core::{EnvelopeBuilder, EnvelopeRef, Kind, SigilForm, SigningKey};
use herald_tlog::note::NoteVerifier;
use herald_tlog::{Policy, TlogProof};

/// A running Herald, killed when dropped.
pub(crate) struct Herald {
    pub(crate) child: Child,
    pub(crate) addr: SocketAddr,
    pub(crate) key: SigningKey,
    pub(crate) origin: String,
}

impl Drop for Herald {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Herald {
    /// Its URL.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Write `key` as `dir/name.key` (0600).
pub(crate) fn write_key(dir: &Path, name: &str, key: &SigningKey) {
    let seed = herald_verify::hex(key.to_seed().as_slice());
    let path = dir.join(format!("{name}.key"));
    std::fs::write(&path, format!("herald-secret-key-v1\n{seed}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// The log verifier key of a Herald with `key` and `origin`.
pub(crate) fn log_key(key: &SigningKey, origin: &str) -> String {
    NoteVerifier::ed25519(origin, key.public_key())
        .unwrap()
        .to_string()
}

/// Start `herald heraldry serve` for `key` (written as `dir/name.key`),
/// state `dir/name-state`, with `witnesses` (`VKEY=URL`) and `extra`
/// flags.
pub(crate) fn serve(
    dir: &Path,
    name: &str,
    key: &SigningKey,
    origin: &str,
    witnesses: &[String],
    extra: &[&str],
) -> Herald {
    write_key(dir, name, key);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herald"));
    cmd.current_dir(dir)
        .args(["heraldry", "serve", "--listen", "127.0.0.1:0", "--key"])
        .arg(format!("{name}.key"))
        .arg("--state")
        .arg(format!("{name}-state"))
        .args(["--origin", origin])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    for w in witnesses {
        cmd.arg("--witness").arg(w);
    }
    let mut child = cmd.spawn().unwrap();
    let addr = super::listening(&mut child, "listening on http://")
        .parse()
        .unwrap();
    Herald {
        child,
        addr,
        key: SigningKey::from_seed(&key.to_seed()),
        origin: origin.to_owned(),
    }
}

/// `subject`'s request to the Herald `herald` for `claim` = `value`.
pub(crate) fn request(
    subject: &SigningKey,
    herald: &SigningKey,
    claim: &str,
    value: Value,
) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("certify", Value::text(claim));
    m.insert("value", value);
    EnvelopeBuilder::genesis(super::conduit::now())
        .to(herald.sigil(SigilForm::Default))
        .payload(Value::Map(m))
        .sign(subject)
        .unwrap()
        .into_bytes()
}

/// A `key` request: `subject` asks to have its own key certified.
pub(crate) fn key_request(subject: &SigningKey, herald: &SigningKey) -> Vec<u8> {
    request(
        subject,
        herald,
        "key",
        Value::from(subject.public_key().as_bytes().to_vec()),
    )
}

/// `genuine`'s request (its payload, to the same Herald), claiming to be
/// from `claimed` but signed by `signer`: a forgery the Herald refuses for
/// its signature.
pub(crate) fn forged(
    genuine: &[u8],
    claimed: &SigningKey,
    signer: &SigningKey,
    herald: &SigningKey,
) -> Vec<u8> {
    let payload = Value::decode(EnvelopeRef::decode(genuine).unwrap().payload_bytes()).unwrap();
    EnvelopeBuilder::genesis(super::conduit::now())
        .from_sigil(claimed.sigil(SigilForm::Default))
        .to(herald.sigil(SigilForm::Default))
        .payload(payload)
        .sign(signer)
        .unwrap()
        .into_bytes()
}

/// The `{certification, proof}` item of `bytes`.
pub(crate) fn item(bytes: &[u8]) -> (Vec<u8>, String) {
    let v = Value::decode(bytes).unwrap();
    let m = v.as_map().unwrap();
    let Some(Value::Bytes(c)) = m.get("certification") else {
        panic!("no certification in {v:?}")
    };
    (
        c.clone(),
        m.get("proof").unwrap().as_text().unwrap().to_owned(),
    )
}

/// Check an item as a verifier does (P14 *When a certification counts*):
/// the certification's origin verifies under `herald`'s key, it is of kind
/// `certification`, and its proof leads to a checkpoint `policy` accepts.
/// The certification's bytes, and the checkpoint's size.
pub(crate) fn check_item(bytes: &[u8], herald: &SigningKey, policy: &Policy) -> (Vec<u8>, u64) {
    let (cert, proof) = item(bytes);
    let env = EnvelopeRef::decode(&cert).unwrap();
    assert_eq!(env.kind(), Kind::Certification);
    assert!(env.from_sigil().names_key(herald.public_key().as_bytes()));
    let mut keyring = herald_verify::Keyring::new();
    keyring.insert(herald.public_key(), herald_verify::Provenance::Pinned);
    let owned = herald_core::Envelope::from_bytes(cert.clone()).unwrap();
    let (checked, reasons) = owned.check(&keyring, &herald_core::CheckOptions::DEFAULT);
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let proof = TlogProof::parse(&proof).unwrap();
    let (cp, _) = policy
        .verify_checkpoint(proof.checkpoint().as_bytes())
        .unwrap_or_else(|e| panic!("the proof's checkpoint fails the policy: {e}"));
    proof.verify_inclusion(&cert, cp.checkpoint()).unwrap();
    (cert, cp.checkpoint().size())
}

/// The payload of a refusal body, verified under `herald`'s key: its
/// `reason`.
pub(crate) fn refusal_reason(body: &[u8], herald: &SigningKey) -> String {
    let mut keyring = herald_verify::Keyring::new();
    keyring.insert(herald.public_key(), herald_verify::Provenance::Pinned);
    let env = herald_core::Envelope::from_bytes(body.to_vec())
        .unwrap_or_else(|e| panic!("not an envelope ({e}): {}", String::from_utf8_lossy(body)));
    let (checked, reasons) = env.check(&keyring, &herald_core::CheckOptions::DEFAULT);
    assert_eq!(checked.status, herald_core::Status::Valid, "{reasons:?}");
    let view = env.view();
    assert_eq!(view.kind(), Kind::Refusal);
    view.payload()
        .as_map()
        .unwrap()
        .get("reason")
        .unwrap()
        .as_text()
        .unwrap()
        .to_owned()
}

/// A new `herald witness serve` named `name` for every log of `logs`
/// (`(origin, log verifier key)`); the server and its cosigner key.
pub(crate) fn witness(
    dir: &Path,
    name: &str,
    logs: &[(String, String)],
) -> (super::witness::Serve, String) {
    super::keygen(dir, name);
    let key = format!("{name}.key");
    let wname = format!("{name}.example");
    let v = super::herald(dir, &["witness", "key", "--key", &key, "--name", &wname]);
    v.expect(0);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_herald"));
    cmd.current_dir(dir)
        .args(["witness", "serve", "--key", &key, "--name", &wname])
        .args([
            "--state",
            &format!("{name}-state"),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped());
    for (origin, vkey) in logs {
        cmd.arg("--log-key").arg(format!("{origin}={vkey}"));
    }
    let mut child = cmd.spawn().unwrap();
    let url = super::listening(&mut child, "listening on ");
    (super::witness::Serve(child, url), v.out().trim().to_owned())
}

/// A tlog-policy: each Herald's log with its URL, the witnesses, quorum
/// `quorum` of them.
pub(crate) fn policy_text(
    logs: &[(String, Option<String>)],
    witnesses: &[(&str, &str)],
    quorum: usize,
) -> String {
    let mut p = String::new();
    for (vkey, url) in logs {
        p.push_str(&format!(
            "log {vkey}{}\n",
            url.as_ref().map(|u| format!(" {u}")).unwrap_or_default()
        ));
    }
    let mut names = Vec::new();
    for (name, vkey) in witnesses {
        p.push_str(&format!("witness {name} {vkey}\n"));
        names.push(*name);
    }
    if witnesses.is_empty() {
        p.push_str("quorum none\n");
    } else {
        p.push_str(&format!(
            "group all {quorum} {}\nquorum all\n",
            names.join(" ")
        ));
    }
    p
}

//! Signing keys (P5; P2 sigils) and keyrings (CLI.md *Keyring files*).
//!
//! A [`SigningKey`] is an opaque handle: JavaScript holds a pointer into
//! this instance's memory, never the seed. The seed leaves only when asked
//! by name ([`SigningKey::export_secret_key`],
//! [`SigningKey::export_key_file`]); `free()` drops the key, and
//! ed25519-dalek zeroizes it on drop.

use herald_core::{PublicKey, SigilForm, SigningKey as CoreKey};
use herald_verify::{Keyring as CoreKeyring, Provenance, key_line, labelled_key_line};
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;

use crate::error::{argument, coded};

/// An Ed25519 signing key (P5) held inside the WebAssembly instance.
#[wasm_bindgen]
pub struct SigningKey {
    pub(crate) key: CoreKey,
}

#[wasm_bindgen]
impl SigningKey {
    /// A new key from the platform's CSPRNG (WebCrypto
    /// `crypto.getRandomValues`: browsers, Node >= 19).
    pub fn generate() -> SigningKey {
        Self {
            key: CoreKey::generate_os(),
        }
    }

    /// The key of a 32-byte RFC 8032 seed (test vectors, seeds held
    /// elsewhere); prefer `generate`.
    #[wasm_bindgen(js_name = fromSeed)]
    pub fn from_seed(seed: &[u8]) -> Result<SigningKey, JsValue> {
        let seed: &[u8; 32] = seed
            .try_into()
            .map_err(|_| argument("a seed is exactly 32 bytes"))?;
        Ok(Self {
            key: CoreKey::from_seed(seed),
        })
    }

    /// The default sigil (P2).
    #[wasm_bindgen(getter)]
    pub fn sigil(&self) -> String {
        self.key.sigil(SigilForm::Default).to_string()
    }

    /// The long sigil (P2).
    #[wasm_bindgen(getter, js_name = sigilLong)]
    pub fn sigil_long(&self) -> String {
        self.key.sigil(SigilForm::Long).to_string()
    }

    /// The 32-byte public key.
    #[wasm_bindgen(getter, js_name = publicKey)]
    pub fn public_key(&self) -> Vec<u8> {
        self.key.public_key().as_bytes().to_vec()
    }

    /// The key's keyring line (CLI.md): `<sigil> ed25519 <hex>`, with
    /// ` <label>` when given.
    #[wasm_bindgen(js_name = keyringLine)]
    pub fn keyring_line(&self, label: Option<String>) -> String {
        match label {
            Some(label) => labelled_key_line(&self.key.public_key(), &label),
            None => key_line(&self.key.public_key()),
        }
    }

    /// The 32-byte secret seed. The only way a seed leaves the instance
    /// besides `exportKeyFile`: the caller owns the copy and must wipe it.
    #[wasm_bindgen(js_name = exportSecretKey)]
    pub fn export_secret_key(&self) -> Vec<u8> {
        self.key.to_seed().to_vec()
    }

    /// The key as the text of a `herald keygen` secret key file (CLI.md
    /// *Files*; write it with mode 0600).
    #[wasm_bindgen(js_name = exportKeyFile)]
    pub fn export_key_file(&self) -> String {
        let text = herald_verify::encode_key_file(&self.key);
        String::from_utf8_lossy(text.as_ref()).into_owned()
    }

    /// `SigningKey(<sigil>)`: never the secret.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        format!("SigningKey({})", self.sigil())
    }

    /// What `JSON.stringify` writes: the sigil and public key only.
    #[wasm_bindgen(js_name = toJSON)]
    pub fn to_json(&self) -> JsValue {
        let o = <Object>::new();
        let _ = Reflect::set(&o, &"sigil".into(), &self.sigil().into());
        let _ = Reflect::set(
            &o,
            &"publicKey".into(),
            &herald_verify::hex(self.key.public_key().as_bytes()).into(),
        );
        o.into()
    }
}

/// Public keys pinned by the verifier (CLI.md keyring; P13: a key resolves
/// every sigil form of itself), with their labels.
#[wasm_bindgen]
#[derive(Clone, Default)]
pub struct Keyring {
    pub(crate) inner: CoreKeyring,
}

#[wasm_bindgen]
impl Keyring {
    /// An empty keyring, or the keys of keyring text.
    #[wasm_bindgen(constructor)]
    pub fn new(text: Option<String>) -> Result<Keyring, JsValue> {
        let mut k = Self::default();
        if let Some(text) = text {
            k.parse(&text, None)?;
        }
        Ok(k)
    }

    /// Parse keyring text (CLI.md: `<sigil> ed25519 <hex> [label]` lines,
    /// `#` comments); `origin` names it in errors. Returns the keys read.
    pub fn parse(&mut self, text: &str, origin: Option<String>) -> Result<usize, JsValue> {
        self.inner
            .parse(text, origin.as_deref().unwrap_or("<keyring>"))
            .map_err(|e| coded("keyring", e.to_string()))
    }

    /// Pin a public key (32 bytes), with an optional label.
    #[wasm_bindgen(js_name = addPublicKey)]
    pub fn add_public_key(&mut self, key: &[u8], label: Option<String>) -> Result<(), JsValue> {
        let public = PublicKey::from_slice(key).map_err(|e| coded("bad_key", e.to_string()))?;
        match label {
            Some(label) => {
                self.parse(&labelled_key_line(&public, &label), None)?;
            }
            None => self.inner.insert(public, Provenance::Pinned),
        }
        Ok(())
    }

    /// Pin the public half of a signing key, with an optional label.
    #[wasm_bindgen(js_name = addKey)]
    pub fn add_key(&mut self, key: &SigningKey, label: Option<String>) -> Result<(), JsValue> {
        self.add_public_key(key.key.public_key().as_bytes(), label)
    }

    /// The number of keys.
    #[wasm_bindgen(getter)]
    pub fn size(&self) -> usize {
        self.inner.len()
    }

    /// Every key: `{sigil, sigilLong, publicKey (hex), label?}`.
    pub fn entries(&self) -> Array {
        self.inner.keys().map(|k| self.entry(&k)).collect()
    }

    /// The key a sigil of any form names (P13), as an entry, or undefined.
    pub fn lookup(&self, sigil: &str) -> Result<JsValue, JsValue> {
        let sigil = herald_core::Sigil::parse(sigil)
            .map_err(|e| coded("bad_sigil", format!("{sigil:?}: {e}")))?;
        Ok(self
            .inner
            .lookup(&sigil)
            .map_or(JsValue::UNDEFINED, |(k, _)| self.entry(&k)))
    }

    /// The keys labelled `label`, as entries (more than one is an
    /// ambiguity for the caller).
    pub fn labelled(&self, label: &str) -> Array {
        self.inner
            .keys_labelled(label)
            .iter()
            .map(|k| self.entry(k))
            .collect()
    }

    /// An independent copy (what `verify` consumes, so this one stays usable).
    pub fn copy(&self) -> Keyring {
        self.clone()
    }

    /// The keyring file text: one labelled line per key.
    #[wasm_bindgen(js_name = toString)]
    pub fn to_string_js(&self) -> String {
        self.inner
            .keys()
            .map(|k| match self.inner.label(&k) {
                Some(l) => labelled_key_line(&k, l) + "\n",
                None => key_line(&k) + "\n",
            })
            .collect()
    }
}

impl Keyring {
    fn entry(&self, k: &PublicKey) -> JsValue {
        let o = <Object>::new();
        let set = |name: &str, v: JsValue| {
            let _ = Reflect::set(&o, &name.into(), &v);
        };
        set("sigil", k.sigil(SigilForm::Default).to_string().into());
        set("sigilLong", k.sigil(SigilForm::Long).to_string().into());
        set("publicKey", herald_verify::hex(k.as_bytes()).into());
        if let Some(label) = self.inner.label(k) {
            set("label", label.into());
        }
        o.into()
    }
}

//! A HERALD agent on a Cortex-M3 (TI LM3S6965, as `qemu-system-arm -M
//! lm3s6965evb` emulates it): no `std`, no allocator.
//!
//! At boot it verifies a 3-envelope trace held in flash (signatures, ids,
//! the trace-parent binding, nonces not repeated within the trace, expiry
//! against a fixed "now"), then tampered copies of it, each of which must
//! be reported with exactly the expected reasons; it signs a reply into a
//! fixed 1 KiB buffer and prints it as hex. It exits 0 (semihosting) only
//! when every outcome matched what it expected.
//!
//! Output lines (run-qemu.sh and .ci/run read them):
//! `case <name> ok|FAILED`, `env<i> <status> [reasons]`, `key <64 hex>`,
//! `sigil <sigil>`, `reply <hex>`, `cost <what> <n> instructions (emulator)`,
//! `stack peak <n> bytes`, `result ok|FAILED`.

#![no_std]
#![no_main]

mod measure;
#[cfg(feature = "sign")]
mod rng;
mod trace;

use cortex_m_rt::entry;
#[cfg(feature = "sign")]
use cortex_m_semihosting::hprint;
use cortex_m_semihosting::{debug, hprintln};
#[cfg(feature = "sign")]
use data_encoding::HEXLOWER;
use herald_core::{PublicKey, ReasonCode};

use trace::{Expect, audit_case};

/// The fixed "now" of the checks: a minute after the trace began
/// (trace-gen's `T0 + 60`).
const NOW: u64 = 1_767_225_600 + 60;
/// After every envelope of the trace expired (`T0 + 3600`) and the skew (300 s).
const LATER: u64 = 1_767_225_600 + 3600 + 301;

/// The agent's own secret seed, in flash. A demo value (trace-gen): a real
/// device keeps a per-device key in protected flash or a secure element.
#[cfg(feature = "sign")]
static AGENT_SEED: [u8; 32] = *include_bytes!("../data/agent.seed");
/// The two peers' public keys: the agent's keyring, in flash.
static PEERS: [[u8; 32]; 2] = [
    *include_bytes!("../data/peer-a.pub"),
    *include_bytes!("../data/peer-b.pub"),
];
/// The trace, as trace-gen made it on the host.
static ENV0: &[u8] = include_bytes!("../data/env0.cbor");
static ENV1: &[u8] = include_bytes!("../data/env1.cbor");
static ENV2: &[u8] = include_bytes!("../data/env2.cbor");
/// The third envelope, validly signed, naming a parent not in the trace.
static WRONG_PARENT: &[u8] = include_bytes!("../data/wrong-parent.cbor");
/// The first envelope with a junk co-signature under peer B's name
/// appended: anyone can make it from the real one.
static ENV0_JUNK: &[u8] = include_bytes!("../data/env0-junk-cosigned.cbor");

/// Where the reply is signed into (a fixed 1 KiB buffer, docs/embedded.md).
#[cfg(feature = "sign")]
const REPLY_BUF: usize = 1024;

#[entry]
fn main() -> ! {
    measure::paint_stack();
    measure::start_clock();
    let ok = run();
    hprintln!("stack peak {} bytes", measure::stack_peak());
    hprintln!("result {}", if ok { "ok" } else { "FAILED" });
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    #[allow(clippy::empty_loop)]
    loop {}
}

/// Every check; true when each outcome is the expected one.
fn run() -> bool {
    // One array of the peers' keys, passed by reference to every case: a
    // `PublicKey` is 192 bytes, and a temporary array per call would each
    // take its own stack slot.
    let (Ok(a), Ok(b)) = (
        PublicKey::from_bytes(&PEERS[0]),
        PublicKey::from_bytes(&PEERS[1]),
    ) else {
        hprintln!("keyring: a peer key is not a valid Ed25519 key");
        return false;
    };
    let peers = [a, b];
    let mut all = true;
    let valid = [Expect::Valid; 4];

    // 1. The trace as received.
    all &= audit_case("trace", &[ENV0, ENV1, ENV2], &peers, NOW, &valid);

    // 2. One payload byte flipped (a letter's case: still valid UTF-8).
    all &= flipped_payload_byte(&peers);

    // 3. A wrong parent: signed correctly, but its parent is not in the trace.
    all &= audit_case(
        "wrong-parent",
        &[ENV0, ENV1, WRONG_PARENT],
        &peers,
        NOW,
        &[
            Expect::Valid,
            Expect::Valid,
            Expect::Invalid(&[ReasonCode::MissingParent]),
        ],
    );

    // 4. The first envelope again: its (key, nonce) pair is taken.
    all &= audit_case(
        "replayed-nonce",
        &[ENV0, ENV1, ENV2, ENV0],
        &peers,
        NOW,
        &[
            Expect::Valid,
            Expect::Valid,
            Expect::Valid,
            Expect::Invalid(&[ReasonCode::ReplayedNonce]),
        ],
    );

    // 5. The junk co-signed copy placed before the real envelope: the pair
    // goes to the first that would be valid apart from the replay rule
    // (P10 revision 3), so the copy is the replay and the real one stands.
    all &= audit_case(
        "junk-cosigned-copy-first",
        &[ENV0_JUNK, ENV0, ENV1, ENV2],
        &peers,
        NOW,
        &[
            Expect::Invalid(&[ReasonCode::BadSignature, ReasonCode::ReplayedNonce]),
            Expect::Valid,
            Expect::Valid,
            Expect::Valid,
        ],
    );

    // 6. The same trace checked after it expired.
    let expired = Expect::Invalid(&[ReasonCode::Expired]);
    all &= audit_case("expired", &[ENV0, ENV1, ENV2], &peers, LATER, &[expired; 3]);

    let verify = measure::cost(|| trace::check_one(ENV0, &peers, NOW));
    hprintln!("cost verify {} instructions (emulator)", verify);

    #[cfg(feature = "sign")]
    {
        all &= reply(&peers);
    }
    all
}

/// The trace with one payload byte of env1 flipped. Its own function, not
/// inlined, so that its 512-byte copy is off the stack while signing.
#[inline(never)]
fn flipped_payload_byte(peers: &[PublicKey; 2]) -> bool {
    let mut flipped = [0u8; 512];
    let Some(copy) = flipped.get_mut(..ENV1.len()) else {
        return false;
    };
    copy.copy_from_slice(ENV1);
    let at = trace::payload_offset(ENV1).unwrap_or(0) + 2;
    if let Some(byte) = copy.get_mut(at) {
        *byte ^= 0x20;
    }
    const BAD: &[ReasonCode] = &[ReasonCode::IdMismatch, ReasonCode::BadSignature];
    audit_case(
        "flipped-payload-byte",
        &[ENV0, copy, ENV2],
        peers,
        NOW,
        &[Expect::Valid, Expect::Invalid(BAD), Expect::Valid],
    )
}

/// Sign a reply to the trace's last envelope, print it, and check it.
#[cfg(feature = "sign")]
fn reply(peers: &[PublicKey; 2]) -> bool {
    let [a, b] = peers;
    use herald_core::cbor::{Encoder, SliceSink};
    use herald_core::{EnvelopeRef, EnvelopeWriter, SigilForm, SigningKey};

    let key = SigningKey::from_seed(&AGENT_SEED);
    let me = key.public_key();
    let Ok(parent) = EnvelopeRef::decode(ENV2) else {
        hprintln!("reply: the trace's last envelope does not decode");
        return false;
    };
    // The payload, P1-encoded into a small stack buffer.
    let mut payload = [0u8; 64];
    let mut enc = Encoder::new(SliceSink::new(&mut payload));
    if enc.text("sensor 7: 21.5 C").is_err() {
        return false;
    }
    let payload = enc.into_inner().into_written();
    let writer = EnvelopeWriter::reply(&parent, NOW)
        .to(a.sigil(SigilForm::Default))
        .expires(NOW + 3600)
        .payload_cbor(payload);
    // Stands in for the board's hardware RNG: see rng.rs.
    let mut rng = rng::DemoRng::new(&AGENT_SEED, measure::ticks());
    let mut buf = [0u8; REPLY_BUF];
    let mut signed_len = 0;
    let sign = measure::cost(|| {
        signed_len = writer
            .sign_into(&key, &mut rng, &mut buf)
            .map_or(0, |e| e.as_bytes().len());
    });
    let Some(wire) = buf.get(..signed_len).filter(|w| !w.is_empty()) else {
        hprintln!("reply: signing failed");
        return false;
    };
    hprintln!("cost sign {} instructions (emulator)", sign);
    print_hex("key", me.as_bytes());
    let mut sigil = [0u8; 52];
    hprintln!(
        "sigil {}",
        me.sigil(SigilForm::Default).write_str(&mut sigil)
    );
    print_hex("reply", wire);
    // The agent checks its own reply in the trace, with its own key known.
    let valid = [Expect::Valid; 4];
    audit_case(
        "own-reply",
        &[ENV0, ENV1, ENV2, wire],
        &[*a, *b, me],
        NOW,
        &valid,
    )
}

/// `label <hex>` on one line, written in chunks (no allocator).
#[cfg(feature = "sign")]
fn print_hex(label: &str, bytes: &[u8]) {
    hprint!("{} ", label);
    let mut out = [0u8; 128];
    for chunk in bytes.chunks(64) {
        let Some(dst) = out.get_mut(..chunk.len() * 2) else {
            return;
        };
        HEXLOWER.encode_mut(chunk, dst);
        hprint!("{}", core::str::from_utf8(dst).unwrap_or("?"));
    }
    hprintln!("");
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    hprintln!("panic: {}", info);
    hprintln!("result FAILED");
    debug::exit(debug::EXIT_FAILURE);
    #[allow(clippy::empty_loop)]
    loop {}
}

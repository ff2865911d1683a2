//! A key's self-description (PROFILE P7 `birth.description`): found on
//! the birth that introduced the key into the set, and looked up by any
//! sigil form that names the key.

mod support;

use herald_core::SigilForm;
use herald_verify::Descriptions;
use herald_verify::{AuditOptions, Input, Keyring, audit_compact};
use support::{T0, birth, key, say};

#[test]
fn the_birth_that_introduced_a_key_gives_its_description() {
    let (tool, stranger) = (key(41), key(42));
    let set = [birth(&tool, T0), say(&tool, T0 + 1), say(&stranger, T0 + 2)];
    let inputs = [Input {
        name: "set".into(),
        bytes: set.iter().flat_map(|e| e.as_bytes().to_vec()).collect(),
    }];
    let report = audit_compact(&inputs, &Keyring::new(), &AuditOptions::default());
    assert_eq!(report.len(), 3);

    let born = report
        .self_described(0)
        .expect("the birth describes its key");
    assert_eq!(born.description, "test agent");
    assert_eq!(born.key, tool.public_key().as_bytes());
    // A message signed by the learned key is not itself a description;
    // an unknown signer has none.
    assert_eq!(report.self_described(1), None);
    assert_eq!(report.self_described(2), None);

    let all: Descriptions<'_> = (0..report.len())
        .filter_map(|k| report.self_described(k))
        .collect();
    for form in SigilForm::ALL {
        let found = all.get(&tool.public_key().sigil(form));
        assert_eq!(found.map(|d| d.description), Some("test agent"), "{form:?}");
    }
    assert_eq!(
        all.get(&stranger.public_key().sigil(SigilForm::Short)),
        None
    );
}

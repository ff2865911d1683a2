//! `herald verify --format dot|mermaid|svg` (docs/inspector.md): the
//! trace DAG of the demo, of its tampered copy, and of conformance
//! vectors with a broken chain and a lifecycle kind, through the real
//! binary.
// Helpers unwrap: a failure is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::path::{Path, PathBuf};

use support::herald;

fn vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../vectors/conformance")
}

fn demo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    herald(tmp.path(), &["demo", "--dir", "."]).expect(0);
    tmp
}

fn picture(dir: &Path, file: &str, keyrings: &[&str], format: &str) -> (i32, String) {
    let mut args = vec!["verify", file, "--format", format];
    for k in keyrings {
        args.extend(["--keyring", k]);
    }
    let run = herald(dir, &args);
    (run.code, run.out())
}

#[test]
fn dot_of_the_tampered_demo_has_one_red_node_and_the_fan_out() {
    let tmp = demo();
    let (code, dot) = picture(tmp.path(), "tampered.cbor", &["keyring"], "dot");
    assert_eq!(code, 1, "the exit status is verify's");
    assert!(dot.starts_with("digraph trace {"), "{dot}");
    assert_eq!(dot.matches("fillcolor=\"#c62828\"").count(), 1, "{dot}");
    assert_eq!(dot.matches("fillcolor=\"#1a7f37\"").count(), 5, "{dot}");
    assert_eq!(dot.matches(" -> ").count(), 5, "{dot}");
    // Labelled by keyring label, and one envelope has two replies.
    assert!(dot.contains("label=\"alice\\n") && dot.contains("label=\"bob\\n"));
    let parents: Vec<&str> = dot
        .lines()
        .filter_map(|l| l.trim().split_once(" -> ").map(|(p, _)| p))
        .collect();
    assert!(
        parents
            .iter()
            .any(|p| parents.iter().filter(|q| *q == p).count() == 2)
    );
    let (code, _) = picture(tmp.path(), "trace.cbor", &["keyring"], "dot");
    assert_eq!(code, 0);
}

#[test]
fn mermaid_and_svg_draw_the_same_nodes() {
    let tmp = demo();
    let (_, mermaid) = picture(tmp.path(), "tampered.cbor", &["keyring"], "mermaid");
    assert!(mermaid.starts_with("flowchart TD\n"));
    assert_eq!(mermaid.matches(":::invalid").count(), 1, "{mermaid}");
    assert_eq!(mermaid.matches(":::valid").count(), 5, "{mermaid}");
    assert_eq!(mermaid.matches(" --> ").count(), 5, "{mermaid}");
    let (code, svg) = picture(tmp.path(), "tampered.cbor", &["keyring"], "svg");
    assert_eq!(code, 1);
    assert!(
        svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    assert_eq!(svg.matches("· invalid").count(), 1);
    assert_eq!(svg.matches("· valid").count(), 5);
}

#[test]
fn a_missing_parent_hangs_from_a_dashed_ghost_and_lifecycle_kinds_are_marked() {
    let v = vectors();
    let keys = ["keys/alice.pub", "keys/bob.pub", "keys/carol.pub"];
    let (_, dot) = picture(&v, "cases/verify/missing_parent.cbor", &keys, "dot");
    assert!(dot.contains("m0 [label=\"missing parent\\n"), "{dot}");
    assert!(dot.contains("m0 -> n0 [style=dashed"), "{dot}");
    let (_, mermaid) = picture(&v, "cases/verify/missing_parent.cbor", &keys, "mermaid");
    assert!(mermaid.contains("m0 -.-> n0"), "{mermaid}");
    let (_, dot) = picture(&v, "cases/verify/kind_molt.cbor", &keys, "dot");
    assert!(
        dot.contains("◆ ") && dot.contains(" · molt\\n") && dot.contains("shape=Mrecord"),
        "{dot}"
    );
    let (_, dot) = picture(
        &v,
        "cases/verify/cross_trace_parent_replay.cbor",
        &keys,
        "dot",
    );
    assert_eq!(
        dot.matches("[style=dashed, color=\"#c62828\"]").count(),
        1,
        "{dot}"
    );
}

#[test]
fn format_and_json_do_not_mix() {
    let tmp = demo();
    let run = herald(
        tmp.path(),
        &["verify", "trace.cbor", "--json", "--format", "dot"],
    );
    assert_eq!(run.code, 2);
    let run = herald(tmp.path(), &["verify", "trace.cbor", "--format", "png"]);
    assert_eq!(run.code, 2);
}

#[test]
fn svg_refuses_a_trace_larger_than_it_lays_out_in_time() {
    use herald_core::cbor::Value;
    use herald_core::{EnvelopeBuilder, SigningKey};
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let key = SigningKey::from_seed(&[3; 32]);
    let mut previous = EnvelopeBuilder::genesis(herald_testkit::T0)
        .payload(Value::Null)
        .sign(&key)
        .unwrap();
    let mut bytes = previous.as_bytes().to_vec();
    for i in 1..501 {
        let next = EnvelopeBuilder::reply(&previous.view(), herald_testkit::T0 + i)
            .payload(Value::Null)
            .sign(&key)
            .unwrap();
        bytes.extend_from_slice(next.as_bytes());
        previous = next;
    }
    std::fs::write(d.join("trace.cbor"), bytes).unwrap();
    let run = herald(d, &["verify", "trace.cbor", "--format", "svg"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("at most 500 envelopes (501 here)"),
        "{}",
        run.stderr
    );
    let (_, dot) = picture(d, "trace.cbor", &[], "dot");
    assert_eq!(dot.matches(" -> ").count(), 500);
}

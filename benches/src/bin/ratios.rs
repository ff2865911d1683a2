//! Prints the tables of docs/performance.md from the medians of the last
//! `cargo bench -p herald-benches` run: every ratio is computed from
//! benchmarks of that same run (criterion's `<group>/<bench>/new/estimates.json`).
//!
//! Usage: `cargo run --release -p herald-benches --bin ratios [CRITERION_DIR]`
//! (default: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else the
//! workspace's `target/criterion`).

use std::path::{Path, PathBuf};

fn criterion_dir() -> PathBuf {
    if let Some(arg) = std::env::args_os().nth(1) {
        return arg.into();
    }
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion")
}

/// Median time of one benchmark in nanoseconds.
fn median(dir: &Path, group: &str, bench: &str) -> Option<f64> {
    let path = dir.join(group).join(bench).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json.get("median")?.get("point_estimate")?.as_f64()
}

fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

#[derive(Clone, Copy)]
enum Goal {
    AtMost(f64),
    AtLeast(f64),
    Info,
}

struct Row {
    target: String,
    what: String,
    ratio: Option<f64>,
    goal: Goal,
    terms: String,
}

struct Report {
    dir: PathBuf,
    rows: Vec<Row>,
}

impl Report {
    /// `num / (den[0] + den[1] + …)`, all medians of `group`.
    fn ratio(
        &mut self,
        target: &str,
        what: &str,
        group: &str,
        num: &str,
        den: &[&str],
        goal: Goal,
    ) {
        let n = median(&self.dir, group, num);
        let d: Option<Vec<f64>> = den.iter().map(|b| median(&self.dir, group, b)).collect();
        let ratio = match (n, &d) {
            (Some(n), Some(d)) if d.iter().sum::<f64>() > 0.0 => Some(n / d.iter().sum::<f64>()),
            _ => None,
        };
        let show = |b: &str| {
            median(&self.dir, group, b)
                .map_or_else(|| format!("{b} (missing)"), |t| format!("{b} {}", time(t)))
        };
        let terms = format!(
            "{} / ({})",
            show(num),
            den.iter().map(|b| show(b)).collect::<Vec<_>>().join(" + ")
        );
        self.rows.push(Row {
            target: target.into(),
            what: format!("{what} [{group}]"),
            ratio,
            goal,
            terms,
        });
    }

    /// Same, across two groups: `num` of `g1` over `den` of `g2`.
    fn cross(
        &mut self,
        target: &str,
        what: &str,
        (g1, num): (&str, &str),
        (g2, den): (&str, &str),
        goal: Goal,
    ) {
        let n = median(&self.dir, g1, num);
        let d = median(&self.dir, g2, den);
        let ratio = match (n, d) {
            (Some(n), Some(d)) if d > 0.0 => Some(n / d),
            _ => None,
        };
        let show = |g: &str, b: &str, t: Option<f64>| {
            t.map_or_else(
                || format!("{g}/{b} (missing)"),
                |t| format!("{g}/{b} {}", time(t)),
            )
        };
        self.rows.push(Row {
            target: target.into(),
            what: what.into(),
            ratio,
            goal,
            terms: format!("{} / {}", show(g1, num, n), show(g2, den, d)),
        });
    }
}

fn main() {
    let dir = criterion_dir();
    let mut r = Report {
        dir: dir.clone(),
        rows: Vec::new(),
    };
    for label in ["300B", "16KiB"] {
        let env = format!("envelope_{label}");
        let cbor = format!("cbor_{label}");
        r.ratio(
            "1",
            "build+encode+id+sign / (SHA-256 + Ed25519 sign)",
            &env,
            "herald_build_sign",
            &["sha256", "ed25519_sign"],
            Goal::AtMost(1.10),
        );
        r.ratio(
            "1·",
            "direct-encoder prototype, no final decode",
            &env,
            "direct_build",
            &["sha256", "ed25519_sign"],
            Goal::Info,
        );
        r.ratio(
            "1·",
            "direct-encoder prototype + strict decode",
            &env,
            "direct_build_checked",
            &["sha256", "ed25519_sign"],
            Goal::Info,
        );
        r.ratio(
            "2",
            "decode+id+verify / (SHA-256 + verify_strict)",
            &env,
            "herald_verify",
            &["sha256", "ed25519_verify_strict"],
            Goal::AtMost(1.10),
        );
        r.ratio(
            "2·",
            "full check() / (SHA-256 + verify_strict)",
            &env,
            "herald_check",
            &["sha256", "ed25519_verify_strict"],
            Goal::Info,
        );
        r.ratio(
            "2·",
            "strict decode alone / (SHA-256 + verify_strict)",
            &env,
            "herald_decode",
            &["sha256", "ed25519_verify_strict"],
            Goal::Info,
        );
        r.ratio(
            "3",
            "HERALD sign / COSE_Sign1 sign",
            &env,
            "herald_build_sign",
            &["cose_sign"],
            Goal::AtMost(1.0),
        );
        r.ratio(
            "3",
            "HERALD verify / COSE_Sign1 verify",
            &env,
            "herald_verify",
            &["cose_verify"],
            Goal::AtMost(1.0),
        );
        r.ratio(
            "4",
            "ciborium Value encode / herald Value::to_vec (speed-up)",
            &cbor,
            "ciborium_value_encode",
            &["herald_value_encode"],
            Goal::AtLeast(3.0),
        );
        r.ratio(
            "4·",
            "ciborium Value encode / herald Value encode into a presized Vec",
            &cbor,
            "ciborium_value_encode",
            &["herald_value_encode_presized"],
            Goal::Info,
        );
        r.ratio(
            "4",
            "ciborium Value encode / builder's direct route (speed-up)",
            &cbor,
            "ciborium_value_encode",
            &["builder_write_encode"],
            Goal::AtLeast(3.0),
        );
        r.ratio(
            "4·",
            "ciborium Value encode / old builder route (Map + encode of body)",
            &cbor,
            "ciborium_value_encode",
            &["builder_map_encode"],
            Goal::Info,
        );
        r.ratio(
            "4·",
            "ciborium Value encode / direct writes of constants",
            &cbor,
            "ciborium_value_encode",
            &["direct_body_encode"],
            Goal::Info,
        );
    }
    let t = "trace_10k";
    r.ratio(
        "5",
        "sequential verify_strict / verify_all (speed-up)",
        t,
        "seq_verify_strict",
        &["verify_all"],
        Goal::AtLeast(4.0),
    );
    r.ratio(
        "5·",
        "… / verify_all (chunk 256), 1 thread",
        t,
        "seq_verify_strict",
        &["verify_all_1thread"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / verify_all, chunk 64",
        t,
        "seq_verify_strict",
        &["verify_all_chunk64"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / verify_all, chunk 1024",
        t,
        "seq_verify_strict",
        &["verify_all_chunk1024"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / preparing alone (byte checks + challenge hash), sequential",
        t,
        "seq_verify_strict",
        &["seq_prepare"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / herald decode + verify_parts, sequential",
        t,
        "seq_verify_strict",
        &["seq_herald_decode_verify"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / audit() (signatures: check_with + batches on every core)",
        t,
        "seq_verify_strict",
        &["audit"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "… / audit_sequential() (check, one envelope after the other)",
        t,
        "seq_verify_strict",
        &["audit_sequential"],
        Goal::Info,
    );
    r.ratio(
        "5·",
        "audit_sequential() / audit() (speed-up of the audit)",
        t,
        "audit_sequential",
        &["audit"],
        Goal::Info,
    );
    let p = "ed25519_parts";
    r.ratio(
        "5·",
        "per item: single P5 equation (prepared) / verify_strict",
        p,
        "prepared_verify",
        &["verify_strict"],
        Goal::Info,
    );
    for chunk in [64u32, 256, 1024] {
        let name = format!("verify_batch_{chunk}");
        let n = median(&r.dir, p, &name);
        let v = median(&r.dir, p, "verify_strict");
        r.rows.push(Row {
            target: "5·".into(),
            what: format!(
                "per item: batch equation of {chunk}, per signature / verify_strict [{p}]"
            ),
            ratio: n.zip(v).map(|(n, v)| n / f64::from(chunk) / v),
            goal: Goal::Info,
            terms: format!(
                "{name} {} / {chunk} / verify_strict {}",
                n.map_or("(missing)".into(), time),
                v.map_or("(missing)".into(), time)
            ),
        });
    }
    r.cross(
        "6",
        "inclusion proof gen+verify, 1 000 000 / 1 000 leaves",
        ("merkle", "inclusion_1M"),
        ("merkle", "inclusion_1k"),
        Goal::AtMost(2.0),
    );
    r.cross(
        "6",
        "audit log: `Log::inclusion_proof` + `InclusionProof::verify`, 1 000 000 / 1 000 leaves",
        ("auditlog", "inclusion_1M"),
        ("auditlog", "inclusion_1k"),
        Goal::AtMost(2.0),
    );
    r.cross(
        "6·",
        "proof generation alone, 1M / 1k",
        ("merkle", "inclusion_gen_1M"),
        ("merkle", "inclusion_gen_1k"),
        Goal::Info,
    );
    r.cross(
        "6·",
        "proof verification alone, 1M / 1k",
        ("merkle", "inclusion_verify_1M"),
        ("merkle", "inclusion_verify_1k"),
        Goal::Info,
    );

    println!("criterion results: {}", dir.display());
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average now: {}", load.trim());
    }
    println!();
    println!("| target | measured | goal | verdict | what | medians |");
    println!("|---|---|---|---|---|---|");
    for row in &r.rows {
        let (goal, verdict) = match (row.goal, row.ratio) {
            (_, None) => ("".to_string(), "no data"),
            (Goal::AtMost(g), Some(x)) => {
                (format!("≤ {g:.2}"), if x <= g { "pass" } else { "MISS" })
            }
            (Goal::AtLeast(g), Some(x)) => {
                (format!("≥ {g:.2}"), if x >= g { "pass" } else { "MISS" })
            }
            (Goal::Info, Some(_)) => ("".to_string(), "info"),
        };
        let ratio = row
            .ratio
            .map_or_else(|| "–".to_string(), |x| format!("{x:.3}"));
        println!(
            "| {} | {ratio} | {goal} | {verdict} | {} | {} |",
            row.target, row.what, row.terms
        );
    }
    println!(
        "| 7 | – | < 3 × input | see test | memory: peak RSS of `herald verify` on 100 000 envelopes, \
         measured by `cargo test -p herald-cli --test memory -- --nocapture`, not criterion | – |"
    );

    println!();
    println!("| benchmark | median |");
    println!("|---|---|");
    let mut groups: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    groups.sort();
    for g in groups.iter().filter(|g| g.is_dir()) {
        let gname = g
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if gname == "report" {
            continue;
        }
        let mut benches: Vec<PathBuf> = std::fs::read_dir(g)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        benches.sort();
        for b in benches {
            let bname = b
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Some(t) = median(&dir, &gname, &bname) {
                println!("| {gname}/{bname} | {} |", time(t));
            }
        }
    }
}

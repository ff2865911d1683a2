//! Snapshot cases of the real binary: `tests/cmd/*.toml`, each with its
//! expected `.stdout` / `.stderr` and exit status, run in `tests/fixtures/`.
//! Regenerate with `TRYCMD=overwrite cargo test -p herald-cli --test cli`.

#[test]
fn cli() {
    trycmd::TestCases::new()
        .register_bin("herald", std::path::Path::new(env!("CARGO_BIN_EXE_herald")))
        .env("NO_COLOR", "1")
        .case("tests/cmd/*.toml")
        .case("tests/cmd/*.trycmd");
}

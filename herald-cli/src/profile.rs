//! `herald verify --profile haven|valp [--evidence REF=PATH]…`: a protocol
//! profile run over the verified set (docs/haven.md, docs/valp.md). Its
//! findings are printed after the report (in `--json`, a last member
//! `"profile"`), beside the P11 reasons: no envelope's status changes, and
//! the exit status is 1 when the profile found anything.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use herald_verify::{CompactReport, Profile, ProfileEvidence, ProfileReport};

use crate::error::CliError;

/// The profiles `--profile` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProfileName {
    // Haven delegation (docs/haven.md).
    Haven,
    // VALP messages (docs/valp.md).
    Valp,
}

impl ProfileName {
    fn profile(self) -> Profile {
        match self {
            Self::Haven => Profile::Haven,
            Self::Valp => Profile::Valp,
        }
    }
}

/// The profile flags of `herald verify`.
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct ProfileArgs {
    /// Check a protocol's rules over the verified set (docs/haven.md, docs/valp.md) and report
    /// its findings beside the reasons (exit 1 when there are any; no envelope's status changes)
    #[arg(long, value_enum, value_name = "PROFILE", conflicts_with = "format")]
    pub(crate) profile: Option<ProfileName>,
    /// Evidence bytes for the valp profile: the file PATH is the evidence named REF (its
    /// content_ref); a lone PATH names itself (repeatable)
    #[arg(long, value_name = "REF=PATH", requires = "profile")]
    pub(crate) evidence: Vec<String>,
}

/// Most bytes read of one evidence file.
const MAX_EVIDENCE: u64 = 64 << 20;

impl ProfileArgs {
    /// Run the profile asked for over `report`, if one was.
    pub(crate) fn run(
        &self,
        report: &CompactReport<'_>,
    ) -> Result<Option<ProfileReport>, CliError> {
        let Some(name) = self.profile else {
            return Ok(None);
        };
        let given = self
            .evidence
            .iter()
            .map(|arg| {
                let (name, path) = arg.split_once('=').unwrap_or((arg, arg));
                Ok((name.to_owned(), read_evidence(&PathBuf::from(path))?))
            })
            .collect::<Result<Vec<_>, CliError>>()?;
        let evidence: Vec<ProfileEvidence<'_>> = given
            .iter()
            .map(|(r, bytes)| ProfileEvidence::new(r, bytes))
            .collect();
        Ok(Some(report.check_profile(name.profile(), &evidence)))
    }
}

fn read_evidence(path: &std::path::Path) -> Result<Vec<u8>, CliError> {
    use std::io::Read;
    let (file, _) = herald_verify::open_regular(path).map_err(CliError::file)?;
    let mut bytes = Vec::new();
    file.take(MAX_EVIDENCE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::io(path, &e))?;
    if bytes.len() as u64 > MAX_EVIDENCE {
        return Err(CliError::new(format!(
            "{}: evidence larger than {MAX_EVIDENCE} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The profile's part of the human report.
pub(crate) fn write_text(out: &mut dyn Write, p: &ProfileReport) -> io::Result<()> {
    let n = p.findings.len();
    writeln!(
        out,
        "\nprofile {}: {} step{} checked, {} skipped, {}",
        p.profile,
        p.checked,
        if p.checked == 1 { "" } else { "s" },
        p.skipped,
        match n {
            0 => "no findings".to_owned(),
            1 => "1 finding".to_owned(),
            n => format!("{n} findings"),
        }
    )?;
    let width = p
        .findings
        .iter()
        .map(|f| f.code.name().len())
        .max()
        .unwrap_or(0);
    for f in &p.findings {
        let id = f.id.get(..12).unwrap_or(&f.id);
        writeln!(out, "{id}  {:width$}  {}", f.code.name(), f.detail)?;
    }
    Ok(())
}

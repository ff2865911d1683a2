//! The DNS channel (PROFILE.md P15): TXT records at `_herald.<domain>` and
//! `<name>._herald.<domain>`, through hickory-resolver, DNSSEC-validated
//! under the trust anchors the caller gives.

mod anchor;
mod record;

use core::time::Duration;
use std::net::SocketAddr;

use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};
use hickory_resolver::proto::dnssec::Proof;
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::{Resolver as Hickory, TokioResolver};

pub use anchor::{AnchorError, MAX_TRUST_ANCHORS, TrustAnchors};

use crate::{Channel, Handle, Lookup, Query, ResolveError, Resolved, Source};

/// Most TXT records read at one name.
pub const MAX_DNS_RECORDS: usize = 32;

/// Most bytes of TXT data read at one name (all records together).
pub const MAX_DNS_ANSWER: usize = 8192;

/// How long one DNS query may take before it is retried (the resolver's
/// total bound still applies).
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a DNS channel sends its queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DnsServer {
    /// The system's resolver configuration (`/etc/resolv.conf`).
    System,
    /// One server (`--dns SERVER:PORT`), over UDP and TCP.
    At(SocketAddr),
}

/// The DNS channel: asks for a handle's TXT records (P15) and proposes the
/// sigils and keys they name.
pub struct DnsChannel {
    /// Answers not under a trust anchor: not validated.
    plain: TokioResolver,
    /// Answers under a trust anchor: validated, or an error.
    secure: Option<(TokioResolver, TrustAnchors)>,
}

impl core::fmt::Debug for DnsChannel {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("DnsChannel")
            .field("anchors", &self.secure.as_ref().map(|(_, a)| a))
            .finish_non_exhaustive()
    }
}

impl DnsChannel {
    /// A channel asking `server`, validating names under `anchors` (none:
    /// nothing is validated, every answer is `dnssec: false`). Call it
    /// within a tokio runtime.
    pub fn new(server: DnsServer, anchors: Option<TrustAnchors>) -> Result<Self, ResolveError> {
        let (config, mut opts) = match server {
            DnsServer::System => {
                hickory_resolver::system_conf::read_system_conf().map_err(|e| {
                    ResolveError::Unreachable {
                        detail: format!("system DNS configuration: {e}"),
                    }
                })?
            }
            DnsServer::At(addr) => {
                let mut ns = NameServerConfig::udp_and_tcp(addr.ip());
                for c in &mut ns.connections {
                    c.port = addr.port();
                }
                (
                    ResolverConfig::from_name_servers(vec![ns]),
                    ResolverOpts::default(),
                )
            }
        };
        opts.timeout = QUERY_TIMEOUT;
        opts.attempts = 2;
        // Names are always fully qualified: no search list, no hosts file.
        opts.ndots = 0;
        opts.use_hosts_file = hickory_resolver::config::ResolveHosts::Never;
        let build = |anchors: Option<&TrustAnchors>| {
            let mut b =
                Hickory::builder_with_config(config.clone(), TokioRuntimeProvider::default())
                    .with_options(opts.clone());
            if let Some(a) = anchors {
                b.options_mut().validate = true;
                b = b.with_trust_anchor(a.anchors());
            }
            b.build().map_err(|e| ResolveError::Unreachable {
                detail: format!("DNS resolver: {e}"),
            })
        };
        let plain = build(None)?;
        let secure = match anchors {
            Some(a) => Some((build(Some(&a))?, a)),
            None => None,
        };
        Ok(Self { plain, secure })
    }

    /// The TXT records at `handle`'s record name, as answers.
    async fn ask(&self, handle: &Handle) -> Result<Vec<Resolved>, ResolveError> {
        let name = Name::from_ascii(handle.record_name()).map_err(|_| ResolveError::Malformed {
            problem: format!("{handle} does not make a DNS name"),
        })?;
        let (resolver, validating) = match &self.secure {
            Some((r, anchors)) if anchors.covers(&name) => (r, true),
            _ => (&self.plain, false),
        };
        let lookup = match resolver.lookup(name.clone(), RecordType::TXT).await {
            Ok(lookup) => lookup,
            Err(e) if e.is_no_records_found() || e.is_nx_domain() => {
                tracing::debug!(%name, "no TXT records");
                return Ok(Vec::new());
            }
            Err(e) => return Err(net_error(&name, e)),
        };
        let mut strings = Vec::new();
        let (mut bytes, mut ttl) = (0usize, u32::MAX);
        for rr in lookup.answers() {
            let RData::TXT(txt) = &rr.data else { continue };
            if validating && rr.proof != Proof::Secure {
                return Err(ResolveError::Dnssec {
                    detail: format!("{name}: answer {}", rr.proof),
                });
            }
            bytes = bytes.saturating_add(txt.txt_data.iter().map(|s| s.len()).sum());
            if strings.len() >= MAX_DNS_RECORDS || bytes > MAX_DNS_ANSWER {
                return Err(ResolveError::TooLarge {
                    limit: MAX_DNS_ANSWER,
                });
            }
            ttl = ttl.min(rr.ttl);
            strings.push(&txt.txt_data);
        }
        let mut answers = Vec::new();
        let mut refused = None;
        for data in strings {
            let parts: Vec<&[u8]> = data.iter().map(|s| &s[..]).collect();
            match record::parse(&parts) {
                Ok(Some(r)) => {
                    let mut a = Resolved::new(r.sigil, r.key, Source::Dns)
                        .with_handle(handle.clone())
                        .with_dnssec(validating)
                        .with_ttl(Duration::from_secs(ttl.into()));
                    if let Some(url) = r.conduit {
                        a = a.with_conduit(url);
                    }
                    answers.push(a);
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(%name, error = %e, "HERALD TXT record refused");
                    refused = Some(e);
                }
            }
        }
        match refused {
            Some(e) if answers.is_empty() => Err(ResolveError::Malformed {
                problem: format!("TXT record at {name}: {e}"),
            }),
            _ => Ok(answers),
        }
    }
}

/// A resolver error as the resolution reports it.
fn net_error(name: &Name, e: NetError) -> ResolveError {
    match &e {
        NetError::Timeout => ResolveError::Timeout,
        NetError::Dns(DnsError::DnssecBogus | DnsError::Nsec { .. }) => ResolveError::Dnssec {
            detail: format!("{name}: {e}"),
        },
        _ => ResolveError::Unreachable {
            detail: format!("{name}: {e}"),
        },
    }
}

impl Channel for DnsChannel {
    fn source(&self) -> Source {
        Source::Dns
    }

    fn lookup<'a>(&'a self, query: &'a Query) -> Lookup<'a> {
        Box::pin(async move {
            match &query.handle {
                Some(handle) => self.ask(handle).await,
                // DNS names handles, not sigils.
                None => Ok(Vec::new()),
            }
        })
    }
}

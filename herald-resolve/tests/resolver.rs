//! The resolver's own rules (PROFILE.md P15) with channels made up here:
//! order, the sigil check, the handle check, the time bound, the cache.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use herald_core::SigilForm;
use herald_resolve::{Channel, Handle, Lookup, Query, ResolveError, Resolved, Resolver, Source};
use herald_testkit::key;
use herald_verify::{Keyring, Provenance};

/// A channel answering the same answers (or error, or nothing in time) to
/// every query, counting its calls.
struct Fixed {
    source: Source,
    answers: Result<Vec<Resolved>, ResolveError>,
    hang: bool,
    calls: Arc<AtomicUsize>,
}

impl Fixed {
    fn new(source: Source, answers: Result<Vec<Resolved>, ResolveError>) -> Self {
        Self {
            source,
            answers,
            hang: false,
            calls: Arc::default(),
        }
    }
}

impl Channel for Fixed {
    fn source(&self) -> Source {
        self.source
    }
    fn lookup<'a>(&'a self, _query: &'a Query) -> Lookup<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if self.hang {
                std::future::pending::<()>().await;
            }
            self.answers.clone()
        })
    }
}

fn handle(text: &str) -> Handle {
    Handle::parse(text).unwrap()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn a_key_that_does_not_hash_is_reported_and_never_used() {
    let (a, b) = (key(1).public_key(), key(2).public_key());
    let sigil = a.sigil(SigilForm::Default);
    let liar = Fixed::new(Source::Dns, Ok(vec![Resolved::new(sigil, b, Source::Dns)]));
    let honest = Fixed::new(
        Source::Conduit,
        Ok(vec![Resolved::new(sigil, a, Source::Conduit)]),
    );
    let resolver = Resolver::new()
        .with_channel(Box::new(liar))
        .with_channel(Box::new(honest));
    let out = rt().block_on(resolver.resolve(&Query::sigil(sigil)));
    assert_eq!(out.answers.len(), 1);
    assert_eq!(out.answers[0].key, a);
    assert_eq!(out.answers[0].source, Source::Conduit);
    assert_eq!(out.failures.len(), 1);
    assert_eq!(out.failures[0].source, Source::Dns);
    assert!(matches!(
        out.failures[0].error,
        ResolveError::KeyMismatch { .. }
    ));
}

#[test]
fn only_the_asked_sigil_at_the_asked_handle() {
    let (a, b) = (key(1).public_key(), key(2).public_key());
    let (sa, sb) = (a.sigil(SigilForm::Default), b.sigil(SigilForm::Default));
    let at = handle("alice@acme.com");
    let answers = vec![
        Resolved::new(sb, b, Source::Dns).with_handle(at.clone()),
        Resolved::new(sa, a, Source::Dns).with_handle(handle("bob@acme.com")),
    ];
    let resolver = Resolver::new().with_channel(Box::new(Fixed::new(Source::Dns, Ok(answers))));
    let out = rt().block_on(resolver.resolve(&Query::sigil_at(sa, at.clone())));
    assert!(!out.is_resolved(), "{out:?}");
    assert!(out.failures.is_empty());
    // The handle alone: every sigil it names.
    let out = rt().block_on(resolver.resolve(&Query::handle(at)));
    assert_eq!(out.answers.len(), 1);
    assert_eq!(out.answers[0].sigil, sb);
}

#[test]
fn the_keyring_first_but_never_for_a_handle() {
    let a = key(1).public_key();
    let sa = a.sigil(SigilForm::Default);
    let mut keyring = Keyring::new();
    keyring.insert(a, Provenance::Birth);
    let channel = Fixed::new(Source::Dns, Ok(vec![]));
    let calls = channel.calls.clone();
    let resolver = Resolver::new()
        .with_keyring(keyring)
        .with_channel(Box::new(channel));
    let out = rt().block_on(resolver.resolve(&Query::sigil(sa)));
    assert_eq!(out.answers[0].source, Source::Birth);
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let out = rt().block_on(resolver.resolve(&Query::sigil_at(sa, handle("acme.com"))));
    assert!(!out.is_resolved());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn a_hanging_channel_times_out_and_the_next_is_asked() {
    let a = key(1).public_key();
    let sa = a.sigil(SigilForm::Default);
    let mut hung = Fixed::new(Source::Dns, Ok(vec![]));
    hung.hang = true;
    let resolver = Resolver::new()
        .with_timeout(Duration::from_millis(50))
        .with_channel(Box::new(hung))
        .with_channel(Box::new(Fixed::new(
            Source::Conduit,
            Err(ResolveError::Timeout),
        )));
    let started = std::time::Instant::now();
    let out = rt().block_on(resolver.resolve(&Query::sigil(sa)));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!out.is_resolved());
    let sources: Vec<_> = out.failures.iter().map(|f| f.source).collect();
    assert_eq!(sources, [Source::Dns, Source::Conduit]);
    assert_eq!(out.failures[0].error, ResolveError::Timeout);
}

#[test]
fn answers_are_cached_for_their_ttl_only() {
    let a = key(1).public_key();
    let sa = a.sigil(SigilForm::Default);
    let cached = Fixed::new(
        Source::Dns,
        Ok(vec![
            Resolved::new(sa, a, Source::Dns).with_ttl(Duration::from_secs(60)),
        ]),
    );
    let calls = cached.calls.clone();
    let resolver = Resolver::new().with_channel(Box::new(cached));
    let rt = rt();
    for _ in 0..3 {
        assert!(
            rt.block_on(resolver.resolve(&Query::sigil(sa)))
                .is_resolved()
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let uncached = Fixed::new(Source::Dns, Ok(vec![Resolved::new(sa, a, Source::Dns)]));
    let calls = uncached.calls.clone();
    let resolver = Resolver::new().with_channel(Box::new(uncached));
    for _ in 0..3 {
        assert!(
            rt.block_on(resolver.resolve(&Query::sigil(sa)))
                .is_resolved()
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

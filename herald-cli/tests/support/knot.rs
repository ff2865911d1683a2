//! A real authoritative DNS server for the resolution tests (PROFILE P15):
//! Knot DNS (`knotd`), started on a free loopback port with zone files and
//! a configuration written in a scratch directory, killed when dropped.
//! Knot signs zones itself (`dnssec-signing: on`); `keymgr` prints the
//! DNSKEY records a resolver takes as trust anchors.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long knotd may take to start, load and sign.
const START: Duration = Duration::from_secs(20);

/// `knotd` and `keymgr`, or `None` after the one-line skip notice
/// (a failure under HERALD_TEST_ALL=1).
pub(crate) fn programs() -> Option<(PathBuf, PathBuf)> {
    let find = |name: &str| {
        herald_testkit::external::on_path(name).or_else(|| {
            // Debian installs them in /usr/sbin, not always on a user's PATH.
            let sbin = Path::new("/usr/sbin").join(name);
            (std::env::var_os(herald_testkit::external::PATH_ONLY).is_none() && sbin.is_file())
                .then_some(sbin)
        })
    };
    match (find("knotd"), find("keymgr")) {
        (Some(knotd), Some(keymgr)) => Some((knotd, keymgr)),
        _ => {
            herald_testkit::external::missing("knotd and keymgr (Knot DNS)", "apt-get install knot")
        }
    }
}

/// One zone served: its name, its zone file text, and whether knotd signs it.
pub(crate) struct Zone<'a> {
    pub(crate) name: &'a str,
    pub(crate) text: String,
    pub(crate) sign: bool,
}

/// A running knotd.
pub(crate) struct Knot {
    child: Child,
    pub(crate) port: u16,
    config: PathBuf,
    dir: PathBuf,
    keymgr: PathBuf,
    lines: mpsc::Receiver<String>,
}

/// A loopback port free for both UDP and TCP, as far as one can tell.
pub(crate) fn free_port() -> u16 {
    loop {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

impl Knot {
    /// Start knotd in `dir` serving `zones` (written there, unless
    /// `keep_files` and the file exists), and wait until it says it
    /// started and, for each zone it signs, that it wrote the signed zone
    /// file.
    pub(crate) fn start(
        (knotd, keymgr): &(PathBuf, PathBuf),
        dir: &Path,
        zones: &[Zone<'_>],
        keep_files: bool,
    ) -> Knot {
        let db = dir.join("db");
        std::fs::create_dir_all(&db).unwrap();
        let port = free_port();
        let mut config = format!(
            "server:\n    listen: 127.0.0.1@{port}\n    rundir: {dir}\n\
             log:\n  - target: stderr\n    any: info\n\
             database:\n    storage: {db}\n\
             policy:\n  - id: test\n    algorithm: ecdsap256sha256\n    nsec3: off\n\
             template:\n  - id: default\n    storage: {dir}\n    file: \"%s.zone\"\n    \
             zonefile-sync: 0\n    journal-content: none\n\
             zone:\n",
            dir = dir.display(),
            db = db.display(),
        );
        for zone in zones {
            let file = dir.join(format!("{}.zone", zone.name));
            if !(keep_files && file.exists()) {
                std::fs::write(&file, &zone.text).unwrap();
            }
            config.push_str(&format!("  - domain: {}\n", zone.name));
            if zone.sign {
                config.push_str("    dnssec-signing: on\n    dnssec-policy: test\n");
            }
        }
        let conf = dir.join(format!("knot-{port}.conf"));
        std::fs::write(&conf, config).unwrap();
        let mut child = Command::new(knotd)
            .arg("-c")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start knotd");
        let (tx, lines) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut knot = Knot {
            child,
            port,
            config: conf,
            dir: dir.to_path_buf(),
            keymgr: keymgr.clone(),
            lines,
        };
        let mut wanted = vec!["server started".to_owned()];
        for zone in zones.iter().filter(|z| z.sign) {
            wanted.push(format!("[{}.] zone file updated", zone.name));
        }
        knot.wait_for(wanted);
        knot
    }

    /// Wait until log lines containing each of `wanted` (in any order)
    /// were seen, bounded by [`START`].
    fn wait_for(&mut self, mut wanted: Vec<String>) {
        let deadline = std::time::Instant::now() + START;
        let mut seen = Vec::new();
        while !wanted.is_empty() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    wanted.retain(|w| !line.contains(w.as_str()));
                    seen.push(line);
                }
                Err(_) => panic!("knotd never said {wanted:?}; it said:\n{}", seen.join("\n")),
            }
        }
    }

    /// The zone's DNSKEY records (key- and zone-signing), as the signed
    /// zone file knotd wrote holds them: trust anchor lines. (`keymgr
    /// ZONE dnskey` prints only the key-signing key, checked to be among
    /// them; with only that as anchor hickory asks the parent zone for a
    /// DS, and these test zones have no parent.)
    pub(crate) fn dnskeys(&self, zone: &str) -> String {
        let text = std::fs::read_to_string(self.dir.join(format!("{zone}.zone"))).unwrap();
        let keys: String = text
            .lines()
            .filter(|l| l.split_whitespace().nth(2) == Some("DNSKEY"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(keys.lines().count() >= 2, "{text}");
        let ksk = Command::new(&self.keymgr)
            .arg("-c")
            .arg(&self.config)
            .arg(format!("{zone}."))
            .arg("dnskey")
            .output()
            .unwrap();
        let ksk = String::from_utf8(ksk.stdout).unwrap();
        let ksk_key = ksk.split_whitespace().last().unwrap_or_default();
        assert!(
            !ksk_key.is_empty() && keys.contains(ksk_key),
            "keymgr: {ksk}"
        );
        keys
    }

    /// `127.0.0.1:PORT`.
    pub(crate) fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for Knot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! A throwaway PostgreSQL cluster for the fleet tests: `initdb` in a temp
//! dir, `pg_ctl start` on a free loopback port (socket in the same dir),
//! bounded in time, stopped (`-m immediate`) and deleted on drop.
//!
//! Binaries: as `herald_testkit::external::postgres` finds them
//! (`$HERALD_PG_BIN`, Debian's `/usr/lib/postgresql/*/bin`, `PATH`); without
//! them the test is skipped with one line (a failure under
//! `HERALD_TEST_ALL=1`). PostgreSQL
//! refuses to run as root: as root the cluster runs as the `postgres` user
//! (Debian's package creates it), via `runuser`.

use std::path::PathBuf;
use std::process::Command;

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    user: Option<String>,
    pub port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl Cluster {
    /// A running cluster, or `None` (the test skipped) without PostgreSQL.
    pub fn start() -> Option<Self> {
        let bin = herald_testkit::external::postgres()?;
        let dir = tempfile::tempdir().unwrap();
        let user = is_root().then(|| "postgres".to_owned());
        if let Some(u) = &user {
            let ok = Command::new("chown")
                .args(["-R", &format!("{u}:"), &dir.path().to_string_lossy()])
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown of the cluster dir to {u}");
        }
        let mut c = Self {
            dir,
            bin,
            user,
            port: 0,
        };
        let data = c.data();
        c.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "herald",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        );
        c.port = free_port();
        c.start_again();
        Some(c)
    }

    /// Start the server (again, after [`Cluster::stop`]) on the same port
    /// and data; returns once it accepts connections (`pg_ctl -w`).
    pub fn start_again(&self) {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self
            .dir
            .path()
            .join("server.log")
            .to_string_lossy()
            .into_owned();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &opts,
                "start",
            ],
        );
    }

    /// Stop the server at once (`-m immediate`: connections cut, as a
    /// crash or a network loss would); returns once it is down.
    pub fn stop(&self) {
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-m",
                "immediate",
                "-w",
                "-t",
                "30",
                "stop",
            ],
        );
    }

    fn data(&self) -> String {
        self.dir.path().join("data").to_string_lossy().into_owned()
    }

    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match &self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The URL of the `postgres` database, over TCP on loopback.
    pub fn url(&self) -> String {
        self.db_url("postgres")
    }

    /// The URL of database `db`.
    pub fn db_url(&self, db: &str) -> String {
        format!("postgres://herald@127.0.0.1:{}/{db}", self.port)
    }

    /// Create database `db`; its URL.
    pub async fn create_db(&self, db: &str) -> String {
        let c = self.client(&self.url()).await;
        c.batch_execute(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        self.db_url(db)
    }

    /// A client of `url`, its connection driven on the current runtime.
    pub async fn client(&self, url: &str) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(async move {
            let _ = connection.await;
        });
        client
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "-w", "-t", "30", "stop"])
            .output();
    }
}

/// The fleet's log as stored: the tree of `log_leaves`, each leaf at its
/// index (no gap), each id once (no duplicate); and the ids.
pub async fn stored_log(client: &tokio_postgres::Client) -> (herald_merkle::Tree, Vec<[u8; 32]>) {
    let rows = client
        .query("SELECT seq, leaf, id FROM log_leaves ORDER BY seq", &[])
        .await
        .unwrap();
    let mut tree = herald_merkle::Tree::new();
    let mut ids = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(
            row.get::<_, i64>(0),
            i64::try_from(i).unwrap(),
            "a gap in the log"
        );
        tree.push(herald_merkle::leaf_hash(&row.get::<_, Vec<u8>>(1)));
        let id: [u8; 32] = row.get::<_, Vec<u8>>(2).try_into().unwrap();
        assert!(seen.insert(id), "a duplicate leaf");
        ids.push(id);
    }
    (tree, ids)
}

/// Every head is signed by `key`, of a prefix of `tree`, and consistent
/// with every other (an RFC 9162 consistency proof between every pair).
pub fn assert_one_tree(
    tree: &herald_merkle::Tree,
    heads: &[herald_verify::SignedTreeHead],
    key: &herald_core::PublicKey,
) {
    for h in heads {
        h.verify_with_key(key).unwrap();
        assert_eq!(tree.root_at(h.size()).unwrap(), *h.head().root(), "a fork");
    }
    for (i, h1) in heads.iter().enumerate() {
        for h2 in &heads[i + 1..] {
            let proof = tree.consistency_proof(h1.size(), h2.size()).unwrap();
            herald_merkle::verify_consistency(
                h1.size(),
                h2.size(),
                &proof,
                h1.head().root(),
                h2.head().root(),
            )
            .unwrap();
        }
    }
}

/// The tree heads the sequencers stored, by size.
pub async fn stored_heads(client: &tokio_postgres::Client) -> Vec<herald_verify::SignedTreeHead> {
    client
        .query("SELECT sth FROM tree_heads ORDER BY size", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| herald_verify::SignedTreeHead::decode(&r.get::<_, Vec<u8>>(0)).unwrap())
        .collect()
}

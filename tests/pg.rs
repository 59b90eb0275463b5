//! A real PostgreSQL server for the sync tests: `initdb` and `pg_ctl` in a
//! temporary directory, listening on a unix socket only. `initdb` refuses
//! to run as root, so under root the server runs as the `postgres` user
//! through `runuser`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::skip;

/// A server of its own for one test, stopped when dropped.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Its port: the unix socket's name, and the TCP port with TLS.
    port: u16,
    /// The server's options beyond the socket.
    options: String,
}

/// Where Debian puts PostgreSQL's programs, newest first, or
/// `TRAE_MEM_TEST_PG_BIN`.
fn bin_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TRAE_MEM_TEST_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid takes nothing, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

impl Postgres {
    /// Starts a server, or says loudly why it cannot and returns `None`.
    /// Under `CI=true` that is a failure.
    pub fn start() -> Option<Self> {
        Self::launch(false)
    }

    /// A server that also listens on 127.0.0.1 with TLS, its certificate
    /// (for `localhost`) signed by a certificate authority of its own, `ca()`.
    pub fn start_tls() -> Option<Self> {
        Self::launch(true)
    }

    fn launch(tls: bool) -> Option<Self> {
        let Some(bin) = bin_dir() else {
            let missing = "no PostgreSQL (initdb under /usr/lib/postgresql/*/bin, or TRAE_MEM_TEST_PG_BIN): \
                           install Debian's postgresql (scripts/test does, as root)";
            skip("a sync test", missing);
            return None;
        };
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("sock")).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut options = String::new();
        if tls {
            make_certificates(dir.path());
            let file = |name: &str| dir.path().join(name).display().to_string();
            options = format!(
                " -c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                file("server.crt"),
                file("server.key")
            );
        }
        if is_root() {
            let chown = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.path()).status().unwrap();
            assert!(chown.success(), "cannot give the server's directory to the postgres user");
        }
        let server = Self { dir, bin, port, options };
        let data = server.data();
        server.run("initdb", &["-D", &data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
        if tls {
            // Over TCP, TLS or nothing: a connection that works was encrypted.
            let hba = Path::new(&data).join("pg_hba.conf");
            let rules = std::fs::read_to_string(&hba).unwrap().replace("\nhost ", "\nhostssl ");
            std::fs::write(&hba, rules).unwrap();
        }
        server.start_again();
        Some(server)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn socket_dir(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    /// Runs one of PostgreSQL's programs, as `postgres` under root.
    fn run(&self, program: &str, args: &[&str]) {
        let program = self.bin.join(program);
        let mut command = if is_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        let out = command.args(args).current_dir(self.dir.path()).output().expect("run a PostgreSQL program");
        assert!(
            out.status.success(),
            "{} {args:?} failed: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts the server (again, after `stop`).
    pub fn start_again(&self) {
        let options = format!(
            "-k {} -p {} -c listen_addresses='' -c fsync=off{}",
            self.socket_dir().display(),
            self.port,
            self.options
        );
        let log = self.dir.path().join("server.log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-o", &options, "-l", &log, "-w", "start"]);
    }

    /// Stops the server at once, as a crash or an outage would.
    pub fn stop(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    /// The connection string trae-mem is given.
    pub fn url(&self) -> String {
        format!("host={} port={} user=postgres dbname=postgres", self.socket_dir().display(), self.port)
    }

    /// The connection string over TCP, with TLS required (`start_tls`).
    pub fn tls_url(&self) -> String {
        format!("host=localhost hostaddr=127.0.0.1 port={} user=postgres dbname=postgres sslmode=require", self.port)
    }

    /// The certificate authority that signed the TLS server's certificate.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A client, for the tests' own looks at the server's tables.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.url(), postgres::NoTls).expect("connect to the test server")
    }

    /// Every row of every table trae-mem made, as PostgreSQL prints it
    /// (byte strings in hex), one string a row.
    pub fn dump(&self) -> Vec<String> {
        let mut client = self.client();
        let tables: Vec<String> = client
            .query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename", &[])
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        assert!(tables.iter().any(|t| t == "trae_mem_records"), "no trae_mem_records among {tables:?}");
        let mut rows = Vec::new();
        for table in tables {
            for row in client.query(&format!("SELECT t::text FROM {table} t"), &[]).unwrap() {
                rows.push(row.get(0));
            }
        }
        rows
    }

    /// How many records the server holds (none before the first sync made its tables).
    pub fn records(&self) -> i64 {
        let mut client = self.client();
        let made: bool = client.query_one("SELECT to_regclass('trae_mem_records') IS NOT NULL", &[]).unwrap().get(0);
        if !made {
            return 0;
        }
        client.query_one("SELECT count(*) FROM trae_mem_records", &[]).unwrap().get(0)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if Path::new(&self.data()).join("postmaster.pid").exists() {
            self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
        }
    }
}

/// A certificate authority and a server certificate for `localhost` it
/// signed, made with `openssl` in `dir`.
fn make_certificates(dir: &Path) {
    std::fs::write(dir.join("san.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    let steps: [&[&str]; 3] = [
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=trae-mem test CA",
        ],
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ],
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    ];
    for args in steps {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl runs");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    #[cfg(unix)]
    std::fs::set_permissions(dir.join("server.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}

/// Whether `text` (a dumped row) holds `marker`, as text or as the hex of
/// its bytes (how a byte string prints).
pub fn holds(text: &str, marker: &str) -> bool {
    let hex: String = marker.bytes().map(|b| format!("{b:02x}")).collect();
    text.contains(marker) || text.to_lowercase().contains(&hex)
}

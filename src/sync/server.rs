//! The shared log in PostgreSQL: one append-only table of sealed records,
//! hash-partitioned by project, migrated like the local schema.
//!
//! The server assigns each record a sequence number; devices pull by
//! cursor. A sequence can commit out of order (a slow transaction takes 10
//! and commits after 11 is seen), and a puller past 11 would never see 10,
//! so pushes to one project take an advisory lock and run one at a time.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use postgres::{Client, NoTls};

use super::SyncError;
use super::seal::Sealed;
use crate::store::RecordId;

/// Each entry moves the server's schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[include_str!("server_0001.sql")];

/// The advisory-lock class of trae-mem's locks (the first key of the pair).
const LOCK_CLASS: i32 = 0x7472_6165; // "trae"

/// The lock (in `LOCK_CLASS`) that serialises migrations.
const MIGRATION_LOCK: i32 = 0;

/// How long connecting may take when the URL does not say.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A record read back, with its sequence number.
pub struct Pulled {
    pub seq: i64,
    pub record: Sealed,
}

/// A connection to the sync server.
pub struct Server {
    client: Client,
}

impl Server {
    /// Connects to `url` (a PostgreSQL connection string or URL) and brings
    /// its schema up to date.
    pub fn connect(url: &str) -> Result<Self> {
        let mut config: postgres::Config = url.parse().context("[sync] url is not a PostgreSQL connection string")?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("trae-mem");
        }
        let connected = match over_network(&config) {
            true => config.connect(tls()?),
            false => config.connect(NoTls),
        };
        let client = connected.map_err(|err| {
            let hint = match format!("{err:#}").contains("certificate") {
                true => {
                    "; trae-mem checks the server's certificate against the system's certificate \
                         authorities (SSL_CERT_FILE names another bundle, such as your provider's CA)"
                }
                false => "",
            };
            anyhow::Error::new(err).context(format!("cannot reach the sync server ({}){hint}", where_(&config)))
        })?;
        let mut server = Self { client };
        server.migrate().context("cannot prepare the sync server's tables")?;
        Ok(server)
    }

    fn migrate(&mut self) -> Result<()> {
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&LOCK_CLASS, &MIGRATION_LOCK])?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS trae_mem_schema (version integer NOT NULL)")?;
        let version: i32 = tx.query_one("SELECT coalesce(max(version), 0) FROM trae_mem_schema", &[])?.get(0);
        if version as usize > MIGRATIONS.len() {
            return Err(SyncError::NewerSchema { found: version, known: MIGRATIONS.len() }.into());
        }
        for sql in &MIGRATIONS[version as usize..] {
            tx.batch_execute(sql)?;
        }
        if version as usize != MIGRATIONS.len() {
            tx.execute("DELETE FROM trae_mem_schema", &[])?;
            tx.execute("INSERT INTO trae_mem_schema(version) VALUES ($1)", &[&(MIGRATIONS.len() as i32)])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Appends records to `project`'s log, in order, and deletes the
    /// records they supersede (`withdrawn`: what a tombstone names, an
    /// older version of a summary), in one transaction. Records already
    /// there (by id) are left as they are. Returns how many were new.
    pub fn push(&mut self, project: &[u8; 32], records: &[Sealed], withdrawn: &[RecordId]) -> Result<u64> {
        let ids: Vec<uuid::Uuid> = records.iter().map(|r| uuid::Uuid::from_bytes(r.id)).collect();
        let kinds: Vec<i16> = records.iter().map(|r| r.kind).collect();
        let nonces: Vec<&[u8]> = records.iter().map(|r| r.nonce.as_slice()).collect();
        let bodies: Vec<&[u8]> = records.iter().map(|r| r.body.as_slice()).collect();
        let mut tx = self.client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&LOCK_CLASS, &project_lock(project)])?;
        let inserted = tx.execute(
            "INSERT INTO trae_mem_records(project, id, kind, nonce, body)
             SELECT $1, r.id, r.kind, r.nonce, r.body
             FROM unnest($2::uuid[], $3::int2[], $4::bytea[], $5::bytea[]) WITH ORDINALITY AS r(id, kind, nonce, body, n)
             ORDER BY r.n
             ON CONFLICT (project, id) DO NOTHING",
            &[&project.as_slice(), &ids, &kinds, &nonces, &bodies],
        )?;
        if !withdrawn.is_empty() {
            let withdrawn: Vec<uuid::Uuid> = withdrawn.iter().map(|id| uuid::Uuid::from_bytes(*id)).collect();
            tx.execute(
                "DELETE FROM trae_mem_records WHERE project = $1 AND id = ANY($2::uuid[])",
                &[&project.as_slice(), &withdrawn],
            )?;
        }
        tx.commit()?;
        Ok(inserted)
    }

    /// The project's records after sequence number `after`, oldest first,
    /// at most `limit`.
    pub fn pull(&mut self, project: &[u8; 32], after: i64, limit: i64) -> Result<Vec<Pulled>> {
        let rows = self.client.query(
            "SELECT seq, id, kind, nonce, body FROM trae_mem_records
             WHERE project = $1 AND seq > $2 ORDER BY seq LIMIT $3",
            &[&project.as_slice(), &after, &limit],
        )?;
        Ok(rows
            .iter()
            .map(|row| Pulled {
                seq: row.get(0),
                record: Sealed {
                    id: *row.get::<_, uuid::Uuid>(1).as_bytes(),
                    kind: row.get(2),
                    nonce: row.get(3),
                    body: row.get(4),
                },
            })
            .collect())
    }

    /// The ids of the project's records after sequence number `after`,
    /// read a page at a time.
    pub fn ids_after(&mut self, project: &[u8; 32], mut after: i64) -> Result<Vec<RecordId>> {
        const PAGE: i64 = 10_000;
        let mut ids = Vec::new();
        loop {
            let rows = self.client.query(
                "SELECT seq, id FROM trae_mem_records WHERE project = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&project.as_slice(), &after, &PAGE],
            )?;
            ids.extend(rows.iter().map(|row| *row.get::<_, uuid::Uuid>(1).as_bytes()));
            match rows.last() {
                Some(last) if rows.len() as i64 == PAGE => after = last.get(0),
                _ => return Ok(ids),
            }
        }
    }
}

/// Whether the connection leaves the machine and may be encrypted: TLS,
/// when the server offers it (or must, with `sslmode=require`), except
/// over a unix socket or with `sslmode=disable`.
fn over_network(config: &postgres::Config) -> bool {
    let tcp = config.get_hosts().iter().any(|host| matches!(host, postgres::config::Host::Tcp(_)))
        || config.get_hosts().is_empty();
    tcp && config.get_ssl_mode() != postgres::config::SslMode::Disable
}

/// TLS that checks the server's certificate, and its name, against the
/// system's certificate authorities (`SSL_CERT_FILE` and `SSL_CERT_DIR`
/// name others): a managed server's password never goes to an impostor.
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        bail!("no certificate authorities found to check the sync server's certificate (set SSL_CERT_FILE)");
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The project's push lock, in `LOCK_CLASS`.
fn project_lock(project: &[u8; 32]) -> i32 {
    i32::from_be_bytes(project[..4].try_into().expect("four bytes"))
}

/// Where a connection goes, without its password: for error messages.
fn where_(config: &postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|host| match host {
            postgres::config::Host::Tcp(name) => name.clone(),
            #[cfg(unix)]
            postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let database = config.get_dbname().or(config.get_user()).unwrap_or("postgres");
    format!("database {database} on {}", if hosts.is_empty() { "localhost".to_owned() } else { hosts.join(", ") })
}

//! The only way out to the network a plugin has: `wasi:http` requests to
//! the endpoints its `[plugins.grants] http` names, checked here on every
//! request. The check reads the request's own scheme, host and port, never
//! its `Host` header (Spin's CVE-2024-32980), and refuses a path that climbs
//! out of the granted prefix. A grant's key is added here, from the
//! environment, after the plugin has let go of the request, so that the
//! plugin never holds it. A redirect is a new request, checked like any
//! other. A host that resolves to a private address is refused unless the
//! grant names that address itself (`http://localhost:11434/` for Ollama).
//! The host is resolved once: the request goes to the addresses checked
//! (`pinned`), so a name cannot answer one address to the check and another
//! to the connection (DNS rebinding).
//! Every refusal is an `HTTP-request-denied` error for the plugin and a
//! line in its log.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue, Request, Response};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::pinned;
use crate::config::HttpGrant;

/// The endpoints one plugin may call, and what it was refused.
pub struct Gate {
    endpoints: Vec<Endpoint>,
    /// Why requests were refused, for the plugin log.
    refusals: Arc<Mutex<Vec<String>>>,
    /// Requests a server received, answered or not.
    handed_over: Arc<AtomicUsize>,
    resolve: Resolve,
}

/// Turns a host and port into the addresses to check and connect to: the
/// system's resolver, or a scripted one in tests.
type Resolve = Arc<dyn Fn(String, u16) -> Resolving + Send + Sync>;
type Resolving = Pin<Box<dyn Future<Output = std::io::Result<Vec<SocketAddr>>> + Send>>;

fn system_resolver() -> Resolve {
    Arc::new(|host, port| Box::pin(async move { Ok(tokio::net::lookup_host((host, port)).await?.collect()) }))
}

/// One granted endpoint, resolved from its grant.
#[derive(Debug, Clone)]
struct Endpoint {
    scheme: String,
    host: String,
    port: u16,
    path: String,
    /// The header to add, or the variable that should have held it.
    key: Key,
    /// The grant names a private address itself.
    private_granted: bool,
}

#[derive(Debug, Clone)]
enum Key {
    None,
    Header(HeaderName, HeaderValue),
    /// The grant names a variable that is unset (or no valid header value).
    Missing(String),
}

impl Gate {
    /// The gate for `grants`, reading their keys from the environment now.
    pub fn new(grants: &[HttpGrant]) -> Gate {
        Gate {
            endpoints: grants.iter().filter_map(Endpoint::of).collect(),
            refusals: Arc::default(),
            handed_over: Arc::default(),
            resolve: system_resolver(),
        }
    }

    /// How many requests a server received during the call: what a model
    /// may have charged for, even when its answer never came back.
    pub fn handed_over(&self) -> usize {
        self.handed_over.load(Ordering::Relaxed)
    }

    /// Why requests were refused during the call.
    pub fn refusals(&self) -> Vec<String> {
        self.refusals.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn refuse(&self, why: String) -> Error {
        self.refusals.lock().unwrap_or_else(|p| p.into_inner()).push(why);
        Error::HttpRequestDenied
    }

    /// The endpoint that grants `request`, or why none does.
    fn admit(&self, request: &Request<WasiBody>) -> Result<&Endpoint, String> {
        let uri = request.uri();
        let method = request.method();
        let shown = format!("{method} {uri}");
        let (Some(scheme), Some(host)) = (uri.scheme_str(), uri.host()) else {
            return Err(format!("{shown}: a request must name its scheme and host"));
        };
        let port = uri.port_u16().unwrap_or(default_port(scheme));
        let path = uri.path();
        if climbs(path) {
            return Err(format!("{shown}: the path climbs out of its prefix"));
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        self.endpoints
            .iter()
            .find(|e| e.scheme == scheme && e.host.eq_ignore_ascii_case(host) && e.port == port && under(path, &e.path))
            .ok_or_else(|| format!("{shown}: not granted (see [plugins.grants] http)"))
    }
}

impl Endpoint {
    fn of(grant: &HttpGrant) -> Option<Endpoint> {
        // `config::check` already refused a grant whose URL does not parse.
        let uri: http::Uri = grant.url.parse().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let host = uri.host()?.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = uri.port_u16().unwrap_or(default_port(&scheme));
        let key = match (&grant.header, &grant.env) {
            (Some(header), Some(env)) => {
                let value = std::env::var(env).ok().filter(|v| !v.is_empty());
                let header = HeaderName::from_bytes(header.as_bytes()).ok();
                let value = value.and_then(|v| HeaderValue::from_str(&format!("{}{v}", grant.prefix)).ok());
                match (header, value) {
                    (Some(header), Some(mut value)) => {
                        value.set_sensitive(true);
                        Key::Header(header, value)
                    }
                    _ => Key::Missing(env.clone()),
                }
            }
            _ => Key::None,
        };
        let private_granted = host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| !is_public(ip));
        Some(Endpoint { scheme, host, port, path: uri.path().to_owned(), key, private_granted })
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme.eq_ignore_ascii_case("https") { 443 } else { 80 }
}

/// Whether `path` is the granted `prefix` or below it: `/v1/messages` grants
/// `/v1/messages` and `/v1/messages/batches`, not `/v1/messagesX`.
fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || rest.starts_with('?'))
}

/// A `..` segment, written out or percent-encoded, which a server would
/// resolve to outside the granted prefix.
fn climbs(path: &str) -> bool {
    let decoded = path.to_ascii_lowercase().replace("%2e", ".").replace("%2f", "/").replace('\\', "/");
    decoded.split('/').any(|segment| segment == "..")
}

/// Whether an address is on the public internet: not loopback, private,
/// link-local, unique-local, shared (CGNAT), documentation or unspecified.
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b)))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                !(v6.is_loopback() || v6.is_unspecified() || first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfe80)
            }
        },
    }
}

type Sent = Box<
    dyn Future<Output = Result<(Response<WasiBody>, Box<dyn Future<Output = Result<(), Error>> + Send>), Error>> + Send,
>;

impl WasiHttpHooks for Gate {
    fn send_request(
        &mut self,
        mut request: Request<WasiBody>,
        options: Option<RequestOptions>,
        _io: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Sent {
        let refused = |gate: &Gate, why: String| -> Sent {
            let error = gate.refuse(why);
            Box::new(async move { Err(error) })
        };
        let endpoint = match self.admit(&request) {
            Ok(endpoint) => endpoint.clone(),
            Err(why) => return refused(self, why),
        };
        match &endpoint.key {
            Key::None => {}
            Key::Header(name, value) => {
                request.headers_mut().insert(name.clone(), value.clone());
            }
            Key::Missing(env) => {
                return refused(self, format!("{}: {env} is not set, so its key cannot be added", request.uri()));
            }
        }
        let refusals = self.refusals.clone();
        let resolve = self.resolve.clone();
        let handed_over = self.handed_over.clone();
        Box::new(async move {
            let addresses =
                resolve(endpoint.host.clone(), endpoint.port).await.map_err(|_| Error::DestinationNotFound)?;
            if !endpoint.private_granted
                && let Some(private) = addresses.iter().map(SocketAddr::ip).find(|ip| !is_public(*ip))
            {
                let why = format!("{}: {} resolves to the private address {private}", request.uri(), endpoint.host);
                refusals.lock().unwrap_or_else(|p| p.into_inner()).push(why);
                return Err(Error::DestinationIpProhibited);
            }
            pinned::send(&addresses, &endpoint.host, request, options, &handed_over).await
        })
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    fn gate(url: &str) -> Gate {
        Gate::new(&[HttpGrant { url: url.into(), header: None, env: None, prefix: String::new() }])
    }

    fn request(uri: &str) -> Request<WasiBody> {
        let body = http_body_util::Empty::<bytes::Bytes>::new().map_err(|never| match never {}).boxed_unsync();
        Request::post(uri).body(body).unwrap()
    }

    #[test]
    fn only_the_granted_scheme_host_port_and_path_pass() {
        let gate = gate("https://api.example.com/v1/messages");
        assert!(gate.admit(&request("https://api.example.com/v1/messages")).is_ok());
        assert!(gate.admit(&request("https://API.example.com:443/v1/messages?beta=1")).is_ok());
        assert!(gate.admit(&request("https://api.example.com/v1/messages/batches")).is_ok());
        for refused in [
            "http://api.example.com/v1/messages",
            "https://api.example.com:8443/v1/messages",
            "https://evil.example.com/v1/messages",
            "https://api.example.com/v1/messagesX",
            "https://api.example.com/v1/models",
            "https://api.example.com/v1/messages/../../admin",
            "https://api.example.com/v1/messages/%2E%2E/admin",
        ] {
            assert!(gate.admit(&request(refused)).is_err(), "{refused} must be refused");
        }
    }

    #[test]
    fn no_grant_admits_nothing() {
        assert!(Gate::new(&[]).admit(&request("https://api.example.com/")).is_err());
    }

    #[test]
    fn private_addresses_are_told_apart() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.0.1",
            "169.254.169.254",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "160.79.104.10", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        assert!(
            Endpoint::of(&HttpGrant {
                url: "http://localhost:11434/v1/".into(),
                header: None,
                env: None,
                prefix: String::new()
            })
            .unwrap()
            .private_granted
        );
        assert!(
            !Endpoint::of(&HttpGrant {
                url: "https://api.example.com/".into(),
                header: None,
                env: None,
                prefix: String::new()
            })
            .unwrap()
            .private_granted
        );
    }

    /// A name that answers a public address to the first lookup and a
    /// loopback one to any later lookup, as a rebinding attacker's DNS does.
    fn rebinding(loopback_port: u16, lookups: Arc<std::sync::atomic::AtomicUsize>) -> Resolve {
        Arc::new(move |_, port| {
            let n = lookups.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let address: SocketAddr = match n {
                // Public by `is_public` (the benchmarking range), routed nowhere here.
                0 => ([198, 18, 0, 1], port).into(),
                _ => ([127, 0, 0, 1], loopback_port).into(),
            };
            Box::pin(async move { Ok(vec![address]) })
        })
    }

    #[test]
    fn a_host_is_resolved_once_and_the_request_goes_only_where_it_was_checked() {
        let loopback = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        loopback.set_nonblocking(true).unwrap();
        let port = loopback.local_addr().unwrap().port();
        let lookups = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut gate = gate(&format!("http://model.example:{port}/v1/"));
        gate.resolve = rebinding(port, lookups.clone());

        let options =
            RequestOptions { connect_timeout: Some(std::time::Duration::from_millis(300)), ..Default::default() };
        let sent = gate.send_request(
            request(&format!("http://model.example:{port}/v1/messages")),
            Some(options),
            Box::new(async { Ok(()) }),
        );
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = runtime.block_on(Pin::from(sent));

        assert!(outcome.is_err(), "nothing answers at the checked public address here");
        assert_eq!(lookups.load(std::sync::atomic::Ordering::SeqCst), 1, "the host was resolved once");
        assert_eq!(gate.handed_over(), 0, "no server received it");
        let reached = loopback.accept();
        assert!(
            reached.as_ref().is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
            "no connection reached the loopback server: {reached:?}"
        );
    }
}

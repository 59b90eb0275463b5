//! What every request passes before a page: the `Host` check against DNS
//! rebinding, the same-origin check on anything that changes state, and the
//! headers that keep a page from being framed, sniffed or scripted from
//! elsewhere. The per-process token that a forget must carry is checked by
//! the form that carries it (`forget`).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::App;

/// No script, style or image from anywhere else, no inline script, no
/// framing, and forms post only here.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The served address and the secret a state-changing form must carry.
pub struct Guard {
    addr: SocketAddr,
    token: String,
}

impl Guard {
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr, token: uuid::Uuid::new_v4().simple().to_string() }
    }

    /// The token that forms which change state carry, and that only pages
    /// of this process know.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether a form's token is this process's.
    pub fn token_matches(&self, token: &str) -> bool {
        // Compared in full, whatever differs first: no timing to learn from.
        token.len() == self.token.len() && token.bytes().zip(self.token.bytes()).fold(0, |d, (a, b)| d | (a ^ b)) == 0
    }

    /// Whether `host` (a `Host` header) names the address served. A DNS
    /// name other than localhost is refused, since a rebinding attack
    /// needs one; on a wildcard address (`--listen 0.0.0.0`) any IP literal
    /// with the port is this server.
    fn host_allowed(&self, host: &str) -> bool {
        let Some((name, port)) = host.rsplit_once(':') else { return false };
        if port.parse() != Ok(self.addr.port()) {
            return false;
        }
        let name = name.trim_start_matches('[').trim_end_matches(']');
        let ip = self.addr.ip();
        if name.eq_ignore_ascii_case("localhost") {
            return ip.is_loopback() || ip.is_unspecified();
        }
        match name.parse::<std::net::IpAddr>() {
            Ok(named) => named == ip || ip.is_unspecified() || (ip.is_loopback() && named.is_loopback()),
            Err(_) => false,
        }
    }
}

/// Checks a request, then adds the security headers to its response.
pub async fn check(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !app.guard.host_allowed(host) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            format!("this viewer answers only to {} (Host was {host:?})", app.guard.addr),
        );
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) && !same_origin(headers, host) {
        return refuse(
            StatusCode::FORBIDDEN,
            "cross-origin request refused: changes come only from the viewer's own pages",
        );
    }
    let mut response = next.run(request).await;
    secure(response.headers_mut());
    response
}

/// Whether a state-changing request comes from a page of this server: its
/// `Origin` (which browsers send with every POST) is this host.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) == Some(format!("http://{host}").as_str())
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    let mut response = (status, message.into()).into_response();
    secure(response.headers_mut());
    response
}

fn secure(headers: &mut HeaderMap) {
    let set = [
        (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "same-origin"),
        // What agents did stays out of caches.
        (header::CACHE_CONTROL, "no-store"),
    ];
    for (name, value) in set {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(addr: &str) -> Guard {
        Guard::new(addr.parse().unwrap())
    }

    #[test]
    fn loopback_answers_to_its_own_names_only() {
        let g = guard("127.0.0.1:4000");
        for ok in ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000", "[::1]:4000"] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for refused in ["127.0.0.1:4001", "evil.example:4000", "127.0.0.1", "", "10.0.0.2:4000", "localhost.evil:4000"]
        {
            assert!(!g.host_allowed(refused), "{refused}");
        }
    }

    #[test]
    fn a_wildcard_address_takes_ip_literals_but_no_dns_names() {
        let g = guard("0.0.0.0:4000");
        assert!(g.host_allowed("192.168.1.20:4000"));
        assert!(g.host_allowed("localhost:4000"));
        assert!(!g.host_allowed("rebind.example:4000"));
    }

    #[test]
    fn tokens_must_match_whole() {
        let g = guard("127.0.0.1:4000");
        let token = g.token().to_owned();
        assert!(g.token_matches(&token));
        assert!(!g.token_matches(&token[..token.len() - 1]));
        assert!(!g.token_matches(""));
    }
}

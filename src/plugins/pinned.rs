//! Sending a plugin's request to the addresses the gate checked, never to a
//! second resolution of its host name. `default_send_request` resolves the
//! host again as it connects, so a name that answers a public address to the
//! check and a loopback one to the connect (DNS rebinding) would reach what
//! no grant allowed. The rest is what it does: TLS verifies the host name
//! against the web's roots, then HTTP/1. A response that stalls is cut by
//! the plugin call's own time limit.

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Poll, ready};
use std::time::Duration;

use http::{Request, Response, Uri};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

/// What drives the connection after the response's head has arrived, until
/// its body has been read; wasi-http runs it beside the plugin.
pub type Io = Box<dyn Future<Output = Result<(), Error>> + Send>;

/// Longest wait for a connection when the plugin sets none: below any
/// plugin's time limit, which cuts the whole call anyway.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Sends `request` to the first of `addresses` that accepts a connection,
/// speaking TLS for `host` when the request is HTTPS. Counts it in
/// `handed_over` once a server has it: from then on it may cost tokens,
/// whatever becomes of the answer.
pub async fn send(
    addresses: &[SocketAddr],
    host: &str,
    mut request: Request<WasiBody>,
    options: Option<RequestOptions>,
    handed_over: &AtomicUsize,
) -> Result<(Response<WasiBody>, Io), Error> {
    let connect_timeout = options.and_then(|o| o.connect_timeout).unwrap_or(CONNECT_TIMEOUT);
    let first_byte_timeout = options.and_then(|o| o.first_byte_timeout);
    let https = request.uri().scheme() == Some(&http::uri::Scheme::HTTPS);

    let tcp = connect(addresses, connect_timeout).await?;
    let stream: Box<dyn Stream> = if https {
        let name = ServerName::try_from(host.to_owned()).map_err(Error::InvalidDnsNameError)?;
        let tls = tls_connector().connect(name, tcp);
        Box::new(
            tokio::time::timeout(connect_timeout, tls)
                .await
                .map_err(|_| Error::ConnectionTimeout)?
                .map_err(Error::Tls)?,
        )
    } else {
        Box::new(tcp)
    };
    let handshake = hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream));
    let (mut sender, connection) =
        tokio::time::timeout(connect_timeout, handshake).await.map_err(|_| Error::ConnectionTimeout)??;

    // Not talking to a proxy, the request line carries the path alone; the
    // host travels in the `Host` header wasi-http already set.
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *request.uri_mut() = Uri::builder().path_and_query(path).build().map_err(|_| Error::HttpRequestUriInvalid)?;

    handed_over.fetch_add(1, Ordering::Relaxed);
    let sent = async move {
        let response = sender.send_request(request);
        match first_byte_timeout {
            Some(limit) => tokio::time::timeout(limit, response).await.map_err(|_| Error::ConnectionReadTimeout)?,
            None => response.await,
        }
        .map_err(Error::from)
    };
    let response = drive_until(sent, connection).await?;
    Ok((response.0.map(|body: Incoming| body.map_err(Error::from).boxed_unsync()), response.1))
}

/// Waits for `sent` while driving `connection`'s I/O, and hands back what
/// is left of the connection for the body to be read through.
async fn drive_until<C>(
    sent: impl Future<Output = Result<Response<Incoming>, Error>>,
    connection: C,
) -> Result<(Response<Incoming>, Io), Error>
where
    C: Future<Output = Result<(), hyper::Error>> + Send + Unpin + 'static,
{
    let mut sent = pin!(sent);
    let mut connection = Some(connection);
    let response = poll_fn(|cx| match sent.as_mut().poll(cx) {
        Poll::Ready(result) => Poll::Ready(result),
        Poll::Pending => {
            let Some(running) = connection.as_mut() else { return Poll::Pending };
            let ended = ready!(std::pin::Pin::new(running).poll(cx));
            connection = None;
            match ended {
                Ok(()) => sent.as_mut().poll(cx),
                Err(error) => Poll::Ready(Err(Error::from(error))),
            }
        }
    })
    .await?;
    let io: Io = Box::new(async move {
        match connection {
            Some(running) => running.await.map_err(Error::from),
            None => Ok(()),
        }
    });
    Ok((response, io))
}

async fn connect(addresses: &[SocketAddr], timeout: Duration) -> Result<TcpStream, Error> {
    let mut last = Error::DestinationNotFound;
    for address in addresses {
        match tokio::time::timeout(timeout, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(error)) => last = Error::Connect(error),
            Err(_) => last = Error::ConnectionTimeout,
        }
    }
    Err(last)
}

fn tls_connector() -> tokio_rustls::TlsConnector {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
    let config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}

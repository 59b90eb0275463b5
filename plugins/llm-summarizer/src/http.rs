//! A blocking JSON POST over `wasi:http/outgoing-handler`. The host lets
//! through only the endpoints the plugin's `[plugins.grants] http` names,
//! and adds the key header itself: this code never sees a key.

use crate::wasi::http::outgoing_handler;
use crate::wasi::http::types::{Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions, Scheme};
use crate::wasi::io::streams::StreamError;

/// What a stream write may hold at once: wasmtime traps on more.
const CHUNK: usize = 4096;

/// The most redirects followed, as an ordinary HTTP client does.
const REDIRECTS: usize = 3;

/// POSTs `body` as JSON to `url` with `headers`, following a redirect that
/// keeps the method (307, 308) as any HTTP client would: the host checks
/// where it leads like any other request. Returns the status and the
/// response's bytes.
pub fn post_json(url: &str, headers: &[(&str, &str)], body: &[u8], timeout_ms: u64) -> Result<(u16, Vec<u8>), String> {
    let mut url = url.to_owned();
    for _ in 0..REDIRECTS {
        match post_once(&url, headers, body, timeout_ms)? {
            (307 | 308, _, Some(location)) => url = location,
            (status, bytes, _) => return Ok((status, bytes)),
        }
    }
    Err(format!("more than {REDIRECTS} redirects, the last to {url}"))
}

/// One POST: the status, the body, and where a redirect points.
fn post_once(url: &str, headers: &[(&str, &str)], body: &[u8], timeout_ms: u64) -> Result<(u16, Vec<u8>, Option<String>), String> {
    let (scheme, rest) = url.split_once("://").ok_or_else(|| format!("{url:?} is not a URL"))?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let scheme = match scheme {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => return Err(format!("the scheme {other:?} is not http or https")),
    };
    let mut list: Vec<(String, Vec<u8>)> =
        headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.as_bytes().to_vec())).collect();
    list.push(("content-type".into(), b"application/json".to_vec()));
    list.push(("content-length".into(), body.len().to_string().into_bytes()));
    let fields = Fields::from_list(&list).map_err(|e| format!("a header: {e:?}"))?;

    let request = OutgoingRequest::new(fields);
    request.set_method(&Method::Post).map_err(|()| "the method")?;
    request.set_scheme(Some(&scheme)).map_err(|()| "the scheme")?;
    request.set_authority(Some(authority)).map_err(|()| "the host")?;
    request.set_path_with_query(Some(path)).map_err(|()| "the path")?;
    let outgoing = request.body().map_err(|()| "the request body")?;
    let options = RequestOptions::new();
    let _ = options.set_first_byte_timeout(Some(timeout_ms * 1_000_000));

    // Sent first: the host holds only a couple of writes until it is.
    let response = outgoing_handler::handle(request, Some(options)).map_err(|e| format!("cannot send: {e:?}"))?;
    // A request the host refuses closes its body at once: then the
    // response, below, says why.
    let written = (|| {
        let stream = outgoing.write().map_err(|()| "the request stream".to_owned())?;
        for chunk in body.chunks(CHUNK) {
            stream.blocking_write_and_flush(chunk).map_err(|e| format!("cannot write the request: {e:?}"))?;
        }
        Ok::<(), String>(())
    })();
    let finished = OutgoingBody::finish(outgoing, None).map_err(|e| format!("cannot finish the request: {e:?}"));

    let response = loop {
        match response.get() {
            Some(Ok(Ok(response))) => break response,
            Some(Ok(Err(e))) => return Err(format!("{url}: {e:?}")),
            Some(Err(())) => return Err("the response was taken twice".into()),
            None => response.subscribe().block(),
        }
    };
    written?;
    finished?;
    let status = response.status();
    let location = response.headers().get("location").first().map(|v| String::from_utf8_lossy(v).into_owned());
    let incoming = response.consume().map_err(|()| "the response body")?;
    let mut bytes = Vec::new();
    {
        let stream = incoming.stream().map_err(|()| "the response stream")?;
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(format!("cannot read the response: {}", e.to_debug_string()));
                }
            }
        }
    }
    drop(IncomingBody::finish(incoming));
    Ok((status, bytes, location))
}

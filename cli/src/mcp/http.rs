//! The streamable-HTTP transport: `loopguard mcp --listen 127.0.0.1:PORT --upstream URL`.
//!
//! Every request is forwarded to the upstream URL with its method, headers (hop-by-hop ones
//! aside) and body bytes; every response comes back as the upstream sent it, streamed. Two
//! exceptions, both about a single `tools/call` POST: a blocked call is answered by the proxy
//! (200, `application/json`, the upstream never sees it), and the response to a forwarded call
//! (plain JSON, or the one SSE event that carries it) is read to record the outcome and, for a
//! warning, passed on with the note appended. Progress, server requests (sampling, elicitation)
//! on the call's SSE stream, `GET` streams, `DELETE` and every other method pass untouched.
//! One path is the proxy's own: `/metrics` answers the Prometheus text (docs/METRICS.md).
//!
//! The session (MCP 2025-11-25 "Transports", session management): the `Mcp-Session-Id` header,
//! which the upstream assigns and the proxy passes on unchanged. MCP 2026-07-28 has no session;
//! there the proxy keys on the `Authorization` header (its blake3 digest, so no secret is kept),
//! else on the client's IP address: one agent per credential or per host. JSON-RPC batches
//! (2025-03-26 only) are forwarded unguarded over HTTP (docs/PROXIES.md).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{bail, Context};
use bytes::Bytes;
use http_body_util::channel::{Channel, Sender};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::value::RawValue;

use super::guard::Guard;
use super::{jsonrpc, relay};
use crate::metrics::{serve, Metrics};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type Body = BoxBody<Bytes, BoxError>;

/// A request body or a JSON response the proxy reads whole is refused above this size.
const MAX_BODY: usize = 64 << 20;

struct Proxy {
    guard: Arc<Guard>,
    /// Answered on `GET /metrics`, whatever the upstream's path.
    metrics: Option<Arc<Metrics>>,
    upstream: Uri,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// Serves until the process is stopped.
pub fn run(guard: Arc<Guard>, metrics: Option<Arc<Metrics>>, listen: SocketAddr, upstream: &str) -> anyhow::Result<()> {
    let uri: Uri = upstream.parse().with_context(|| format!("--upstream {upstream:?} is not a URL"))?;
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        bail!("--upstream {upstream:?}: only http://HOST[:PORT]/PATH is supported (put TLS in front of the proxy)");
    }
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    let client = Client::builder(TokioExecutor::new()).build(connector);
    let proxy = Arc::new(Proxy { guard, metrics, upstream: uri, client });
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(serve(proxy, listen))
}

async fn serve(proxy: Arc<Proxy>, listen: SocketAddr) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("cannot listen on {listen}"))?;
    eprintln!("loopguard mcp: listening on http://{} -> {}", listener.local_addr()?, proxy.upstream);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("loopguard mcp: accept: {e}");
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let proxy = Arc::clone(&proxy);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let proxy = Arc::clone(&proxy);
                async move { Ok::<_, Infallible>(proxy.handle(req, peer).await) }
            });
            // A client that goes away mid-request is its own business.
            let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
        });
    }
}

impl Proxy {
    async fn handle(&self, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
        if let Some(metrics) = self.metrics.as_ref().filter(|_| req.uri().path() == "/metrics") {
            return serve::response(metrics, &req).map(|b| b.map_err(BoxError::from).boxed());
        }
        let session = session_key(req.headers(), peer);
        let (parts, body) = req.into_parts();
        let body = match Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return plain(StatusCode::PAYLOAD_TOO_LARGE, &format!("request body: {e}"), None),
        };
        let text = std::str::from_utf8(&body).ok().filter(|_| parts.method == Method::POST);
        let id = text.and_then(jsonrpc::request_id);
        let is_call = text.is_some_and(|t| matches!(jsonrpc::classify(t), Ok(jsonrpc::Message::ToolsCall(_))));
        if let Some(answer) = text.and_then(|t| relay::client_message(&self.guard, &session, t)) {
            return json(answer);
        }
        let mut upstream = Request::builder().method(parts.method.clone()).uri(self.upstream.clone());
        for (name, value) in &parts.headers {
            if !hop_by_hop(name) && name != header::HOST && name != header::CONTENT_LENGTH {
                upstream = upstream.header(name, value);
            }
        }
        // A clone of the bytes (a count, not a copy): the request's id still borrows them.
        let Ok(upstream) = upstream.body(Full::new(body.clone())) else {
            return plain(StatusCode::BAD_REQUEST, "request headers", id);
        };
        let response = match self.client.request(upstream).await {
            Ok(r) => r,
            Err(e) => return plain(StatusCode::BAD_GATEWAY, &format!("upstream {}: {e}", self.upstream), id),
        };
        if parts.method == Method::DELETE && response.status().is_success() {
            self.guard.end(&session);
        }
        let (mut head, body) = response.into_parts();
        for name in HOP_BY_HOP {
            head.headers.remove(name);
        }
        let kind = head.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        if !is_call || !head.status.is_success() {
            return Response::from_parts(head, body.map_err(BoxError::from).boxed());
        }
        if kind.starts_with("application/json") {
            let bytes = match Limited::new(body, MAX_BODY).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) => return plain(StatusCode::BAD_GATEWAY, &format!("upstream response: {e}"), id),
            };
            let changed = std::str::from_utf8(&bytes).ok().and_then(|t| relay::from_server(&self.guard, &session, t));
            let bytes = match changed {
                Some(text) => {
                    head.headers.remove(header::CONTENT_LENGTH);
                    Bytes::from(text)
                }
                None => bytes,
            };
            return Response::from_parts(head, Full::new(bytes).map_err(BoxError::from).boxed());
        }
        if kind.starts_with("text/event-stream") {
            head.headers.remove(header::CONTENT_LENGTH);
            let (tx, channel) = Channel::<Bytes, BoxError>::new(16);
            tokio::spawn(relay_events(Arc::clone(&self.guard), session, body, tx));
            return Response::from_parts(head, channel.boxed());
        }
        Response::from_parts(head, body.map_err(BoxError::from).boxed())
    }
}

/// Passes an SSE stream on event by event; the event that answers the pending call is read (and
/// rewritten only when a warning is appended). Memory: one event at a time.
async fn relay_events(guard: Arc<Guard>, session: String, mut body: Incoming, mut tx: Sender<Bytes, BoxError>) {
    let mut buf: Vec<u8> = Vec::new();
    while let Some(frame) = body.frame().await {
        let data = match frame {
            Ok(frame) => match frame.into_data() {
                Ok(data) => data,
                Err(_) => continue,
            },
            Err(e) => return tx.abort(Box::new(e)),
        };
        buf.extend_from_slice(&data);
        while let Some(end) = event_end(&buf) {
            let event: Vec<u8> = buf.drain(..end).collect();
            let out = rewrite_event(&guard, &session, &event).map_or(Bytes::from(event), Bytes::from);
            if tx.send_data(out).await.is_err() {
                return; // the client went away
            }
        }
        if buf.len() > MAX_BODY {
            return tx.abort("an SSE event over 64 MiB".into());
        }
    }
    if !buf.is_empty() {
        let _ = tx.send_data(Bytes::from(buf)).await;
    }
}

/// Where the first complete SSE event (ended by a blank line) ends.
fn event_end(buf: &[u8]) -> Option<usize> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The event with its `data:` replaced when the guard changes the message it carries.
fn rewrite_event(guard: &Guard, session: &str, event: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(event).ok()?;
    let data: Vec<&str> =
        text.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d)).collect();
    if data.is_empty() {
        return None;
    }
    let changed = relay::from_server(guard, session, &data.join("\n"))?;
    let mut out = String::with_capacity(event.len() + 256);
    let mut written = false;
    for line in text.lines().filter(|l| !l.is_empty()) {
        if line.starts_with("data:") {
            if !written {
                out.push_str("data: ");
                out.push_str(&changed);
                out.push('\n');
                written = true;
            }
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push('\n');
    Some(out.into_bytes())
}

/// The policy session of a request (see the module doc).
fn session_key(headers: &HeaderMap, peer: SocketAddr) -> String {
    if let Some(id) = headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        return format!("mcp:{id}");
    }
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        return format!("mcp-auth:{}", &blake3::hash(auth.as_bytes()).to_hex()[..32]);
    }
    format!("mcp-peer:{}", peer.ip())
}

/// Headers that describe one connection, not the message: never passed on.
const HOP_BY_HOP: [&str; 7] =
    ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"];

fn hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

fn json(text: String) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text)).map_err(BoxError::from).boxed());
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The proxy's own HTTP error, with a JSON-RPC error body naming the cause: its `id` is the
/// request's, as sent, when it could be read (else `null`, as JSON-RPC says), so that a client
/// can match the error to its call.
fn plain(status: StatusCode, why: &str, id: Option<&RawValue>) -> Response<Body> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("loopguard mcp: {why}")}});
    let mut response = json(body.to_string());
    *response.status_mut() = status;
    response
}

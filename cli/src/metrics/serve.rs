//! `--metrics ADDR`: a small HTTP listener that answers `GET /metrics`, for the hosts that have
//! no HTTP listener of their own (the stdio MCP proxy, `replay -`). `loopguard mcp --listen`
//! answers `/metrics` on its own listener through [`response`].
//!
//! The same hyper and tokio the HTTP proxy uses (`mcp/http.rs`), on one thread of its own so that
//! a scrape never waits on a decision and a decision never waits on a scrape.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use bytes::Bytes;
use clap::Args;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::Metrics;

/// The content type of the text `prometheus-client` writes (OpenMetrics 1.0, which Prometheus
/// 2.x and later negotiate and read).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `--metrics ADDR`, shared by the commands that run long.
#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics on http://ADDR/metrics (e.g. 127.0.0.1:9464); docs/METRICS.md.
    #[arg(long = "metrics", value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
}

/// The answer to a request for the metrics: the text for `GET`, 405 for any other method.
pub fn response<B>(metrics: &Metrics, req: &Request<B>) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = Response::new(Full::new(Bytes::from_static(b"/metrics answers GET\n")));
        *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        return r;
    }
    let mut r = Response::new(Full::new(Bytes::from(metrics.encode())));
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    r
}

/// Binds `addr` now (so that a bad address fails the command at once, naming the option) and
/// serves `/metrics` from a thread of its own for as long as the process runs.
pub fn spawn(addr: SocketAddr, metrics: Arc<Metrics>) -> anyhow::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("--metrics {addr}: cannot listen"))?;
    listener.set_nonblocking(true).context("--metrics: the listener")?;
    let local = listener.local_addr().context("--metrics: the listener")?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    std::thread::Builder::new().name("loopguard-metrics".into()).spawn(move || {
        runtime.block_on(async move {
            let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let metrics = Arc::clone(&metrics);
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                        let answer = if req.uri().path() == "/metrics" {
                            response(&metrics, &req)
                        } else {
                            let mut r = Response::new(Full::new(Bytes::from_static(b"try /metrics\n")));
                            *r.status_mut() = StatusCode::NOT_FOUND;
                            r
                        };
                        async move { Ok::<_, Infallible>(answer) }
                    });
                    // A scraper that goes away mid-request is its own business.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    })?;
    eprintln!("loopguard: metrics on http://{local}/metrics");
    Ok(local)
}

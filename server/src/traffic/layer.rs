//! A tower [`Layer`] that counts front-end page views into a [`Recorder`]'s buffer. Any axum
//! application can add it:
//!
//! ```ignore
//! let recorder = Arc::new(Recorder::new(settings));
//! let app = Router::new()/* routes */.layer(TrafficLayer::new(recorder.clone()));
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>());
//! ```
//!
//! It reads the request's method, path and headers, counts, and passes the request on
//! untouched: no I/O, no `.await`, nothing held across the inner service's future.

use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::ConnectInfo;
use http::Request;
use tower::{Layer, Service};

use super::Recorder;

#[derive(Clone)]
pub struct TrafficLayer {
    recorder: Arc<Recorder>,
}

impl TrafficLayer {
    pub fn new(recorder: Arc<Recorder>) -> Self {
        TrafficLayer { recorder }
    }
}

impl<S> Layer<S> for TrafficLayer {
    type Service = TrafficService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        TrafficService {
            inner,
            recorder: self.recorder.clone(),
        }
    }
}

#[derive(Clone)]
pub struct TrafficService<S> {
    inner: S,
    recorder: Arc<Recorder>,
}

impl<S, B> Service<Request<B>> for TrafficService<S>
where
    S: Service<Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        // An excluded request simply passes; only the import summary reports reasons.
        let target = request
            .uri()
            .path_and_query()
            .map_or_else(|| request.uri().path(), |p| p.as_str());
        let _ = self
            .recorder
            .observe(request.method().as_str(), target, request.headers(), peer);
        self.inner.call(request)
    }
}

//! A tower [`Layer`] that counts front-end page views into a [`Recorder`]'s buffer. Any axum
//! application can add it:
//!
//! ```ignore
//! let recorder = Arc::new(Recorder::new(settings));
//! let app = Router::new()/* routes */.layer(TrafficLayer::new(recorder.clone()));
//! axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>());
//! ```
//!
//! It reads the request's method, path and headers, passes the request on untouched, and
//! counts the page view with its response's status once the inner service answers: no I/O,
//! no `.await` of its own. A request whose response never comes (the client went away) is not
//! counted.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::ConnectInfo;
use http::{Request, Response};
use tower::{Layer, Service};

use super::{Pending, Recorder};

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

impl<S, B, R> Service<Request<B>> for TrafficService<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip());
        let target = request
            .uri()
            .path_and_query()
            .map_or_else(|| request.uri().path(), |p| p.as_str());
        // An excluded request simply passes; only the import summary reports reasons.
        let pending = self
            .recorder
            .prepare(request.method().as_str(), target, request.headers(), peer)
            .ok()
            .map(|pending| (self.recorder.clone(), pending));
        Counted {
            inner: self.inner.call(request),
            pending,
        }
    }
}

pin_project_lite::pin_project! {
    /// The inner service's future; counts the page view with the response's status when it
    /// resolves.
    pub struct Counted<F> {
        #[pin]
        inner: F,
        pending: Option<(Arc<Recorder>, Pending)>,
    }
}

impl<F, R, E> Future for Counted<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let output = std::task::ready!(this.inner.poll(cx));
        if let (Ok(response), Some((recorder, pending))) = (&output, this.pending.take()) {
            recorder.count(pending, response.status().as_u16());
        }
        Poll::Ready(output)
    }
}

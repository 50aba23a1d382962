//! A TCP proxy that can stop forwarding: a network partition between a node and its database,
//! made on demand. While cut, nothing passes in either direction and new connections wait —
//! the connections stay open, as they do when a network drops packets rather than refusing
//! them — and when healed, what waited is delivered.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct Proxy {
    pub addr: SocketAddr,
    open: watch::Sender<bool>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Forwards connections on a free local port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let (open, _) = watch::channel(true);
        let gate = open.clone();
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let gate = gate.subscribe();
                tokio::spawn(async move {
                    let mut wait = gate.clone();
                    if wait.wait_for(|open| *open).await.is_err() {
                        return;
                    }
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    tokio::spawn(pump(client_read, server_write, gate.clone()));
                    tokio::spawn(pump(server_read, client_write, gate));
                });
            }
        });
        Proxy {
            addr,
            open,
            accepting,
        }
    }

    /// A proxy in front of the database server `url` (a PostgreSQL URL) names.
    pub async fn to_database(url: &str) -> Proxy {
        let url = reqwest::Url::parse(url).expect("database URL");
        let host = url.host_str().expect("database host").to_string();
        let upstream = tokio::net::lookup_host((host, url.port().unwrap_or(5432)))
            .await
            .expect("resolve the database host")
            .next()
            .expect("the database host has an address");
        Proxy::start(upstream).await
    }

    /// `url` (a PostgreSQL URL) with its host and port pointing at this proxy.
    pub fn url_for(&self, url: &str) -> String {
        let mut url = reqwest::Url::parse(url).expect("database URL");
        url.set_host(Some(&self.addr.ip().to_string()))
            .expect("set host");
        url.set_port(Some(self.addr.port())).expect("set port");
        url.to_string()
    }

    /// Stops forwarding.
    pub fn cut(&self) {
        self.open.send_replace(false);
    }

    /// Forwards again, delivering what waited.
    pub fn heal(&self) {
        self.open.send_replace(true);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut open: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if open.wait_for(|open| *open).await.is_err() {
            return;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(n) => n,
        };
        // Read just before a cut: held until the heal.
        if open.wait_for(|open| *open).await.is_err() {
            return;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

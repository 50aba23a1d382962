//! A real SMTP server for the tests, in process: mailin speaks the protocol, this file only
//! moves bytes between it and a TCP socket. It keeps every accepted mail, can require a
//! password (AUTH PLAIN, allowed without TLS here because it only listens on 127.0.0.1), and can
//! start late on an address chosen in advance, to play a server that was down.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use mailin::{AuthMechanism, Handler, Response, SessionBuilder, response};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
pub struct Received {
    pub from: String,
    pub to: Vec<String>,
    pub data: String,
}

impl Received {
    /// The message with quoted-printable soft line breaks joined, so long lines (links) read
    /// whole.
    pub fn body(&self) -> String {
        self.data.replace("=\r\n", "").replace("=3D", "=")
    }

    /// A header's value (unfolded), if present.
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next()?;
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

pub struct SmtpSink {
    pub addr: SocketAddr,
    pub received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An address nothing listens on yet.
pub async fn free_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap()
}

impl SmtpSink {
    pub async fn start(password: Option<&str>) -> SmtpSink {
        SmtpSink::start_on(free_addr().await, password).await
    }

    pub async fn start_on(addr: SocketAddr, password: Option<&str>) -> SmtpSink {
        let listener = TcpListener::bind(addr).await.unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let store = received.clone();
        let password = password.map(str::to_string);
        let task = tokio::spawn(async move {
            let mut builder = SessionBuilder::new("sink.test");
            if password.is_some() {
                builder
                    .enable_auth(AuthMechanism::Plain)
                    .insecure_enable_plaintext_auth();
            }
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    return;
                };
                let handler = Sink {
                    store: store.clone(),
                    password: password.clone(),
                    authenticated: false,
                    current: None,
                };
                let mut session = builder.build(peer.ip(), handler);
                tokio::spawn(async move {
                    let (read, mut write) = stream.into_split();
                    let mut lines = BufReader::new(read);
                    if write
                        .write_all(&session.greeting().buffer().unwrap())
                        .await
                        .is_err()
                    {
                        return;
                    }
                    let mut line = Vec::new();
                    loop {
                        line.clear();
                        match lines.read_until(b'\n', &mut line).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                        let reply = session.process(&line);
                        match reply.action {
                            mailin::response::Action::Close => {
                                let _ = write.write_all(&reply.buffer().unwrap()).await;
                                return;
                            }
                            mailin::response::Action::NoReply => {}
                            _ => {
                                if write.write_all(&reply.buffer().unwrap()).await.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                });
            }
        });
        SmtpSink {
            addr,
            received,
            task,
        }
    }

    pub fn mails(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    pub fn url(&self, credentials: Option<(&str, &str)>) -> String {
        url(self.addr, credentials)
    }
}

/// `smtp://` for a plain (test-only) server at `addr`.
pub fn url(addr: SocketAddr, credentials: Option<(&str, &str)>) -> String {
    match credentials {
        Some((user, password)) => format!("smtp://{user}:{password}@{addr}"),
        None => format!("smtp://{addr}"),
    }
}

struct Sink {
    store: Arc<Mutex<Vec<Received>>>,
    password: Option<String>,
    authenticated: bool,
    current: Option<Received>,
}

impl Handler for Sink {
    fn mail(&mut self, _ip: IpAddr, _domain: &str, from: &str) -> Response {
        if self.password.is_some() && !self.authenticated {
            return response::AUTHENTICATION_REQUIRED;
        }
        self.current = Some(Received {
            from: from.to_string(),
            to: Vec::new(),
            data: String::new(),
        });
        response::OK
    }

    fn data_start(&mut self, _domain: &str, _from: &str, _is8bit: bool, to: &[String]) -> Response {
        if let Some(mail) = &mut self.current {
            mail.to = to.to_vec();
        }
        response::OK
    }

    fn data(&mut self, buf: &[u8]) -> std::io::Result<()> {
        if let Some(mail) = &mut self.current {
            mail.data.push_str(&String::from_utf8_lossy(buf));
        }
        Ok(())
    }

    fn data_end(&mut self) -> Response {
        if let Some(mail) = self.current.take() {
            self.store.lock().unwrap().push(mail);
        }
        response::OK
    }

    fn auth_plain(&mut self, _authz: &str, _authn: &str, password: &str) -> Response {
        if self.password.as_deref() == Some(password) {
            self.authenticated = true;
            response::AUTH_OK
        } else {
            response::INVALID_CREDENTIALS
        }
    }
}

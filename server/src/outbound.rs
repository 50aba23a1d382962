//! Where Bulwark's own HTTP requests may go: never to a network in `outbound_deny` (by default
//! link-local addresses and the cloud metadata services, where a job's URL or a redirect could
//! otherwise fetch the host's cloud credentials).
//!
//! Two doors are watched. A host name goes through [`Deny::client_builder`]'s resolver, which
//! drops every denied address a name resolves to (so a name pointing at 169.254.169.254 fails
//! like a name that does not resolve, and a rebinding name is checked on each connection). A
//! literal address in a URL never reaches a resolver, so [`Deny::refuses`] is asked before a
//! request is sent and for every redirect the engine follows (`server/src/engine/executor.rs`).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use app::domain::client_addr::Networks;

/// The default list: IPv4 and IPv6 link-local (AWS, GCP and Azure metadata live at
/// 169.254.169.254), Alibaba Cloud's metadata address, and AWS's IPv6 metadata address.
pub const DEFAULT: [&str; 4] = [
    "169.254.0.0/16",
    "fe80::/10",
    "100.100.100.200/32",
    "fd00:ec2::254/128",
];

/// The networks outbound requests may not reach.
#[derive(Clone, Debug, Default)]
pub struct Deny(Arc<Networks>);

impl Deny {
    pub fn new(networks: Networks) -> Deny {
        Deny(Arc::new(networks))
    }

    /// [`DEFAULT`].
    pub fn standard() -> Deny {
        Deny::new(Networks::parse(&DEFAULT).unwrap_or_default())
    }

    /// The denied address `url` names literally, if it does.
    pub fn refuses(&self, url: &reqwest::Url) -> Option<IpAddr> {
        let ip = match url.host()? {
            url::Host::Ipv4(ip) => IpAddr::V4(ip),
            url::Host::Ipv6(ip) => IpAddr::V6(ip),
            url::Host::Domain(_) => return None,
        };
        self.0.contains(ip).then_some(ip)
    }

    /// Why a request to `url` is refused, for the run's or the delivery's message.
    pub fn refusal(&self, url: &reqwest::Url) -> Option<Denied> {
        self.refuses(url).map(|ip| Denied {
            host: url.host_str().unwrap_or_default().to_string(),
            ip,
        })
    }

    /// A client builder whose host names resolve only to allowed addresses.
    pub fn client_builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder().dns_resolver(Arc::new(Resolver(self.clone())))
    }
}

/// The system resolver, with denied addresses taken out.
struct Resolver(Deny);

/// A request refused because its host is, or resolves only to, a denied address.
#[derive(Debug, thiserror::Error)]
#[error("{host} is {ip}, in outbound_deny: Bulwark sends nothing there")]
pub struct Denied {
    host: String,
    ip: IpAddr,
}

/// The refusal behind a failed request, when `outbound_deny` refused it (in the resolver or a
/// redirect): no retry changes that.
pub fn denial(error: &reqwest::Error) -> Option<&Denied> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(denied) = e.downcast_ref::<Denied>() {
            return Some(denied);
        }
        source = e.source();
    }
    None
}

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let deny = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| !deny.0.contains(a.ip()))
                .collect();
            match (allowed.is_empty(), found.first()) {
                (true, Some(first)) => Err(Box::new(Denied {
                    host,
                    ip: first.ip(),
                })
                    as Box<dyn std::error::Error + Send + Sync>),
                _ => Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(list: &[&str]) -> Deny {
        Deny::new(Networks::parse(list).unwrap())
    }

    #[test]
    fn literal_addresses_are_refused_by_network() {
        let standard = Deny::standard();
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "http://[fe80::1]/",
            "http://100.100.100.200/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://[::ffff:169.254.169.254]/",
        ] {
            assert!(standard.refuses(&url.parse().unwrap()).is_some(), "{url}");
        }
        for url in [
            "http://192.0.2.7/",
            "https://example.com/",
            "http://[2001:db8::1]/",
        ] {
            assert!(standard.refuses(&url.parse().unwrap()).is_none(), "{url}");
        }
        assert!(
            Deny::default()
                .refuses(&"http://169.254.169.254/".parse().unwrap())
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_name_resolving_only_to_denied_addresses_fails() {
        let client = deny(&["127.0.0.0/8", "::1/128"])
            .client_builder()
            .build()
            .unwrap();
        let error = client.get("http://localhost:9/").send().await.unwrap_err();
        let denied = denial(&error).map(ToString::to_string);
        assert!(
            denied
                .as_deref()
                .is_some_and(|d| d.contains("outbound_deny")),
            "{error:?}"
        );
    }
}

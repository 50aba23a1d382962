//! Which address a request came from when proxies stand in front of Bulwark.
//!
//! `X-Forwarded-For` is a list every hop appends to, so only its right end is trustworthy:
//! entries are read from the right, past the proxies the operator named (`trusted_proxies`),
//! and the first address that is not one of them is the client. Anything to its left was
//! written by the client itself and is never believed. With no trusted proxies the socket's
//! peer is the client, whatever the header says.

use std::net::IpAddr;

use ipnet::IpNet;

/// Addresses and networks, as an operator lists them: `10.0.0.0/8`, `fd00::/8` or a bare
/// address. Trusted proxies and a site's excluded visitors are both one of these.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Networks(Vec<IpNet>);

impl Networks {
    /// Parses each entry; the message names the bad one.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Networks, String> {
        entries
            .iter()
            .map(|entry| {
                let entry = entry.as_ref().trim();
                entry
                    .parse::<IpNet>()
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map(|net| net.trunc())
                    .map_err(|_| {
                        format!("'{entry}' is not an address or a network such as 10.0.0.0/8")
                    })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Networks)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    /// Each network as written back: `192.0.2.7/32` as `192.0.2.7`.
    pub fn entries(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|net| {
                if net.prefix_len() == net.max_prefix_len() {
                    net.addr().to_string()
                } else {
                    net.to_string()
                }
            })
            .collect()
    }
}

/// The proxies whose `X-Forwarded-For` entries are believed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies(Networks);

impl TrustedProxies {
    /// Parses `10.0.0.0/8`, `fd00::/8` or a bare address; the message names the bad entry.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<TrustedProxies, String> {
        Networks::parse(entries).map(TrustedProxies)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// The client of a request that reached this server from `peer`, carrying the given
    /// `X-Forwarded-For` header values (in the order they appear).
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        let mut client = canonical(peer);
        if !self.contains(client) {
            return client;
        }
        let hops = forwarded_for
            .iter()
            .flat_map(|value| value.split(','))
            .collect::<Vec<_>>();
        for hop in hops.into_iter().rev() {
            // An entry that is no address ends the walk: whoever wrote it is not a proxy we
            // know, so the hop that passed it on is as far as the chain can be believed.
            let Some(ip) = parse_hop(hop) else {
                return client;
            };
            client = ip;
            if !self.contains(ip) {
                return ip;
            }
        }
        client
    }
}

/// An `X-Forwarded-For` entry: `203.0.113.9`, `203.0.113.9:4711`, `2001:db8::1` or
/// `[2001:db8::1]:4711`.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim();
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Ok(addr) = hop.parse::<std::net::SocketAddr>() {
        return Some(canonical(addr.ip()));
    }
    None
}

/// IPv4 addresses reach a dual-stack socket as `::ffff:a.b.c.d`; they are the same client.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The source a sign-in limit counts by: an IPv4 address as it is, an IPv6 address as its /64
/// (one household, one rented server holds a whole /64, and rotating within it is free). An
/// IPv4-mapped IPv6 address is its IPv4 address; text that is not an address is kept as is.
pub fn limit_source(ip: &str) -> String {
    match ip.trim().parse::<IpAddr>().map(canonical) {
        Ok(IpAddr::V4(v4)) => v4.to_string(),
        Ok(IpAddr::V6(v6)) => ipnet::Ipv6Net::new(v6, 64)
            .map(|net| net.trunc().to_string())
            .unwrap_or_else(|_| v6.to_string()),
        Err(_) => ip.trim().chars().take(64).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_sources_group_an_ipv6_64() {
        assert_eq!(limit_source("203.0.113.9"), "203.0.113.9");
        assert_eq!(limit_source("::ffff:203.0.113.9"), "203.0.113.9");
        assert_eq!(limit_source("2001:db8:1:2::7"), "2001:db8:1:2::/64");
        assert_eq!(
            limit_source("2001:db8:1:2:ffff:ffff:ffff:ffff"),
            limit_source("2001:db8:1:2::1")
        );
        assert_ne!(
            limit_source("2001:db8:1:3::1"),
            limit_source("2001:db8:1:2::1")
        );
        assert_eq!(limit_source("unknown"), "unknown");
    }
    use proptest::prelude::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn trusted(list: &[&str]) -> TrustedProxies {
        TrustedProxies::parse(list).unwrap()
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client() {
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(ip("198.51.100.7"), &["203.0.113.9"]),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn an_untrusted_peer_cannot_forge_its_address() {
        let t = trusted(&["10.0.0.0/8"]);
        assert_eq!(
            t.client(ip("198.51.100.7"), &["203.0.113.9"]),
            ip("198.51.100.7")
        );
    }

    #[test]
    fn the_right_most_untrusted_entry_is_the_client() {
        let t = trusted(&["10.0.0.0/8", "192.0.2.1"]);
        // The client wrote "1.1.1.1" itself; the proxies appended the rest.
        let header = ["1.1.1.1, 203.0.113.9", "192.0.2.1"];
        assert_eq!(t.client(ip("10.1.2.3"), &header), ip("203.0.113.9"));
    }

    #[test]
    fn ports_brackets_and_mapped_addresses_are_understood() {
        let t = trusted(&["10.0.0.0/8"]);
        assert_eq!(
            t.client(ip("10.0.0.1"), &["203.0.113.9:4711"]),
            ip("203.0.113.9")
        );
        assert_eq!(
            t.client(ip("10.0.0.1"), &["[2001:db8::1]:80"]),
            ip("2001:db8::1")
        );
        assert_eq!(
            t.client(ip("::ffff:10.0.0.1"), &["203.0.113.9"]),
            ip("203.0.113.9")
        );
    }

    #[test]
    fn garbage_stops_at_the_last_believed_hop() {
        let t = trusted(&["10.0.0.0/8"]);
        assert_eq!(
            t.client(ip("10.0.0.1"), &["unknown, 10.0.0.2"]),
            ip("10.0.0.2")
        );
        assert_eq!(t.client(ip("10.0.0.1"), &[]), ip("10.0.0.1"));
    }

    #[test]
    fn bad_entries_are_named() {
        let err = TrustedProxies::parse(&["10.0.0.0/8", "proxy.local"]).unwrap_err();
        assert!(err.contains("proxy.local"), "{err}");
        assert!(TrustedProxies::parse(&["10.0.0.0/33"]).is_err());
    }

    proptest! {
        #[test]
        fn any_header_yields_an_address_it_was_given(
            header in "[ -~]{0,200}",
            peer in any::<[u8; 4]>(),
        ) {
            let t = trusted(&["0.0.0.0/0"]);
            let peer = IpAddr::from(peer);
            let client = t.client(peer, &[header.as_str()]);
            prop_assert!(client == peer || header.split(',').filter_map(parse_hop).any(|h| h == client));
        }
    }
}

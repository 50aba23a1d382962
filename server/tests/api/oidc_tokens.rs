//! The ID token's checks: a stand-in OpenID provider in this process that answers the code
//! flow properly but signs tokens with one thing wrong on purpose — the issuer, the audience,
//! the nonce, the expiry, or the signature itself. A real provider never does, so these checks
//! cannot be seen against one. The checks are the server's, not the database's: SQLite only.

use std::sync::{Arc, Mutex, OnceLock};

use app::entities::session;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rsa::pkcs1v15::SigningKey;
use rsa::signature::{RandomizedSigner, SignatureEncoding};
use rsa::traits::PublicKeyParts;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};

use crate::helpers::{TestApp, Workers};
use server::config::Config;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Flaw {
    None,
    Issuer,
    Audience,
    Nonce,
    Expired,
    /// Expired 20 s ago: within the tolerated clock skew (60 s).
    SkewedWithinBound,
    /// Signed by a key the provider does not publish.
    ForeignKey,
}

struct StandIn {
    issuer: String,
    key: rsa::RsaPrivateKey,
    foreign: rsa::RsaPrivateKey,
    flaw: Mutex<Flaw>,
    /// The nonce of the sign-in under way.
    nonce: Mutex<String>,
}

/// The stand-in, serving from a thread of its own for the rest of the process.
fn stand_in() -> &'static Arc<StandIn> {
    static STAND_IN: OnceLock<Arc<StandIn>> = OnceLock::new();
    STAND_IN.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                let issuer = format!("http://{}", listener.local_addr().unwrap());
                let mut rng = rand_core::OsRng;
                let provider = Arc::new(StandIn {
                    issuer,
                    key: rsa::RsaPrivateKey::new(&mut rng, 2048).expect("a key"),
                    foreign: rsa::RsaPrivateKey::new(&mut rng, 2048).expect("a key"),
                    flaw: Mutex::new(Flaw::None),
                    nonce: Mutex::new(String::new()),
                });
                sender.send(provider.clone()).unwrap();
                axum::serve(listener, routes(provider)).await.unwrap();
            });
        });
        receiver.recv().expect("the stand-in starts")
    })
}

fn routes(provider: Arc<StandIn>) -> axum::Router {
    use axum::routing::{get, post};
    axum::Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route("/jwks", get(jwks))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(provider)
}

async fn discovery(State(p): State<Arc<StandIn>>) -> axum::Json<Value> {
    axum::Json(json!({
        "issuer": p.issuer,
        "authorization_endpoint": format!("{}/authorize", p.issuer),
        "token_endpoint": format!("{}/token", p.issuer),
        "jwks_uri": format!("{}/jwks", p.issuer),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }))
}

async fn jwks(State(p): State<Arc<StandIn>>) -> axum::Json<Value> {
    let public = p.key.to_public_key();
    axum::Json(json!({ "keys": [{
        "kty": "RSA", "use": "sig", "alg": "RS256", "kid": "k1",
        "n": URL_SAFE_NO_PAD.encode(public.n().to_bytes_be()),
        "e": URL_SAFE_NO_PAD.encode(public.e().to_bytes_be()),
    }]}))
}

/// Signs the person in at once and sends them back with a code.
async fn authorize(
    State(p): State<Arc<StandIn>>,
    Query(query): Query<std::collections::HashMap<String, String>>,
) -> impl IntoResponse {
    *p.nonce.lock().unwrap() = query["nonce"].clone();
    let mut back = url::Url::parse(&query["redirect_uri"]).unwrap();
    back.query_pairs_mut()
        .append_pair("code", "a-code")
        .append_pair("state", &query["state"]);
    Redirect::to(back.as_str())
}

async fn token(State(p): State<Arc<StandIn>>) -> axum::Json<Value> {
    let flaw = *p.flaw.lock().unwrap();
    let now = chrono::Utc::now().timestamp();
    let claims = json!({
        "iss": if flaw == Flaw::Issuer { "https://elsewhere.example".to_string() } else { p.issuer.clone() },
        "aud": if flaw == Flaw::Audience { "someone-else" } else { "bulwark" },
        "sub": "u-zed",
        "preferred_username": "zed",
        "groups": ["ops"],
        "iat": now - 400,
        "exp": match flaw { Flaw::Expired => now - 300, Flaw::SkewedWithinBound => now - 20, _ => now + 300 },
        "nonce": if flaw == Flaw::Nonce { "another-nonce".to_string() } else { p.nonce.lock().unwrap().clone() },
    });
    let key = if flaw == Flaw::ForeignKey {
        &p.foreign
    } else {
        &p.key
    };
    axum::Json(json!({
        "access_token": "an-access-token",
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": jwt(key, &claims),
    }))
}

/// An RS256 JSON Web Token.
fn jwt(key: &rsa::RsaPrivateKey, claims: &Value) -> String {
    let header = json!({ "alg": "RS256", "kid": "k1", "typ": "JWT" });
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signer = SigningKey::<sha2::Sha256>::new(key.clone());
    let signature = signer.sign_with_rng(&mut rand_core::OsRng, signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn against_the_stand_in(config: &mut Config, _: &mut Workers) {
    config.oidc_issuer = Some(stand_in().issuer.clone());
    config.oidc_client_id = Some("bulwark".into());
    config.oidc_admin_groups = vec!["ops".into()];
}

/// Starts a sign-in and follows it back to the console; the callback's status and body.
async fn sign_in(app: &TestApp) -> (u16, String) {
    let client = app.client();
    let mut url = app.url("/auth/oidc/oidc");
    for _ in 0..3 {
        let res = client.get(&url).send().await.unwrap();
        if url.contains("/callback") {
            let status = res.status().as_u16();
            return (status, res.text().await.unwrap());
        }
        assert!(res.status().is_redirection(), "{url}: {}", res.status());
        url = res.headers()["location"].to_str().unwrap().to_string();
    }
    panic!("never came back");
}

#[tokio::test(flavor = "multi_thread")]
async fn id_tokens_with_a_wrong_claim_or_signature_are_refused() {
    let app = TestApp::sqlite_with(against_the_stand_in).await;
    let flaws = [
        Flaw::Issuer,
        Flaw::Audience,
        Flaw::Nonce,
        Flaw::Expired,
        Flaw::ForeignKey,
    ];
    for flaw in flaws {
        *stand_in().flaw.lock().unwrap() = flaw;
        let (status, body) = sign_in(&app).await;
        assert_eq!(status, 403, "{flaw:?}: {body}");
        assert!(body.contains("bad_token"), "{flaw:?}: {body}");
    }
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 0);

    for flaw in [Flaw::SkewedWithinBound, Flaw::None] {
        *stand_in().flaw.lock().unwrap() = flaw;
        let (status, body) = sign_in(&app).await;
        assert_eq!(status, 303, "{flaw:?}: {body}");
    }
    assert_eq!(session::Entity::find().count(&app.db).await.unwrap(), 2);
}

//! One future that resolves when the process is asked to stop (Ctrl-C or SIGTERM), so every
//! part that must stop gracefully waits on the same signal.

pub async fn signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };

    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();

    tokio::select! {
        () = ctrl_c => tracing::info!("Ctrl-C received: shutting down"),
        () = terminate => tracing::info!("SIGTERM received: shutting down"),
    }
}

/// A stop request that any number of tasks can wait on.
#[derive(Clone)]
pub struct Shutdown(tokio::sync::watch::Receiver<bool>);

impl Shutdown {
    /// Resolves once the stop was requested.
    pub async fn wait(mut self) {
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}

/// Requests the stop its [`Shutdown`]s wait for.
pub struct Trigger(tokio::sync::watch::Sender<bool>);

impl Trigger {
    pub fn fire(&self) {
        // Nobody waiting any more means everything has stopped already.
        let _ = self.0.send(true);
    }
}

/// A stop that fires when its [`Trigger`] does (how tests stop the application).
pub fn manual() -> (Trigger, Shutdown) {
    let (tx, rx) = tokio::sync::watch::channel(false);
    (Trigger(tx), Shutdown(rx))
}

/// A [`Shutdown`] that fires on Ctrl-C or SIGTERM.
pub fn on_signal() -> Shutdown {
    let (trigger, shutdown) = manual();
    tokio::spawn(async move {
        signal().await;
        trigger.fire();
    });
    shutdown
}

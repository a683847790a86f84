//! The process signals a server obeys: Ctrl-C or SIGTERM stop it, SIGHUP reloads it. One loop
//! for the gateway and the worker.

use std::future::Future;

/// Waits for Ctrl-C or SIGTERM; on every SIGHUP meanwhile, awaits `on_hangup()` (a reload)
/// before listening again. Where SIGTERM or SIGHUP cannot be watched (not Unix, or the
/// handlers cannot be installed), waits for Ctrl-C alone.
pub async fn until_stopped<F, Fut>(mut on_hangup: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return,
                _ = term.recv() => return,
                _ = hup.recv() => on_hangup().await,
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = &mut on_hangup;
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn hangups_reload_and_terminate_stops() {
        // tokio's handlers stay installed for the life of the process once registered: taking
        // them here first means no signal below can reach the default action (death), however
        // late the task under test first runs.
        use tokio::signal::unix::{SignalKind, signal};
        let _hup = signal(SignalKind::hangup()).unwrap();
        let _term = signal(SignalKind::terminate()).unwrap();
        let reloads = Arc::new(AtomicUsize::new(0));
        let r = reloads.clone();
        let waiter = tokio::spawn(until_stopped(move || {
            let r = r.clone();
            async move {
                r.fetch_add(1, Ordering::AcqRel);
            }
        }));
        // The task's streams see only signals sent after it first runs: send until seen.
        let me = std::process::id() as libc::pid_t;
        let t = std::time::Instant::now();
        while reloads.load(Ordering::Acquire) == 0 {
            assert!(t.elapsed().as_secs() < 20, "SIGHUP never reloaded");
            // SAFETY: kill(2) on this process with a signal whose handler tokio installed.
            assert_eq!(unsafe { libc::kill(me, libc::SIGHUP) }, 0);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert!(!waiter.is_finished(), "a hangup does not stop the wait");
        // SAFETY: as above, SIGTERM.
        assert_eq!(unsafe { libc::kill(me, libc::SIGTERM) }, 0);
        tokio::time::timeout(std::time::Duration::from_secs(10), waiter)
            .await
            .expect("SIGTERM stops the wait")
            .unwrap();
    }
}

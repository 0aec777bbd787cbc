//! Links between wafers on different devices: bounded host-side queues of step-tagged
//! packages that the device threads push into and pop from, waiting with a time limit.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// A package on a host link: the state it belongs to and its cells.
pub type Package = (u64, Vec<f32>);

/// How a wait ended when it did not get what it waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitFailed {
    /// The time limit passed.
    TimedOut,
    /// Another thread failed and asked everyone to stop.
    Aborted,
}

/// A bounded FIFO of packages shared by a sending and a receiving thread.
pub struct HostLink {
    queue: Mutex<VecDeque<Package>>,
    changed: Condvar,
    capacity: usize,
}

impl HostLink {
    pub fn new(capacity: u32) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            changed: Condvar::new(),
            capacity: capacity as usize,
        }
    }

    /// Appends a package, waiting while the link is full.
    pub fn push(
        &self,
        package: Package,
        timeout: Duration,
        abort: &AtomicBool,
    ) -> Result<(), WaitFailed> {
        let mut queue = self.wait_until(timeout, abort, |q| q.len() < self.capacity)?;
        queue.push_back(package);
        self.changed.notify_all();
        Ok(())
    }

    /// Takes the oldest package, waiting until there is one.
    pub fn pop(&self, timeout: Duration, abort: &AtomicBool) -> Result<Package, WaitFailed> {
        let mut queue = self.wait_until(timeout, abort, |q| !q.is_empty())?;
        let package = queue.pop_front().expect("waited for a package");
        self.changed.notify_all();
        Ok(package)
    }

    /// Takes the oldest package if there is one.
    pub fn try_pop(&self) -> Option<Package> {
        let package = self.lock().pop_front();
        self.changed.notify_all();
        package
    }

    /// Wakes every waiter (after `abort` was set).
    pub fn wake(&self) {
        let _queue = self.lock();
        self.changed.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Package>> {
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait_until(
        &self,
        timeout: Duration,
        abort: &AtomicBool,
        ready: impl Fn(&VecDeque<Package>) -> bool,
    ) -> Result<std::sync::MutexGuard<'_, VecDeque<Package>>, WaitFailed> {
        let deadline = Instant::now() + timeout;
        let mut queue = self.lock();
        loop {
            if abort.load(Ordering::SeqCst) {
                return Err(WaitFailed::Aborted);
            }
            if ready(&queue) {
                return Ok(queue);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WaitFailed::TimedOut);
            }
            queue = self
                .changed
                .wait_timeout(queue, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_end_by_timeout_or_abort() {
        let link = HostLink::new(1);
        let abort = AtomicBool::new(false);
        let short = Duration::from_millis(20);
        assert_eq!(link.pop(short, &abort), Err(WaitFailed::TimedOut));
        link.push((0, vec![1.0]), short, &abort).unwrap();
        assert_eq!(
            link.push((1, vec![]), short, &abort),
            Err(WaitFailed::TimedOut)
        );
        assert_eq!(link.pop(short, &abort), Ok((0, vec![1.0])));
        abort.store(true, Ordering::SeqCst);
        assert_eq!(
            link.pop(Duration::from_secs(60), &abort),
            Err(WaitFailed::Aborted)
        );
    }
}

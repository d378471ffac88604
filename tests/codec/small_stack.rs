//! Shared by the tests that run on a deliberately small stack.

/// Runs `f` on a thread with a 64 KiB stack.
pub fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no overflow, no panic")
}

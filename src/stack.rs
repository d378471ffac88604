//! Stack safety for the few recursive walks over a [`Value`](crate::Value) (encoding,
//! views): every container level checks how much call stack is left and, when little is,
//! continues on a fresh heap-allocated segment. Depth then costs heap, not stack, on any
//! thread — including small-stack threads and debug builds.

/// Stack that must be left before a level runs on the current segment.
const RED_ZONE: usize = 128 * 1024;
/// Size of each new segment.
const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f`, on a new stack segment if the current one is nearly used up.
#[inline]
pub(crate) fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

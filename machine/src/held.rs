//! What a run holds of its caller's: lent for one call (`run`, which borrows the backend,
//! the observer and the frame source), or owned across calls (a live machine, which pauses
//! between them: see `live.rs`). One run loop serves both.

use std::ops::{Deref, DerefMut};

/// A value lent to a run or owned by it.
pub(crate) enum Held<'a, T: ?Sized> {
    /// Borrowed from the caller for the run.
    Lent(&'a mut T),
    /// The run's own.
    Owned(Box<T>),
}

impl<T: ?Sized> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Held::Lent(t) => t,
            Held::Owned(t) => t,
        }
    }
}

impl<T: ?Sized> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        match self {
            Held::Lent(t) => t,
            Held::Owned(t) => t,
        }
    }
}

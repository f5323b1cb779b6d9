//! A live machine's snapshots of its run: taken as it moves forward, at cycles that are
//! multiples of a spacing which doubles as the run grows (dropping every other snapshot),
//! so that a machine holds at most [`MAX_SNAPSHOTS`] of them (and at most
//! [`MAX_SNAPSHOT_BYTES`]) and going back to any cycle after the first runs at most one
//! spacing of cycles.

use crate::run::Snapshot;

/// The most snapshots a machine holds.
pub(crate) const MAX_SNAPSHOTS: usize = 64;

/// The most bytes its snapshots hold together (a long task window makes them large); past
/// it, they are thinned as past [`MAX_SNAPSHOTS`].
pub(crate) const MAX_SNAPSHOT_BYTES: usize = 64 << 20;

/// The snapshots (see the module docs).
pub(crate) struct Snapshots {
    /// In ascending cycle order, each cycle a multiple of `spacing`.
    kept: Vec<Snapshot>,
    spacing: u64,
    bytes: usize,
}

impl Snapshots {
    /// None yet, the first due at multiples of `spacing` (at least 1) cycles.
    pub(crate) fn new(spacing: u64) -> Snapshots {
        Snapshots {
            kept: Vec::new(),
            spacing: spacing.max(1),
            bytes: 0,
        }
    }

    /// The first cycle after `cycle` a snapshot is due at.
    pub(crate) fn next_after(&self, cycle: u64) -> u64 {
        (cycle / self.spacing)
            .saturating_add(1)
            .saturating_mul(self.spacing)
    }

    /// Whether a snapshot is due when `cycle` begins (and none is kept for it yet).
    pub(crate) fn due(&self, cycle: u64) -> bool {
        cycle.is_multiple_of(self.spacing) && self.kept.last().is_none_or(|s| s.cycle() < cycle)
    }

    /// Keep `snapshot`, the latest; thin them out past the limits.
    pub(crate) fn keep(&mut self, snapshot: Snapshot) {
        self.forget_after(snapshot.cycle().saturating_sub(1));
        self.bytes += snapshot.bytes();
        self.kept.push(snapshot);
        while (self.kept.len() > MAX_SNAPSHOTS || self.bytes > MAX_SNAPSHOT_BYTES)
            && self.kept.len() > 1
            && self.spacing < u64::MAX / 2
        {
            self.spacing *= 2;
            let spacing = self.spacing;
            self.kept.retain(|s| s.cycle().is_multiple_of(spacing));
            self.bytes = self.kept.iter().map(Snapshot::bytes).sum();
        }
    }

    /// The latest snapshot at or before `cycle`.
    pub(crate) fn at_or_before(&self, cycle: u64) -> Option<&Snapshot> {
        let i = self.kept.partition_point(|s| s.cycle() <= cycle);
        i.checked_sub(1).map(|i| &self.kept[i])
    }

    /// Forget the snapshots after `cycle` (the run went back before them).
    pub(crate) fn forget_after(&mut self, cycle: u64) {
        let i = self.kept.partition_point(|s| s.cycle() <= cycle);
        for s in self.kept.drain(i..) {
            self.bytes -= s.bytes();
        }
    }

    /// The cycles of those kept, in order.
    pub(crate) fn cycles(&self) -> Vec<u64> {
        self.kept.iter().map(Snapshot::cycle).collect()
    }
}

#[cfg(test)]
mod tests {
    // The thinning rule on cycles alone (a snapshot needs a run): the same arithmetic.
    #[test]
    fn thinning_keeps_multiples_of_the_doubled_spacing() {
        let mut kept: Vec<u64> = (0..=64).map(|k| k * 4096).collect();
        let mut spacing = 4096u64;
        while kept.len() > super::MAX_SNAPSHOTS {
            spacing *= 2;
            kept.retain(|c| c.is_multiple_of(spacing));
        }
        assert_eq!(spacing, 8192);
        assert_eq!(kept.len(), 33);
        assert_eq!(kept[1], 8192);
    }
}

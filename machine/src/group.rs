//! Which cores run together: the run loop's policy for the group the earliest core leads
//! ([`GroupShape::led_by`]), beside the shape a backend is offered (`GroupShape`, defined
//! with the `Backend` trait that takes it).

use crate::backend::{shares_banks, GroupShape};
use crate::cores::{lanes_of, CoreTable, Mode};

impl GroupShape {
    /// The group core `i` (the earliest event) leads: every core at the same IP of the same
    /// frame in the same cycle, runnable or parked there (a parked core is stopped before
    /// that instruction, so running it from there performs its access). Where `i` is
    /// parked, the other cores of its frame in that cycle (or, in a frame without atomic
    /// sequences, the next), at any IP, join as a cohort if they could take turns on memory
    /// with it: in a frame with atomic sequences, or where the banks the cores may touch
    /// overlap. Cores at different instructions of one cycle then take turns inside the
    /// backend instead of one access per trip through the loop (groups a cycle apart in
    /// one bank, as where a `bnz` parted them by one instruction, leapfrog each other at
    /// every access). The backend decides whether it takes the group.
    pub(crate) fn led_by<C>(cores: &CoreTable<C>, i: usize) -> GroupShape {
        let (frame, state) = (cores.part(i).frame, &cores.state[i]);
        let parked = matches!(cores.mode(i), Mode::Parked { .. });
        let sync = cores.part(i).sync;
        // Where cores leapfrog on plain accesses; with atomic sequences the cohort of one
        // cycle measured faster (a histogram's cores two cycles apart, 3%).
        let joins_next = !sync;
        let (mut at_ip, mut others) = (0u16, 0u16);
        let (mut at_ip_banks, mut other_banks) = (0u16, 0u16);
        // The banks some core may touch beyond the one numbered like it.
        let (mut at_ip_stray, mut other_stray) = (0u16, 0u16);
        // `i` has the earliest event, so the others of its cycle have higher ids; only a
        // cohort takes cores of the next cycle, whatever their ids.
        let mut candidates = cores.groupable() & cores.frame_cores(frame);
        if !parked {
            candidates &= u16::MAX << i;
        }
        for j in lanes_of(candidates) {
            let other = &cores.state[j];
            let same_cycle = other.cycle == state.cycle && j >= i;
            if same_cycle && other.ip == state.ip {
                at_ip |= 1 << j;
                at_ip_banks |= cores.banks[j];
                at_ip_stray |= cores.banks[j] & !(1 << j);
            } else if parked && (same_cycle || (joins_next && other.cycle == state.cycle + 1)) {
                others |= 1 << j;
                other_banks |= cores.banks[j];
                other_stray |= cores.banks[j] & !(1 << j);
            }
        }
        let mut group = at_ip;
        let (mut seen, mut stray) = (at_ip_banks, at_ip_stray);
        // Cores whose bytes are private never meet in memory: those at other instructions
        // run apart, each at its own pace (the run loop leaves them out of each other's
        // horizons), instead of taking turns as a cohort.
        if others != 0
            && !cores.part(i).private
            && (sync || at_ip_banks & other_banks != 0 || shares_banks(&cores.banks, others))
        {
            group |= others;
            seen |= other_banks;
            stray |= other_stray;
        }
        // How the group's banks overlap matters only where it touches memory.
        let (mut shares, mut own_banks) = (false, true);
        if seen != 0 {
            own_banks = stray == 0;
            // Cores that each touch only their own bank never share one.
            shares = !own_banks && shares_banks(&cores.banks, group);
        }
        GroupShape {
            cores: group,
            touches_memory: seen != 0,
            shares_banks: shares,
            own_banks,
            one_ip: group == at_ip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cores::Part;
    use crate::isa::{Instr, FRAME_INSTRS};

    /// A table with one task of frame 1 on `cores`, started in cycle 5, core k's banks
    /// `banks(k)`.
    fn table(cores: u16, banks: impl Fn(u8) -> u16) -> CoreTable<u32> {
        let mut t = CoreTable::new();
        let part = || Part {
            instrs: [Instr::Nop; FRAME_INSTRS],
            words: [0; FRAME_INSTRS],
            frame: 1,
            start: 5,
            sync: false,
            cyclic: false,
            private: false,
        };
        t.start(cores, 0, part, |id, _| banks(id));
        t
    }

    fn shape(
        cores: u16,
        touches_memory: bool,
        shares: bool,
        own: bool,
        one_ip: bool,
    ) -> GroupShape {
        GroupShape {
            cores,
            touches_memory,
            shares_banks: shares,
            own_banks: own,
            one_ip,
        }
    }

    #[test]
    fn a_groups_banks_say_whether_its_cores_share_one_or_keep_to_their_own() {
        // Each core in its own bank.
        let t = table(0x000F, |k| 1 << k);
        assert_eq!(
            GroupShape::led_by(&t, 0),
            shape(0x000F, true, false, true, true)
        );
        // All in bank 0: cores 1-3 stray from their own, and they share it.
        let t = table(0x000F, |_| 1);
        assert_eq!(
            GroupShape::led_by(&t, 0),
            shape(0x000F, true, true, false, true)
        );
        // Core 5 reaches bank 7 only: a stray bank, none shared.
        let t = table(0x0030, |k| if k == 4 { 1 << 4 } else { 1 << 7 });
        assert_eq!(
            GroupShape::led_by(&t, 4),
            shape(0x0030, true, false, false, true)
        );
        // No memory: nothing shared, nothing stray.
        let t = table(0x0300, |_| 0);
        assert_eq!(
            GroupShape::led_by(&t, 8),
            shape(0x0300, false, false, true, true)
        );
        // Led by core 1, the group leaves core 0 (an earlier id) out.
        let t = table(0x0003, |k| 1 << k);
        assert_eq!(
            GroupShape::led_by(&t, 1),
            shape(0x0002, true, false, true, true)
        );
    }

    #[test]
    fn a_parked_leader_takes_the_cores_at_other_ips_that_may_meet_it_in_memory() {
        // Cores 0 and 1 parked at IP 0 in their own banks; cores 2 and 3 at IP 1, both in
        // bank 2: they share a bank, so they join, and core 3 strays from its own.
        let mut t = table(0x000F, |k| if k < 2 { 1 << k } else { 1 << 2 });
        for k in [0, 1] {
            t.set_mode(k, Mode::Parked { bank_retry: false });
        }
        for k in [2, 3] {
            t.state[k].ip = 1;
        }
        assert_eq!(
            GroupShape::led_by(&t, 0),
            shape(0x000F, true, true, false, false)
        );
        // Cores 2 and 3 each in its own bank: they cannot meet cores 0 and 1, and stay out.
        let mut t = table(0x000F, |k| 1 << k);
        t.set_mode(0, Mode::Parked { bank_retry: false });
        for k in [2, 3] {
            t.state[k].ip = 1;
        }
        assert_eq!(
            GroupShape::led_by(&t, 0),
            shape(0x0003, true, false, true, true)
        );
    }
}

//! The behaviour suite: tests that pin every rule of `/work/shared/spec/decisions.md` (and the
//! decisions the machine crate made where it is silent), written once and instantiated for
//! each backend by `backend_suite!`. Every expected value is worked out by hand in the test
//! (or by a plain reference function in it), never copied from an emulator's output.
//!
//! Each test is a generic function `fn name<B: Backend>(mk: fn() -> B)` in one of the
//! modules below; `backend_suite!(name, constructor)` makes a `#[test]` of every one of them
//! for that backend, e.g. `interp::scheduler::example2_lookahead`. A test written but not
//! listed in `suite!` is dead code, which `cargo clippy -- -D warnings` rejects.
//!
//! Adding a backend is one line: `backend_suite!(jit, gpu16_jit::Jit::new);`.

mod atomics;
mod bank;
mod builder;
mod cohort;
mod faults;
mod frames;
mod interleave;
mod isa;
mod livelock;
mod scheduler;
mod watchdog;

/// Expand every listed test of every listed module into a `#[test]` for one constructor.
macro_rules! suite {
    ($ctor:expr; $($module:ident { $($test:ident),* $(,)? })*) => {
        $(
            mod $module {
                $(
                    #[test]
                    fn $test() {
                        crate::$module::$test($ctor);
                    }
                )*
            }
        )*
    };
}

/// The whole suite for one backend, in a module named after it.
macro_rules! backend_suite {
    ($backend:ident, $ctor:expr) => {
        mod $backend {
            suite! { $ctor;
                isa {
                    add_wraps,
                    sub_wraps,
                    div_unsigned_and_by_zero,
                    cmpge_unsigned,
                    and_or_xor,
                    mul_writes_low_and_high,
                    mul_into_r15_writes_r0,
                    mul_reads_sources_before_writing,
                    shifts_take_an_immediate,
                    shift_ignores_bit3_of_its_field,
                    set_const_both_modes,
                    bnz_not_taken_falls_through,
                    bnz_taken_jumps,
                    bnz_backward_loop,
                    cores_leaving_a_loop_keep_their_registers,
                    bnz_ignores_low_bits,
                    bnz_at_ip15_taken_loops_not_taken_ends,
                    ready_ends_the_part,
                    part_ends_after_ip15,
                    nop_ignores_operand_bits,
                    address_uses_low_nibble_of_r0_to_r3,
                    memory_image_shorter_than_sm_is_zero_filled,
                    registers_persist_across_tasks,
                    ip_is_zero_at_task_start,
                    r0_init_needs_both_vectors,
                    r0_init_without_instruction_frames,
                }
                atomics {
                    contention_lowest_id_wins_in_the_same_cycle,
                    waiter_above_the_closer_retries_in_the_closing_cycle,
                    waiter_below_the_closer_retries_next_cycle,
                    one_sequence_per_bank,
                    sixteen_sequences_in_sixteen_banks,
                    what_a_lock_blocks,
                    st_sync_writes_and_releases,
                }
                bank {
                    same_bank_other_rows_take_turns,
                    model_is_off_by_default,
                    reads_of_one_byte_multicast,
                    multicast_joins_the_first_served_byte,
                    different_banks_do_not_conflict,
                    writes_to_one_byte_take_turns,
                    a_read_and_a_write_of_one_byte_conflict,
                    ld_sync_multicasts_with_ld,
                    lock_stall_is_decided_before_bank_conflict,
                }
                interleave {
                    halves_a_cycle_apart_leapfrog_in_one_byte,
                    halves_two_instructions_apart_meet_in_core_order,
                }
                cohort {
                    lanes_at_three_ips_share_a_bank_in_one_cycle,
                    a_fault_among_lanes_at_three_ips,
                    a_cycle_limit_among_lanes_at_three_ips,
                    lanes_that_part_and_meet_run_on_as_one,
                    lanes_apart_see_another_tasks_stores_in_their_cycle,
                    lockstep_lanes_see_another_tasks_stores_in_their_cycle,
                    lockstep_gather_and_scatter_in_core_order,
                }
                faults {
                    st_sync_without_sequence,
                    st_sync_to_another_address,
                    ld_sync_while_holding,
                    ld_while_holding,
                    st_while_holding,
                    ready_while_holding,
                    frame_end_while_holding,
                    fault_state_is_the_machine_at_the_fault,
                    fault_state_leaves_out_what_other_cores_ran_ahead,
                    a_fault_reports_the_events_complete_before_its_cycle,
                    a_fault_reports_the_frames_the_scheduler_passed_before_it,
                    own_fault_wins_over_a_lock_stall,
                    same_cycle_faults_report_the_lowest_id,
                    an_earlier_cycle_wins_over_a_lower_id,
                    a_ready_fault_and_a_memory_fault_in_one_cycle,
                    a_later_group_can_fault_first,
                }
                frames {
                    control_frame_layout,
                    instruction_words_are_little_endian_in_slot_order,
                    memory_instruction_fields,
                    fence_bits_in_the_header,
                    reserved_bits_are_accepted,
                    frame_kinds_are_positional,
                    load_error_length,
                    load_error_group_past_end,
                    load_error_fence_3,
                    load_error_reserved_memory_mode,
                    reserved_mode_in_a_control_frame_is_not_an_error,
                }
                scheduler {
                    single_task_timing,
                    example1_in_order,
                    example1_lookahead,
                    example2_in_order,
                    example2_lookahead,
                    lookahead_acq_blocks_only_later_frames,
                    fence_no_lets_disjoint_tasks_overlap,
                    fence_acq_blocks_every_later_frame,
                    fence_acq_does_not_wait_for_earlier_tasks,
                    fence_rel_waits_for_every_earlier_task,
                    fence_rel_does_not_hold_back_later_tasks,
                    fence_rel_applies_to_each_if_of_the_group,
                    same_mask_serialises,
                    overlapping_masks_serialise_disjoint_do_not,
                    a_core_is_free_after_its_own_part,
                    empty_mask_task,
                    cf_r0_init_waits_for_its_cores,
                    cf_r0_init_waits_only_for_initialised_cores,
                    run_cycles_count_a_trailing_cf,
                    lookahead_passes_a_waiting_unfenced_if,
                    lookahead_does_not_pass_a_fenced_frame,
                    lookahead_never_passes_an_unprocessed_cf,
                    lookahead_needs_disjointness_from_waiting_ifs,
                    lookahead_waits_for_an_unfinished_task_sharing_its_cores,
                    lookahead_cf_init_must_be_disjoint_from_waiting_ifs,
                    lookahead_rel_waits_for_earlier_unprocessed_frames,
                    lookahead_earliest_eligible_frame_goes_first,
                    lookahead_window_is_64_frames,
                    lookahead_window_of_one_is_in_order,
                    last_task_of_a_tied_end_is_the_one_issued_last,
                }
                watchdog {
                    default_limit_is_2_pow_32,
                    register_loop_reports_the_exact_ip,
                    core_stalled_on_a_looping_holder,
                    waiters_blocked_again_sleep_from_their_retry,
                    unprocessed_frame_is_reported,
                    exact_limit_for_a_core,
                    exact_limit_for_the_scheduler,
                    frames_passed_before_the_limit_are_processed,
                    bank_stalled_cores_are_reported,
                }
                livelock {
                    register_spin_is_proven_at_its_second_checkpoint,
                    checkpoints_follow_brents_schedule,
                    replay_proves_a_holder_that_spins_before_its_st_sync,
                    cores_polling_frozen_memory_are_proven_together,
                    loops_that_end_are_never_livelocks,
                    a_livelock_reports_the_events_complete_before_its_cycle,
                }
            }
        }
    };
}

backend_suite!(interp, gpu16_interp::Interpreter::new);
backend_suite!(interp_lockstep, gpu16_jit::GroupInterpreter::default);
backend_suite!(jit, gpu16_jit::Jit::new);
backend_suite!(jit_percore, || gpu16_jit::Jit::with_options(
    gpu16_jit::JitOptions {
        engine: gpu16_jit::Engine::PerCore,
        ..Default::default()
    }
)
.unwrap());
backend_suite!(jit_lockstep, || gpu16_jit::Jit::with_options(
    gpu16_jit::JitOptions {
        engine: gpu16_jit::Engine::Lockstep,
        ..Default::default()
    }
)
.unwrap());
backend_suite!(auto, gpu16_jit::Auto::new);
// Auto with a threshold of one issue compiles every frame on its second use and switches
// mid-task after a small instruction budget, so the suite covers both of its paths.
backend_suite!(auto_eager, || gpu16_jit::Auto::with_hotness(
    gpu16_jit::Hotness {
        issues: 1,
        instructions: 16,
    }
));

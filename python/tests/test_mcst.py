"""The MCST dialect and the mcst-rtl timing profile from Python, with values worked out by
hand from mcst-dialect.md (its table 5.4), not from the emulator."""

import pytest

import gpu16

# m11_ld16: sixteen cores load one byte of bank 0. Under mcst-rtl the broadcast begins in
# cycle 1, the first slots are in cycle 8, bank 0 grants one load a cycle in round-robin
# order from core 1, so core 0 is granted in 23, finishes in 24 and readies in 25: the run
# ends in cycle 26. Under decisions.md's latencies: ld in 5, ready in 6, 7 cycles.
M11 = """
    .cf mask=0xffff
    .if
        ld [r1, r0], r2
        ready
    .halt
"""


def test_assemble_in_the_mcst_dialect():
    image = gpu16.assemble("""
        .cf mask=1
        .if
            ld [r6, r8], r0
            st [r6, r8], r0
            set_const 0x04, r1
            rshft r1, r2, r3
            ready
        .halt
    """, dialect="mcst")
    words = [int.from_bytes(image[32 + 2 * i:34 + 2 * i], "little") for i in range(5)]
    assert words == [0xB680, 0xD680, 0xC041, 0x6123, 0xF000]
    # The halt at frame 2: stop bit (14) and NextCF 2 (bits 13:8).
    assert int.from_bytes(image[64:66], "little") == 0x4200
    # Under the spec dialect a bank register past r3 is an error.
    with pytest.raises(gpu16.AssemblyError):
        gpu16.assemble(".cf mask=1\n.if\nld [r6, r8], r0\nready\n")


def test_mcst_rtl_cycles_of_the_doc():
    image = gpu16.assemble(M11, dialect="mcst")
    rtl = gpu16.run(image, dialect="mcst", timing="mcst-rtl", backend="interp")
    assert rtl["cycles"] == 26
    assert rtl["config"]["dialect"] == "mcst"
    assert rtl["config"]["timing"]["round_robin"] == 1
    plain = gpu16.run(M11, dialect="mcst", backend="interp")  # source is assembled in mcst
    assert plain["cycles"] == 7
    # The task: broadcast from cycle 1, first instruction in 8, last ready in 25.
    task = rtl["tasks"][0]
    assert (task["issue"], task["start"], task["end"]) == (1, 8, 25)


def test_the_profile_needs_the_dialect():
    with pytest.raises(ValueError, match='give dialect="mcst"$'):
        gpu16.run(M11.replace(".halt", ""), timing="mcst-rtl")
    with pytest.raises(ValueError, match="dialect"):
        gpu16.run(b"", dialect="verilog")


def test_what_the_dialect_refuses_is_named_by_the_apis_arguments():
    # The CLI names its flags (--issue, --bank-conflicts, --timing, --dialect); the Python
    # API names its own arguments, each as it would be written in the call.
    image = gpu16.assemble(M11, dialect="mcst")
    spec = gpu16.assemble(".cf mask=1\n.if\n    ready\n")
    cases = [
        (lambda m: m(image, dialect="mcst", issue="lookahead"),
         'issue="lookahead": the mcst dialect\'s task scheduler is in-order only'),
        (lambda m: m(image, dialect="mcst", bank_conflicts=True),
         'bank_conflicts=True is the spec dialect\'s bank model; the mcst dialect\'s is '
         'timing="round_robin=1" (part of timing="mcst-rtl")'),
        (lambda m: m(spec, timing="fill=2"),
         'timing keys fill (or the mcst-rtl profile) belong to the MCST dialect\'s slot '
         'model: give dialect="mcst"'),
    ]
    for call, message in cases:
        for make in (gpu16.run, gpu16.Machine):
            with pytest.raises(ValueError) as e:
                call(make)
            assert str(e.value) == message, make
            assert "--" not in str(e.value)


def test_assembler_errors_name_the_argument_that_picks_the_dialect():
    # The assembler's messages name the CLI's flag; Python's name the argument (issue 33).
    cases = [
        (".cf mask=1\n.if\nready\n.halt\n", "`.halt` (a stop control frame) belongs to the "
         "mcst dialect: assemble with `dialect=\"mcst\"`"),
        (".cf mask=1 next=2 stop\n.if\nready\n", "`next` is a field of the mcst dialect's "
         "control frames (NextCF and the stop bit): assemble with `dialect=\"mcst\"`"),
        (".cf mask=1\n.if\nrshft r1, r2, r3\n", "a register amount is the mcst dialect's "
         "(`dialect=\"mcst\"`)"),
    ]
    for source, message in cases:
        for call in (gpu16.assemble, gpu16.run):
            with pytest.raises(gpu16.AssemblyError) as e:
                call(source)
            assert message in str(e.value), (call, str(e.value))
            assert "--dialect" not in str(e.value)


def test_generate_in_the_mcst_dialect():
    source = gpu16.generate(7, dialect="mcst")
    assert ".halt" in source
    image = gpu16.assemble(source, dialect="mcst")
    assert len(image) <= 64 * 32
    assert gpu16.disassemble(image, dialect="mcst") == source
    result = gpu16.run(image, dialect="mcst", timing="mcst-rtl")
    assert "error" not in result
    with pytest.raises(ValueError, match="task memory holds 64 frames"):
        gpu16.generate(7, groups=13, dialect="mcst")


def test_a_run_without_end_keeps_no_task_list_with_tasks_summary():
    # A task on core 0 that counts in memory from byte 0 up (little-endian, carrying into
    # the next byte), an empty CF that waits for every core, and a frame sync that finds
    # them all idle in its first cycle, so it jumps back to frame 0: the machine is never in
    # the same state twice, so a task a lap until the watchdog. "summary" keeps counts, not
    # a dict per task.
    counting = """\
.cf mask=1
.if
    set_const 1, r2
    set_const 0, r3
count:
    ld [r3, r4], r1
    add r1, r2, r1
    st [r3, r4], r1
    bnz done, r1
    add r3, r2, r3
    bnz count, r2
done:
    ready
.cf mask=0xffff
.cf mask=1 stop next=0
"""

    def count(r):
        m = bytes.fromhex(r["memory"])
        return m[0] + 256 * m[1] + 65536 * m[2]

    r = gpu16.run(counting, dialect="mcst", backend="interp", max_cycles=100_000,
                  tasks="summary")
    assert r["error"]["rule"] == "watchdog"
    assert r["task_log"] == "summary"
    assert r["tasks"] is None
    # Every task issued has counted once, but the last may not have yet.
    assert count(r) in (r["task_summary"]["tasks"], r["task_summary"]["tasks"] - 1)
    assert r["task_summary"]["tasks"] > 100_000 // 20
    full = gpu16.run(counting, dialect="mcst", backend="interp", max_cycles=1_000)
    assert full["task_log"] == "all"
    assert len(full["tasks"]) == full["task_summary"]["tasks"]
    assert count(full) in (len(full["tasks"]), len(full["tasks"]) - 1)
    with pytest.raises(ValueError, match="unknown task log `some` \\(one of none, summary, all\\)"):
        gpu16.run(counting, dialect="mcst", tasks="some")
    m = gpu16.Machine(counting, dialect="mcst", backend="interp", max_cycles=1_000,
                      tasks="none")
    m.run()
    assert m.report()["task_log"] == "none"


def test_a_loop_whose_state_repeats_stops_as_a_livelock():
    # Issue 33 (F13, F22): the task is one `ready`, so the machine comes back to frame 0 in
    # the same state every lap. CF 0 in cycle 0, broadcast 1..=4, `ready` in 5, the CF that
    # waits for every core in 6, the frame sync's jump in 7; the same from cycle 8 with the
    # jump in 15, in the state of cycle 7: the run stops as cycle 16 begins, with 2 tasks,
    # where it used to issue 2^22 of them (2.16 GB of dicts) and stop at the task log's cap.
    endless = ".cf mask=1\n.if\n    ready\n.cf mask=0xffff\n.cf mask=1 stop next=0\n"
    for backend in ("interp", "jit", "auto"):
        r = gpu16.run(endless, dialect="mcst", backend=backend)
        e = r["error"]
        assert (e["rule"], e["frame"], e["walk"]) == ("livelock", 0, [0, 2, 3]), backend
        assert (e["cycle"], e["same_state_at"], r["cycles"]) == (16, 7, 16), backend
        assert len(r["tasks"]) == 2, backend


def test_a_program_without_a_halt_stops_as_a_livelock_after_one_lap():
    # CF 0 in cycle 0, its broadcast delivered in 4, the 62 zero frames as empty control
    # frames in cycles 5..66: back at frame 0, the run stops as cycle 67 begins.
    r = gpu16.run(".cf mask=1\n.if\n    ready\n", dialect="mcst", backend="interp")
    assert r["error"]["rule"] == "livelock"
    assert (r["error"]["frame"], r["error"]["cycle"], r["cycles"]) == (0, 67, 67)
    assert r["error"]["walk"] == [0] + list(range(2, 64))

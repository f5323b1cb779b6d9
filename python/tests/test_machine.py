"""Tests of gpu16.Machine, the model that steps: stepped to its end it gives run's dict
exactly (generated programs of every profile, both dialects, several step sizes); paused,
it shows the state hand-worked programs leave; the testbench's writes are what the
cores then load; and bad arguments raise errors that name them."""

import pytest

import cosim
import gpu16

PROFILES = ["alu", "memory", "atomics", "scheduler", "mixed"]

# Core 0 counts r9 down from 200 (a loop of two instructions), then loads bank 0, row 0
# (byte address 0) into r5 and stores it at bank 1, row 0 (byte address 0x100). One
# instruction a cycle from cycle 5: 4 set-up instructions (cycles 5-8), the loop's 400
# (9-408), then ld 409, add 410, st 411, ready 412.
LATE_LOAD = """\
.cf mask=1
.if
    set_const 200, r9
    set_const 1, r8
    xor r4, r4, r4
    xor r1, r1, r1
loop:
    sub r9, r8, r9
    bnz loop, r9
    ld [r4, r1], r5
    add r1, r8, r2
    st [r4, r2], r5
    ready
"""


# Cores 0-3 each count in r9 and store the count in row 0 of their own bank (set_const
# on r1 gives the core id: the bank), 12 rounds of 250: 12,040 instructions a core, one a
# cycle, so the run passes several of the machine's snapshots (4,096 cycles apart).
COUNTING = """\
.cf mask=0xf
.if
    set_const 0, r1
    set_const 1, r8
    set_const 12, r11
    xor r12, r12, r12
outer:
    set_const 250, r10
inner:
    add r9, r8, r9
    st [r12, r1], r9
    sub r10, r8, r10
    bnz inner, r10
    sub r11, r8, r11
    bnz outer, r11
    ready
"""


def counted(cycle):
    """Hand-worked: the byte each core of COUNTING has stored as ``cycle`` begins. Set-up
    takes cycles 5-8; round k's set_const is at 9 + 1003k, its j-th store at
    11 + 1003k + 4j (add, st, sub, bnz a turn), and its last two instructions follow."""
    stores = sum(1 for k in range(12) for j in range(250) if 11 + 1003 * k + 4 * j < cycle)
    return stores % 256


def fresh_at(program, cycle, writes=()):
    """A machine run from its start to ``cycle``, writing each (cycle, addr, data) of
    ``writes`` before its cycle: the reference for going back."""
    m = gpu16.Machine(program, backend="interp")
    for at, addr, data in writes:
        if at < cycle:
            m.run(at)
            m.write_memory(addr, data)
    m.run(cycle)
    return m


def seen(m):
    return (m.cycle, m.finished, m.registers, m.memory, m.cores, m.locks)


def stepped(machine, step):
    while not machine.finished:
        status = machine.step(step)
        assert status in ("paused", "ended", "failed")
    return machine.report()


@pytest.mark.parametrize("dialect", ["spec", "mcst"])
@pytest.mark.parametrize("profile", PROFILES)
def test_stepping_to_the_end_gives_run(dialect, profile):
    for seed in range(3):
        image, memory = gpu16.generate_image(seed, profile, groups=2, dialect=dialect)
        expected = gpu16.run(image, memory, dialect=dialect, max_cycles=50_000)
        for step, backend in [(1, "interp"), (13, "auto"), (1000, "jit")]:
            m = gpu16.Machine(image, memory, backend=backend, dialect=dialect, max_cycles=50_000)
            got = stepped(m, step)
            got["backend"] = expected["backend"]
            assert got == expected, (dialect, profile, seed, step, backend)
            assert m.cycle == expected["cycles"]


def test_a_paused_machine_is_the_state_as_its_cycle_begins():
    m = gpu16.Machine(LATE_LOAD, backend="interp")
    assert (m.cycle, m.finished) == (0, False)
    assert m.cores == [{"core": c, "state": "idle"} for c in range(16)]
    assert m.step(7) == "paused"
    assert m.cycle == 7
    assert m.registers[0][9] == 200 and m.registers[0][8] == 1
    assert m.cores[0] == {"core": 0, "frame": 1, "ip": 2, "state": "running"}
    report = m.report()
    assert report["cycles"] == 7 and "error" not in report
    assert m.run() == "ended"
    assert m.finished and m.cycle == 413


def test_events_since_the_last_call():
    m = gpu16.Machine(LATE_LOAD, backend="interp")
    m.step(100)
    first = m.events()
    # The scheduler reads the control frame in cycle 0, broadcasts the frame from cycle 1.
    assert {"kind": "control_frame", "frame": 0, "cycle": 0} in first
    assert not any(e["kind"] == "core_part" for e in first)
    m.run()
    rest = m.events()
    assert {"kind": "core_part", "core": 0, "frame": 1, "start": 5, "end": 412} in rest
    assert m.events() == [] and m.events_dropped == 0


def test_a_write_before_the_load_is_what_the_core_loads():
    for backend in ["interp", "jit", "auto"]:
        m = gpu16.Machine(LATE_LOAD, memory=b"\x07", backend=backend)
        m.step(50)
        m.write_memory(0, b"\xa5")
        assert m.memory[0] == 0xA5
        assert m.run() == "ended"
        assert m.registers[0][5] == 0xA5
        assert m.memory[0x100] == 0xA5
        with pytest.raises(ValueError, match="over"):
            m.write_memory(0, b"\x01")


def test_locks_show_the_open_sequence():
    source = """\
.cf mask=1
.if
    set_const 2, r9
    xor r2, r2, r2
    add r2, r9, r2
    xor r4, r4, r4
    ld_sync [r4, r2], r6
    st_sync [r4, r2], r6
    ready
"""
    m = gpu16.Machine(source, backend="interp")
    m.run(9)  # the ld_sync executes in cycle 9
    assert m.locks == []
    m.run(10)
    assert m.locks == [{"bank": 2, "core": 0, "addr": 0x200}]
    m.run()
    assert m.locks == []


def test_a_failed_run_reports_as_run_does():
    source = """\
.cf mask=1
.if
    xor r2, r2, r2
    xor r4, r4, r4
    ld_sync [r4, r2], r6
    ready
"""
    m = gpu16.Machine(source, backend="jit")
    assert m.run() == "failed"
    expected = gpu16.run(source, backend="jit")
    assert m.report() == expected and "error" in expected


def test_bad_arguments_name_themselves():
    m = gpu16.Machine(LATE_LOAD)
    with pytest.raises(TypeError, match="^cycles: "):
        m.step("1")
    with pytest.raises(ValueError, match="^cycles: must be >= 0, got -1$"):
        m.step(-1)
    with pytest.raises(TypeError, match="data"):
        m.write_memory(0, [1, 2])
    with pytest.raises(TypeError, match="addr"):
        m.write_memory("0", b"\x01")
    with pytest.raises(ValueError, match="4096"):
        m.write_memory(4095, b"\x01\x02")
    with pytest.raises(ValueError, match="4096"):
        m.write_memory(-1, b"\x01")
    with pytest.raises(TypeError, match="program"):
        gpu16.Machine([1, 2])
    with pytest.raises(ValueError, match="backend"):
        gpu16.Machine(LATE_LOAD, backend="fast")


def test_version_and_types():
    assert isinstance(gpu16.__version__, str) and gpu16.__version__.count(".") == 2
    import importlib.resources

    assert importlib.resources.files("gpu16").joinpath("py.typed").is_file()


def test_the_cosimulation_example_passes_against_itself_and_finds_a_bad_device():
    assert cosim.cosimulate(LATE_LOAD, cosim.ModelDevice(LATE_LOAD)) == []

    class Stuck(cosim.ModelDevice):
        """A device whose r5 of core 0 reads 0 whatever it holds."""

        def registers(self, core):
            regs = list(super().registers(core))
            if core == 0:
                regs[5] = 0
            return regs

    # Memory byte 0 is 0xa5: not text (0xa5 alone is not UTF-8), so a raw image.
    found = cosim.cosimulate(LATE_LOAD, Stuck(LATE_LOAD, b"\xa5"), memory=b"\xa5")
    # The part ends by `ready` in cycle 412: compared as cycle 413 begins.
    assert found == [cosim.Divergence(413, 0, "r5", 0xA5, 0)]


def test_a_sources_data_is_the_memory_when_none_is_given():
    source = ".data 0x10, 7, 8\n.cf mask=1\n.if\n    ready\n"
    assert bytes.fromhex(gpu16.run(source)["memory"])[0x10:0x12] == b"\x07\x08"
    assert gpu16.Machine(source).memory[0x10] == 7
    # Memory given wins, as --mem does.
    assert bytes.fromhex(gpu16.run(source, memory=b"")["memory"])[0x10] == 0


# The source's `.data` puts 0x5a at 0x010; core 0 (r0 = 0: bank 0) copies byte 0x010 to
# 0x020: at its task's end r8 = 0x10, r9 = 0x5a, r10 = 0x20, the rest 0 (zero at reset),
# and memory holds 0x5a at 0x010 and 0x020.
COPY_WITH_DATA = """\
.data 0x10, 0x5a
.cf mask=1
.if
    set_const 0x10, r8
    ld [r8, r0], r9
    set_const 0x20, r10
    st [r10, r0], r9
"""


class HandWorkedDevice:
    """A device in the state COPY_WITH_DATA leaves, worked out by hand."""

    def step(self):
        pass

    def registers(self, core):
        return [0] * 8 + [0x10, 0x5A, 0x20] + [0] * 5 if core == 0 else [0] * 16

    def memory(self):
        memory = bytearray(4096)
        memory[0x10] = memory[0x20] = 0x5A
        return bytes(memory)


def test_the_cosimulation_starts_from_the_sources_data(tmp_path, monkeypatch, capsys):
    assert cosim.cosimulate(COPY_WITH_DATA, HandWorkedDevice()) == []
    assert cosim.ModelDevice(COPY_WITH_DATA).memory()[0x10] == 0x5A
    # The command line without --mem: the model runs from the .data too.
    source = tmp_path / "copy.s"
    source.write_text(COPY_WITH_DATA)
    monkeypatch.setattr(cosim, "ModelDevice", lambda *args, **kwargs: HandWorkedDevice())
    assert cosim.main([str(source)]) == 0
    assert capsys.readouterr().out == "pass\n"


def test_the_cosimulation_command_line_reports_a_bad_mem_in_one_line(tmp_path):
    import subprocess
    import sys

    from conftest import ROOT

    script = ROOT / "python" / "examples" / "cosim.py"
    source = tmp_path / "copy.s"
    source.write_text(COPY_WITH_DATA)
    amb = tmp_path / "amb.dat"
    amb.write_text("hello world\n")
    bad = subprocess.run([sys.executable, str(script), str(source), "--mem", str(amb)],
                         capture_output=True, text=True)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.splitlines() == [
        f"cosim.py: error: {amb}: cannot tell how to read this memory image: it is text, but "
        "not $readmemh text (line 1, column 1: `hello` is not a hex byte (1 or 2 hex "
        "digits)); give --mem-format raw to take its bytes as they are, or fix the text"
    ]
    # Taken raw, memory holds the text (0x010 is past it: 0): the model against itself.
    ok = subprocess.run([sys.executable, str(script), str(source), "--mem", str(amb),
                         "--mem-format", "raw"], capture_output=True, text=True)
    assert (ok.returncode, ok.stdout) == (0, "pass\n"), ok.stderr


@pytest.mark.parametrize("backend", ["interp", "auto", "jit"])
def test_going_back_is_the_machine_run_there_from_the_start(backend):
    m = gpu16.Machine(COUNTING, backend=backend)
    assert m.run(11_000) == "paused"
    assert [m.memory[c * 256] for c in range(4)] == [counted(11_000)] * 4
    for cycle in [10_999, 9_000, 8_193, 8_192, 4_096, 4_095, 100, 1, 0]:
        assert m.go_back(cycle) == "paused"
        assert [m.memory[c * 256] for c in range(5)] == [counted(cycle)] * 4 + [0], cycle
        assert seen(m) == seen(fresh_at(COUNTING, cycle)), cycle
    assert m.run(6_000) == "paused"
    assert seen(m) == seen(fresh_at(COUNTING, 6_000))
    assert m.run() == "ended"
    assert m.memory[0x300] == 3000 % 256
    expected = gpu16.run(COUNTING)
    got = m.report()
    got["backend"] = expected["backend"]
    assert got == expected
    # From the end, back to the cycle before it and on again; going back to the end itself
    # is the end.
    end = m.cycle
    assert m.go_back(end) == "ended"
    assert seen(m) == seen(fresh_at(COUNTING, end))
    assert m.go_back(end - 1) == "paused"
    assert seen(m) == seen(fresh_at(COUNTING, end - 1))
    assert m.step(1) == "ended"
    got = m.report()
    got["backend"] = expected["backend"]
    assert got == expected


def test_going_back_undoes_the_writes_at_and_after_its_cycle():
    m = gpu16.Machine(LATE_LOAD, backend="auto")
    writes = [(100, 0, b"\x2a"), (300, 0, b"\x07")]
    for at, addr, data in writes:
        m.run(at)
        m.write_memory(addr, data)
    assert m.run() == "ended"
    # The load at cycle 409 sees the last write.
    assert m.memory[0x100] == 7
    assert m.go_back(300) == "paused"
    assert seen(m) == seen(fresh_at(LATE_LOAD, 300, writes))
    assert m.memory[0] == 0x2A
    assert m.run() == "ended"
    assert m.memory[0x100] == 0x2A
    assert m.go_back(50) == "paused"
    assert m.memory[0] == 0
    assert m.run() == "ended"
    assert m.memory[0x100] == 0


def test_events_after_going_back_are_those_of_a_run_from_there():
    image, memory = gpu16.generate_image(3, "scheduler", groups=4)
    for program, memory in [(COUNTING, None), (image, memory)]:
        m = gpu16.Machine(program, memory, backend="auto")
        m.run()
        end = m.cycle
        m.events()
        before = 0
        for cycle in sorted({end - 1, end // 2, end // 3, 1}, reverse=True):
            assert m.go_back(cycle) == "paused"
            assert m.events() == [], cycle
            m.run()
            # The same backend: engines report a cycle's events in orders of their own.
            reference = gpu16.Machine(program, memory, backend="auto")
            reference.run(cycle)
            before += len(reference.events())
            reference.run()
            assert m.events() == reference.events(), cycle
        # Going back replays cycles that report events: dropping them is what is tested.
        assert before > 0


def test_going_back_names_what_it_cannot_do():
    m = gpu16.Machine(COUNTING, backend="interp")
    m.run(50)
    with pytest.raises(ValueError, match=r"^cycle: must be before 50, the cycle the machine is paused at, got 50$"):
        m.go_back(50)
    with pytest.raises(ValueError, match=r"^cycle: must be before 50, .* got 51$"):
        m.go_back(51)
    with pytest.raises(ValueError, match=r"^cycle: must be before 50, .* got 1180591620717411303424$"):
        m.go_back(2**70)
    with pytest.raises(ValueError, match=r"^cycle: must be >= 0, got -1$"):
        m.go_back(-1)
    with pytest.raises(TypeError, match=r"^cycle: "):
        m.go_back("10")
    assert m.cycle == 50
    m.run()
    with pytest.raises(ValueError, match=r"^cycle: must be at most \d+, the cycle the run ended at, got \d+$"):
        m.go_back(m.cycle + 1)
    image, memory = gpu16.generate_image(1, "memory", groups=2, dialect="mcst")
    mcst = gpu16.Machine(image, memory, dialect="mcst")
    mcst.step(5)
    with pytest.raises(ValueError, match=r"^go_back: the mcst dialect keeps no snapshots"):
        mcst.go_back(1)

"""Tests of the scoreboard example (python/examples/scoreboard.py): against the model
itself it passes; against a dump with one byte altered it reports that byte's address,
bank, row, expected and actual value."""

import subprocess
import sys

import pytest

import gpu16
import scoreboard
from conftest import EXAMPLES, ROOT

# Sixteen cores, one per bank: core k sets r1 = k (`set_const` into r0-r7 writes the core
# id) and stores k + 1 at row 0xa7 of bank r1 = k, so memory[k << 8 | 0xa7] = k + 1 for
# k = 0..15 and every other byte stays 0.
STORE_PER_BANK = """\
    .cf mask=0xffff
    .if
        set_const 0, r1
        set_const 0xa7, r10
        set_const 1, r9
        add r1, r9, r3
        st [r10, r1], r3
"""


def model(program, memory):
    """A stand-in device: the interpreter, while the scoreboard's model runs auto."""
    return bytes.fromhex(gpu16.run(program, memory, backend="interp")["memory"])


def test_the_program_stores_where_the_hand_worked_addresses_say():
    memory = bytes.fromhex(gpu16.run(STORE_PER_BANK)["memory"])
    assert [memory[k << 8 | 0xA7] for k in range(16)] == list(range(1, 17))
    assert sum(memory) == sum(range(1, 17))


def test_the_model_against_itself_passes():
    lines = []
    board = scoreboard.Scoreboard(model, log=lines.append)
    assert board.check(STORE_PER_BANK) == []
    assert board.check((EXAMPLES / "counter.s").read_text(), label="counter.s") == []
    assert board.passed
    assert lines == ["program 1: pass", "counter.s: pass"]
    assert board.summary() == "2 program(s) checked, 0 failed"


def test_an_altered_dump_is_reported_by_address_bank_row_expected_actual(tmp_path):
    dump = bytearray.fromhex(gpu16.run(STORE_PER_BANK)["memory"])
    dump[0x3A7] = 0x55  # bank 3, row 0xa7: the model stores 3 + 1 = 4 there
    dump[0xFFF] = 0x01  # bank 15, row 0xff: the model leaves 0
    path = tmp_path / "device.bin"
    path.write_bytes(dump)
    lines = []
    board = scoreboard.Scoreboard(path, log=lines.append)
    found = board.check(STORE_PER_BANK, label="store_per_bank")
    assert found == [
        scoreboard.Mismatch(address=0x3A7, bank=3, row=0xA7, expected=4, actual=0x55),
        scoreboard.Mismatch(address=0xFFF, bank=15, row=0xFF, expected=0, actual=1),
    ]
    assert not board.passed
    assert lines == [
        "store_per_bank: FAIL, 2 byte(s) differ",
        "  address 0x3a7 (bank 3, row 0xa7): expected 0x04, actual 0x55",
        "  address 0xfff (bank 15, row 0xff): expected 0x00, actual 0x01",
    ]


def test_a_dump_of_the_wrong_size_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="100 bytes, not the 4096 of shared memory"):
        scoreboard.Scoreboard(bytes(100)).check(STORE_PER_BANK)
    path = tmp_path / "long.bin"
    path.write_bytes(bytes(4097))
    with pytest.raises(gpu16.LoadError, match="may have at most 4096 bytes"):
        scoreboard.Scoreboard(path).check(STORE_PER_BANK)


def test_a_text_dump_and_a_text_memory_are_read_as_readmemh(tmp_path):
    # The model stores k + 1 at row 0xa7 of bank k; a $writememh-style dump says so in text.
    dump = tmp_path / "device.mem"
    dump.write_text("".join(f"@{k << 8 | 0xA7:x} {k + 1:02x}\n" for k in range(16)))
    board = scoreboard.Scoreboard(dump)
    assert board.check(STORE_PER_BANK) == []
    # The same text under a name that says nothing is read by its content.
    other = tmp_path / "device.dump"
    other.write_text(dump.read_text())
    assert scoreboard.Scoreboard(other).check(STORE_PER_BANK) == []
    # On the command line, --mem given as text: the program copies byte 0x010 to 0x020.
    source = tmp_path / "copy.s"
    source.write_text(".cf mask=1\n.if\n set_const 0x10, r8\n ld [r8, r0], r9\n"
                      " set_const 0x20, r10\n st [r10, r0], r9\n")
    mem = tmp_path / "init.mem"
    mem.write_text("@10 5a\n")
    want = bytearray(4096)
    want[0x10] = want[0x20] = 0x5A
    expected = tmp_path / "expected.bin"
    expected.write_bytes(want)
    script = ROOT / "python" / "examples" / "scoreboard.py"
    ok = subprocess.run([sys.executable, str(script), str(source), str(expected),
                         "--mem", str(mem)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_the_command_line_compares_a_cli_dump(gpu16_bin, tmp_path):
    source = tmp_path / "store.s"
    source.write_text(STORE_PER_BANK)
    dump = tmp_path / "dump.bin"
    subprocess.run([gpu16_bin, "run", str(source), "--dump-mem", str(dump), "--quiet"],
                   check=True, capture_output=True)
    script = ROOT / "python" / "examples" / "scoreboard.py"
    ok = subprocess.run([sys.executable, str(script), str(source), str(dump)],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.splitlines()[-1] == "1 program(s) checked, 0 failed"
    altered = bytearray(dump.read_bytes())
    altered[0x010] ^= 0xFF
    dump.write_bytes(altered)
    bad = subprocess.run([sys.executable, str(script), str(source), str(dump)],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert "  address 0x010 (bank 0, row 0x10): expected 0x00, actual 0xff" in bad.stdout


SCRIPT = ROOT / "python" / "examples" / "scoreboard.py"

# The source's `.data` puts 0x5a at 0x010; core 0 (r0 = 0: bank 0) copies byte 0x010 to
# 0x020. From the `.data`, memory ends with 0x5a at 0x010 and 0x020, zero elsewhere.
COPY_WITH_DATA = """\
.data 0x10, 0x5a
.cf mask=1
.if
    set_const 0x10, r8
    ld [r8, r0], r9
    set_const 0x20, r10
    st [r10, r0], r9
"""

# Core 0 copies byte 0x004 to 0x020; no `.data`.
COPY_4_TO_0X20 = """\
.cf mask=1
.if
    set_const 0x04, r8
    ld [r8, r0], r9
    set_const 0x20, r10
    st [r10, r0], r9
"""


def scoreboard_cli(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True)


def test_without_mem_the_model_starts_from_the_sources_data(tmp_path):
    want = bytearray(4096)
    want[0x10] = want[0x20] = 0x5A
    source = tmp_path / "copy.s"
    source.write_text(COPY_WITH_DATA)
    expected = tmp_path / "expected.bin"
    expected.write_bytes(want)
    ok = scoreboard_cli(source, expected)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines() == [f"{source}: pass", "1 program(s) checked, 0 failed"]
    # The class too: check() with no memory is the source's .data, as gpu16.run's None.
    lines = []
    assert scoreboard.Scoreboard(bytes(want), log=lines.append).check(COPY_WITH_DATA) == []
    assert lines == ["program 1: pass"]


def test_a_mem_file_is_given_to_the_model_as_the_bytes_it_reads_to(tmp_path):
    # Every byte 0x41 ('A'): read from the text, the 4096 bytes are all printable, which as
    # bytes with no format would be taken for a text (and refused: "AAAA..." is not
    # $readmemh). The copy of 0x010 to 0x020 leaves every byte 0x41.
    mem = tmp_path / "full.mem"
    mem.write_text("41 " * 4096 + "\n")
    source = tmp_path / "copy.s"
    source.write_text(COPY_WITH_DATA.replace(".data 0x10, 0x5a\n", ""))
    expected = tmp_path / "expected.bin"
    expected.write_bytes(b"\x41" * 4096)
    ok = scoreboard_cli(source, expected, "--mem", mem)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    cosim_script = ROOT / "python" / "examples" / "cosim.py"
    ok = subprocess.run([sys.executable, str(cosim_script), str(source), "--mem", str(mem)],
                        capture_output=True, text=True)
    assert (ok.returncode, ok.stdout) == (0, "pass\n"), ok.stderr


def test_an_ambiguous_mem_is_one_line_naming_the_scripts_own_option(tmp_path):
    amb = tmp_path / "amb.dat"
    amb.write_text("hello world\n")
    source = tmp_path / "copy.s"
    source.write_text(COPY_4_TO_0X20)
    # Taken raw, the 12 bytes fill 0x000..0x00b, and the 'o' (0x6f) of "hello" at 0x004
    # is copied to 0x020.
    want = bytearray(4096)
    want[:12] = b"hello world\n"
    want[0x20] = ord("o")
    expected = tmp_path / "expected.bin"
    expected.write_bytes(want)
    bad = scoreboard_cli(source, expected, "--mem", amb)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr.splitlines() == [
        f"scoreboard.py: error: {amb}: cannot tell how to read this memory image: it is "
        "text, but not $readmemh text (line 1, column 1: `hello` is not a hex byte (1 or 2 "
        "hex digits)); give --mem-format raw to take its bytes as they are, or fix the text"
    ]
    ok = scoreboard_cli(source, expected, "--mem", amb, "--mem-format", "raw")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    hex_ = scoreboard_cli(source, expected, "--mem", amb, "--mem-format", "hex")
    assert hex_.returncode == 2
    assert hex_.stderr.splitlines() == [
        f"scoreboard.py: error: {amb}: line 1, column 1: `hello` is not a hex byte (1 or 2 "
        "hex digits)"
    ]
    # The dump is read by the same rule, with its own option.
    dump = tmp_path / "dump.dat"
    dump.write_text("hello world\n")
    bad = scoreboard_cli(source, dump)
    assert bad.returncode == 2
    assert len(bad.stderr.splitlines()) == 1
    assert bad.stderr.startswith(f"scoreboard.py: error: {dump}: cannot tell how")
    assert "give --dump-format raw" in bad.stderr
    # Taken raw, the dump differs from the model (which starts from zeros) at 0x000..0x00b.
    raw = scoreboard_cli(source, dump, "--dump-format", "raw")
    assert raw.returncode == 1
    assert f"{source}: FAIL, 12 byte(s) differ" in raw.stdout.splitlines()
    # Any other error of gpu16's: one line, status 2, no traceback.
    for args, line in [
        (["--backend", "gpu"], "scoreboard.py: error: unknown backend `gpu` (one of interp, "
                               "jit, auto)"),
        (["--mem", tmp_path / "none.bin"], None),
    ]:
        r = scoreboard_cli(source, expected, *args)
        assert r.returncode == 2, r.stderr
        assert len(r.stderr.splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith("scoreboard.py: error: ")
        if line is not None:
            assert r.stderr.splitlines() == [line]
